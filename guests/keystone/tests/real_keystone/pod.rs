//! One run of a rotation CronJob's pod as the kubelet would lay it out, under a scratch
//! root: each volume of the CronJob's pod template (Secrets and ConfigMaps read from the
//! fake cluster, emptyDirs) appears at its mount path below the root, and every absolute
//! path the containers mount is re-rooted there — in the containers' commands and in the
//! ConfigMaps' files (keystone.conf names the key repositories, the script its key
//! directory). The files get the kubelet's ownership under the pod's fsGroup, and the
//! containers run as their security context's user, when the tests run as root (from root,
//! keystone-manage wants `--keystone-user` and `--keystone-group`; the pods run as 42424).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use crate::server::{command_as, running_as_root};

/// What the rotation script's staging PATCH writes: the completion annotation.
const COMPLETED_AT: &str = "cobaltcore.c5c3.io/rotation-completed-at";

/// A rotation CronJob's pod, laid out under its root.
pub struct RotationPod<'c> {
    cluster: &'c FakeCluster,
    root: PathBuf,
    namespace: String,
    spec: Value,
    /// The pod's `securityContext.fsGroup`.
    fs_group: Option<u32>,
    /// Every container's mount paths, longest first.
    mounts: Vec<String>,
}

impl<'c> RotationPod<'c> {
    /// Lays out the pod of CronJob `cron_job` (read from `cluster`) under `root`.
    pub fn new(cluster: &'c FakeCluster, cron_job: &str, root: PathBuf) -> Self {
        let cron = cluster
            .server("CronJob", cron_job)
            .unwrap_or_else(|| panic!("no CronJob {cron_job}"));
        let namespace = cron["metadata"]["namespace"]
            .as_str()
            .expect("the CronJob's namespace")
            .to_owned();
        let spec = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"].clone();
        let mut mounts: Vec<String> = containers(&spec)
            .flat_map(|c| c["volumeMounts"].as_array().cloned().unwrap_or_default())
            .filter_map(|m| m["mountPath"].as_str().map(str::to_owned))
            .collect();
        mounts.sort_by_key(|m| std::cmp::Reverse(m.len()));
        mounts.dedup();
        let fs_group = spec["securityContext"]["fsGroup"]
            .as_u64()
            .map(|g| u32::try_from(g).expect("a gid"));
        let pod = Self {
            cluster,
            root,
            namespace,
            spec,
            fs_group,
            mounts,
        };
        pod.lay_out_volumes();
        pod
    }

    /// `text` with every mount path of the pod's containers moved under the root (at a
    /// path boundary, once): the pod's paths as the test's filesystem has them.
    pub fn reroot(&self, text: &str) -> String {
        let root = self.root.to_str().expect("a UTF-8 root");
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        'text: while let Some(c) = rest.chars().next() {
            let boundary = out
                .chars()
                .last()
                .is_none_or(|p| !(p.is_alphanumeric() || "/._-".contains(p)));
            if boundary {
                for mount in &self.mounts {
                    if let Some(after) = rest.strip_prefix(mount.as_str()) {
                        out.push_str(root);
                        out.push_str(mount);
                        rest = after;
                        continue 'text;
                    }
                }
            }
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
        out
    }

    fn volume(&self, name: &str) -> &Value {
        self.spec["volumes"]
            .as_array()
            .and_then(|vs| vs.iter().find(|v| v["name"] == name))
            .unwrap_or_else(|| panic!("the pod mounts volume {name} it does not have"))
    }

    fn lay_out_volumes(&self) {
        let mut laid_out: BTreeMap<String, String> = BTreeMap::new();
        for container in containers(&self.spec) {
            for mount in container["volumeMounts"].as_array().into_iter().flatten() {
                let name = mount["name"].as_str().expect("a mount's volume");
                let path = mount["mountPath"].as_str().expect("a mount path");
                if let Some(first) = laid_out.get(name) {
                    assert_eq!(first, path, "volume {name} is mounted at two paths");
                    continue;
                }
                laid_out.insert(name.to_owned(), path.to_owned());
                self.lay_out(self.volume(name), &PathBuf::from(self.reroot(path)));
            }
        }
    }

    /// Writes `volume`'s files into `dir`, as the kubelet shows them to the containers.
    fn lay_out(&self, volume: &Value, dir: &Path) {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("mkdir {}: {e}", dir.display()));
        // An emptyDir is world-writable, set-group-id under an fsGroup; the others are
        // the kubelet's read-only directories.
        let dir_mode = if volume.get("emptyDir").is_some() {
            0o2777
        } else {
            0o755
        };
        self.own(dir, dir_mode);
        let mode = |source: &Value| {
            source["defaultMode"]
                .as_u64()
                .map_or(0o644, |m| u32::try_from(m).expect("a file mode"))
        };
        let (files, mode): (BTreeMap<String, Vec<u8>>, u32) =
            if let Some(secret) = volume.get("secret") {
                let name = secret["secretName"].as_str().expect("a Secret name");
                let data = self.cluster.secret_data(name);
                assert!(
                    !data.is_empty(),
                    "the pod mounts Secret {name}, which holds nothing"
                );
                (data, mode(secret))
            } else if let Some(config_map) = volume.get("configMap") {
                let name = config_map["name"].as_str().expect("a ConfigMap name");
                let object = self
                    .cluster
                    .server("ConfigMap", name)
                    .unwrap_or_else(|| panic!("the pod mounts ConfigMap {name}, which is missing"));
                let data: BTreeMap<String, String> =
                    serde_json::from_value(object["data"].clone()).expect("a ConfigMap's data");
                let files = data
                    .into_iter()
                    .map(|(k, v)| (k, self.reroot(&v).into_bytes()))
                    .collect();
                (files, mode(config_map))
            } else if volume.get("emptyDir").is_some() {
                (BTreeMap::new(), 0)
            } else {
                panic!("the test cannot lay out volume {volume}");
            };
        for (name, content) in files {
            let path = dir.join(name);
            std::fs::write(&path, content)
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            self.own(&path, mode);
        }
    }

    /// Gives `path` what the kubelet gives a volume's files: `mode`, root's, in the pod's
    /// fsGroup with group read added (as the test's user's when the tests are not root).
    fn own(&self, path: &Path, mode: u32) {
        let mode = if self.fs_group.is_some() {
            mode | 0o040
        } else {
            mode
        };
        if running_as_root() {
            std::os::unix::fs::chown(path, Some(0), Some(self.fs_group.unwrap_or(0)))
                .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
        }
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("chmod {}: {e}", path.display()));
    }

    fn container(&self, name: &str) -> &Value {
        containers(&self.spec)
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("the pod has no container {name}"))
    }

    /// The environment of `container` as the kubelet sets it (values, the namespace and
    /// Secret keys from the fake cluster), over `base`.
    fn env(&self, container: &Value, base: &[(&str, String)]) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> = base
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        for var in container["env"].as_array().into_iter().flatten() {
            let name = var["name"].as_str().expect("an env var's name").to_owned();
            let value = if let Some(value) = var["value"].as_str() {
                value.to_owned()
            } else if var["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace" {
                self.namespace.clone()
            } else if let Some(secret) = var["valueFrom"].get("secretKeyRef") {
                let (secret, key) = (secret["name"].as_str(), secret["key"].as_str());
                let (secret, key) = (secret.expect("a Secret name"), key.expect("a Secret key"));
                let value = self.cluster.secret_data(secret).remove(key);
                let value =
                    value.unwrap_or_else(|| panic!("env {name}: Secret {secret} has no {key}"));
                String::from_utf8(value).expect("a UTF-8 env value")
            } else {
                panic!("the test cannot set env var {var}");
            };
            env.push((name, value));
        }
        env
    }

    /// A process of `container` running `program`, as its user, with its environment.
    fn process(&self, container: &Value, program: &str, base_env: &[(&str, String)]) -> Command {
        let context = &container["securityContext"];
        let id = |field: &str| {
            context[field]
                .as_u64()
                .and_then(|v| u32::try_from(v).ok())
                .unwrap_or_else(|| panic!("container {}: no {field}", container["name"]))
        };
        let mut command = command_as(id("runAsUser"), id("runAsGroup"), program);
        command.env_clear().envs(self.env(container, base_env));
        command
    }

    /// Runs every init container's command, re-rooted, to its end.
    pub fn run_init_containers(&self, base_env: &[(&str, String)]) {
        for container in self.spec["initContainers"].as_array().into_iter().flatten() {
            let command: Vec<String> = container["command"]
                .as_array()
                .expect("an init container's command")
                .iter()
                .map(|arg| self.reroot(arg.as_str().expect("a command word")))
                .collect();
            let (program, args) = command.split_first().expect("a command");
            let out = self
                .process(container, program, base_env)
                .args(args)
                .output()
                .unwrap_or_else(|e| panic!("{program} did not run: {e}"));
            assert!(
                out.status.success(),
                "init container {}: {}",
                container["name"],
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// The script `container` runs (its only command word), as mounted.
    fn script(&self, container: &Value) -> String {
        let command = container["command"].as_array().expect("a command");
        assert_eq!(command.len(), 1, "the container runs a script: {command:?}");
        let path = self.reroot(command[0].as_str().expect("a script path"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path}: {e}"))
    }

    /// Runs `container`'s script up to its staging PATCH (`exec python3`, which talks to
    /// the API server): the keystone-manage lines.
    pub fn run_script_until_the_patch(&self, container: &str, base_env: &[(&str, String)]) {
        let container = self.container(container);
        let script = self.script(container);
        let (shell, _patch) = script
            .split_once("\nexec python3 ")
            .expect("the script ends in its python PATCH");
        let out = self
            .process(container, "/bin/sh", base_env)
            .arg("-c")
            .arg(shell)
            .output()
            .unwrap_or_else(|e| panic!("/bin/sh did not run: {e}"));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            out.status.success(),
            "container {}: the script's keystone-manage lines failed ({}):\n{stderr}",
            container["name"],
            out.status
        );
    }

    /// Writes what `container`'s script's PATCH would: `data` = every file of its key
    /// directory, the completion annotation = now (UTC, RFC 3339 seconds with `Z`), on the
    /// Secret `$SECRET_NAME` as a strategic merge. The files staged.
    pub fn stage(&self, container: &str) -> BTreeMap<String, Vec<u8>> {
        let container = self.container(container);
        let script = self.script(container);
        let key_dir = script
            .lines()
            .find_map(|l| l.strip_prefix("key_dir = \"")?.strip_suffix('"'))
            .expect("the script names its key directory");
        let mut files = BTreeMap::new();
        for entry in std::fs::read_dir(key_dir).unwrap_or_else(|e| panic!("listing {key_dir}: {e}"))
        {
            let entry = entry.expect("a directory entry");
            let name = entry.file_name().into_string().expect("a UTF-8 file name");
            let content = std::fs::read(entry.path()).expect("a key file");
            files.insert(name, content);
        }
        let secret = self
            .env(container, &[])
            .into_iter()
            .find_map(|(k, v)| (k == "SECRET_NAME").then_some(v))
            .expect("the container names its staging Secret");
        let now = Command::new("date")
            .args(["-u", "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .expect("date runs");
        let now = String::from_utf8_lossy(&now.stdout).trim().to_owned();
        self.cluster.change("Secret", &secret, |object| {
            let data = object
                .as_object_mut()
                .expect("a Secret")
                .entry("data")
                .or_insert_with(|| json!({}));
            if data.is_null() {
                *data = json!({});
            }
            for (name, content) in &files {
                data[name] =
                    serde_json::to_value(k8s_openapi::ByteString(content.clone())).expect("base64");
            }
            let metadata = &mut object["metadata"];
            if metadata["annotations"].is_null() {
                metadata["annotations"] = json!({});
            }
            metadata["annotations"][COMPLETED_AT] = json!(now);
        });
        files
    }
}

fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers"]
        .into_iter()
        .flat_map(|field| spec[field].as_array().into_iter().flatten())
}
