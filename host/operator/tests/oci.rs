//! Plugins from OCI registries, against a real registry on loopback (Debian's
//! `docker-registry`, distribution 2.8) with `skopeo` as an independent client; `.ci/run`
//! installs both.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use wasm_operator::oci::{OciError, OciRef, Puller, Registry, RegistryArgs};

mod common;
use common::registry::{Guard, LocalRegistry, push_cli};

fn plugin(name: &str) -> PathBuf {
    wasm_operator::cli::test_plugin_dir().join(name)
}

fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    format!("sha256:{}", hex::encode(sha2::Sha256::digest(bytes)))
}

/// The error of a round that pulled one plugin and failed (its text and its causes); a
/// panic saying `otherwise` when it did not.
fn the_error(
    outcomes: &[(String, Result<wasm_operator::oci::Pulled, OciError>)],
    otherwise: &str,
) -> String {
    match outcomes {
        [(_, Err(error))] => format!("{error} ({error:?})"),
        other => panic!("{otherwise}: {other:?}"),
    }
}

fn plain(registry: &LocalRegistry) -> RegistryArgs {
    RegistryArgs {
        plain_http: vec![registry.addr.clone()],
        ..RegistryArgs::default()
    }
}

/// `wasm-operator plugin push FILE REF ARGS...`.
fn skopeo(args: &[&str]) -> Output {
    Command::new("skopeo")
        .args(args)
        .output()
        .expect("skopeo runs (.ci/run installs it)")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A plugin directory whose plugins.toml names `source` for `fixture`.
fn directory_with_source(source: &OciRef) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("plugins.toml"),
        format!("[plugins.fixture]\nsource = \"{source}\"\n"),
    )
    .expect("plugins.toml");
    dir
}

#[test]
fn plugin_push_publishes_a_wasm_artifact_that_skopeo_reads_back_byte_for_byte() {
    let registry = LocalRegistry::start(Guard::default());
    let file = plugin("fixture-reconciler.wasm");
    let wasm = std::fs::read(&file).expect("fixture");
    let reference = registry.reference("plugins/fixture:v1");
    let out = push_cli(
        &file,
        &reference,
        &["--plain-http-registry", &registry.addr],
    );
    assert!(out.status.success(), "push: {}", text(&out.stderr));
    let pinned = text(&out.stdout).trim().to_owned();

    let source = format!("docker://{}/plugins/fixture:v1", registry.addr);
    let raw = skopeo(&["inspect", "--raw", "--tls-verify=false", &source]);
    assert!(
        raw.status.success(),
        "skopeo inspect: {}",
        text(&raw.stderr)
    );
    assert_eq!(
        pinned,
        format!(
            "oci://{}/plugins/fixture@{}",
            registry.addr,
            sha256(&raw.stdout)
        ),
        "push prints the reference pinned to the manifest skopeo reads"
    );
    let manifest: serde_json::Value = serde_json::from_slice(&raw.stdout).expect("manifest");
    assert_eq!(
        manifest["mediaType"],
        "application/vnd.oci.image.manifest.v1+json"
    );
    assert_eq!(
        manifest["config"]["mediaType"],
        "application/vnd.wasm.config.v0+json"
    );
    assert_eq!(manifest["layers"][0]["mediaType"], "application/wasm");
    assert_eq!(manifest["layers"][0]["digest"], sha256(&wasm).as_str());
    assert_eq!(manifest["layers"][0]["size"], wasm.len());

    let copy = tempfile::tempdir().expect("tempdir");
    let dest = format!("dir:{}", copy.path().display());
    let copied = skopeo(&["copy", "--src-tls-verify=false", &source, &dest]);
    assert!(
        copied.status.success(),
        "skopeo copy: {}",
        text(&copied.stderr)
    );
    let layer = copy
        .path()
        .join(sha256(&wasm).trim_start_matches("sha256:"));
    assert_eq!(std::fs::read(layer).expect("the layer skopeo copied"), wasm);

    // The same file pushed again is the same manifest.
    let again = push_cli(
        &file,
        &reference,
        &["--plain-http-registry", &registry.addr],
    );
    assert_eq!(text(&again.stdout).trim(), pinned);
}

#[test]
fn plugin_push_refuses_a_file_that_is_not_a_component_and_names_it() {
    let registry = LocalRegistry::start(Guard::default());
    let dir = tempfile::tempdir().expect("tempdir");
    let cases: [(&str, &[u8]); 2] = [
        ("module.wasm", b"\0asm\x01\x00\x00\x00"),
        ("text.wasm", b"not wasm at all"),
    ];
    let reference = registry.reference("plugins/bad:v1");
    for (name, bytes) in cases {
        let file = dir.path().join(name);
        std::fs::write(&file, bytes).expect("file");
        let out = push_cli(
            &file,
            &reference,
            &["--plain-http-registry", &registry.addr],
        );
        assert!(!out.status.success(), "{name} was pushed");
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(&format!(
                "{} is not a wasm plugin artifact: the file is not a WebAssembly component",
                file.display()
            )),
            "{name}: {stderr}"
        );
    }
    let good = push_cli(
        &plugin("fixture-reconciler.wasm"),
        &reference,
        &["--plain-http-registry", &registry.addr],
    );
    assert!(good.status.success(), "{}", text(&good.stderr));
}

/// A registry with the fixture pushed to `plugins/fixture:stable`, and a plugin directory
/// whose `fixture` has that source, pulled once.
struct Pulled {
    registry: LocalRegistry,
    client: Registry,
    reference: OciRef,
    dir: tempfile::TempDir,
    puller: Puller,
}

async fn fixture_pulled() -> Pulled {
    let registry = LocalRegistry::start(Guard::default());
    let args = plain(&registry);
    let client = Registry::new(&args).expect("client");
    let reference = registry.reference("plugins/fixture:stable");
    wasm_operator::oci::push(&client, &plugin("fixture-reconciler.wasm"), &reference)
        .await
        .expect("push v1");
    let dir = directory_with_source(&reference);
    let mut puller = Puller::new(args.clone(), dir.path().into(), None).expect("puller");
    let first = puller.sync().await;
    assert!(
        matches!(first.as_slice(), [(name, Ok(wasm_operator::oci::Pulled::Written(_)))] if name == "fixture"),
        "{first:?}"
    );
    let v1 = std::fs::read(plugin("fixture-reconciler.wasm")).expect("v1");
    assert_eq!(
        std::fs::read(dir.path().join("fixture.wasm")).expect("pulled"),
        v1
    );
    Pulled {
        registry,
        client,
        reference,
        dir,
        puller,
    }
}

#[tokio::test]
async fn a_plugin_is_pulled_from_its_source_and_a_new_digest_of_its_tag_replaces_it() {
    let Pulled {
        registry: _running,
        client,
        reference,
        dir,
        mut puller,
    } = fixture_pulled().await;
    let v2 = std::fs::read(plugin("fixture-next.wasm")).expect("v2");
    let file = dir.path().join("fixture.wasm");
    let unchanged = puller.sync().await;
    assert!(
        matches!(
            unchanged.as_slice(),
            [(_, Ok(wasm_operator::oci::Pulled::Current))]
        ),
        "{unchanged:?}"
    );

    wasm_operator::oci::push(&client, &plugin("fixture-next.wasm"), &reference)
        .await
        .expect("push v2 to the same tag");
    let second = puller.sync().await;
    assert!(
        matches!(second.as_slice(), [(_, Ok(wasm_operator::oci::Pulled::Written(pinned)))] if pinned.contains("@sha256:")),
        "{second:?}"
    );
    assert_eq!(std::fs::read(&file).expect("pulled"), v2);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !["plugins.toml", "fixture.wasm", ".fixture.wasm.source"].contains(&n.as_str()))
        .collect();
    assert_eq!(leftovers, Vec::<String>::new(), "no partial file is left");
}

#[tokio::test]
async fn a_layer_whose_bytes_do_not_match_its_digest_is_refused_and_the_file_kept() {
    let Pulled {
        registry,
        client,
        reference,
        dir,
        mut puller,
    } = fixture_pulled().await;
    let v1 = std::fs::read(plugin("fixture-reconciler.wasm")).expect("v1");
    // v2 is pushed, then its layer is altered in the registry's storage: same size,
    // other bytes.
    let v2 = std::fs::read(plugin("fixture-next.wasm")).expect("v2");
    wasm_operator::oci::push(&client, &plugin("fixture-next.wasm"), &reference)
        .await
        .expect("push v2");
    let mut tampered = v2.clone();
    let last = tampered.len() - 1;
    tampered[last] ^= 0xff;
    std::fs::write(registry.blob_file(&sha256(&v2)), &tampered).expect("tamper");

    let refused = puller.sync().await;
    let error = the_error(&refused, "the tampered layer was not refused");
    assert!(
        error.contains(&reference.to_string().replace(":stable", "@sha256:"))
            && error.contains(&format!(
                "Expected {}, got {}",
                sha256(&v2),
                sha256(&tampered)
            )),
        "{error}"
    );
    assert_eq!(
        std::fs::read(dir.path().join("fixture.wasm")).expect("kept"),
        v1
    );

    // A layer longer than its descriptor says is cut off at that size.
    let mut longer = v2.clone();
    longer.extend_from_slice(&[0; 1024]);
    std::fs::write(registry.blob_file(&sha256(&v2)), &longer).expect("tamper");
    let refused = puller.sync().await;
    let error = the_error(&refused, "the longer layer was not refused");
    assert!(
        error.contains(&format!(
            "the registry sent more than the layer's {} bytes",
            v2.len()
        )),
        "{error}"
    );

    // A digest the registry does not have is refused by name.
    let missing = reference.pinned(&format!("sha256:{}", "0".repeat(64)));
    let gone = directory_with_source(&missing);
    let mut puller = Puller::new(plain(&registry), gone.path().into(), None).expect("puller");
    let outcome = puller.sync().await;
    let error = the_error(&outcome, "a missing digest was pulled");
    assert!(
        error.starts_with(&missing.to_string()) && error.contains("manifest unknown"),
        "{error}"
    );
    assert!(!gone.path().join("fixture.wasm").exists());
}

/// A registry that takes the user `plugins` with the password `s3cret` (htpasswd, bcrypt).
fn registry_with_password() -> LocalRegistry {
    let hash = Command::new("/usr/bin/python3")
        .args([
            "-c",
            "import bcrypt; print(bcrypt.hashpw(b's3cret', bcrypt.gensalt(rounds=4)).decode())",
        ])
        .output()
        .expect("Debian's python3 with bcrypt (python3-keystone depends on it)");
    assert!(hash.status.success(), "{}", text(&hash.stderr));
    LocalRegistry::start(Guard {
        htpasswd: Some(format!("plugins:{}", text(&hash.stdout).trim())),
        ..Guard::default()
    })
}

/// A docker config JSON with `user:password` for `registry`.
fn docker_config(path: &Path, registry: &LocalRegistry, user_password: &str) {
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode(user_password);
    let auths = serde_json::json!({"auths": {&registry.addr: {"auth": auth}}});
    std::fs::write(path, auths.to_string()).expect("config.json");
}

#[tokio::test]
async fn rotated_registry_credentials_are_read_again_without_a_restart() {
    let registry = registry_with_password();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    docker_config(&config, &registry, "plugins:s3cret");
    let args = RegistryArgs {
        registry_auth_file: Some(config.clone()),
        ..plain(&registry)
    };
    let pinned = wasm_operator::oci::push(
        &Registry::new(&args).expect("client"),
        &plugin("fixture-reconciler.wasm"),
        &registry.reference("plugins/fixture:v1"),
    )
    .await
    .expect("push with the credentials");
    let plugins = directory_with_source(&pinned);

    docker_config(&config, &registry, "plugins:expired");
    let mut puller = Puller::new(args, plugins.path().into(), None).expect("puller");
    let refused = puller.sync().await;
    let error = the_error(&refused, "pulled with a wrong password");
    assert!(
        error.contains("401") || error.contains("nauthorized"),
        "{error}"
    );

    // The Secret rotates: the file changes under the running puller.
    std::thread::sleep(std::time::Duration::from_millis(20));
    docker_config(&config, &registry, "plugins:s3cret");
    let pulled = puller.sync().await;
    assert!(
        matches!(
            pulled.as_slice(),
            [(_, Ok(wasm_operator::oci::Pulled::Written(_)))]
        ),
        "{pulled:?}"
    );
}

#[test]
fn registry_credentials_come_from_a_docker_config_json() {
    let registry = registry_with_password();
    let file = plugin("fixture-reconciler.wasm");
    let reference = registry.reference("plugins/fixture:v1");
    let anonymous = push_cli(
        &file,
        &reference,
        &["--plain-http-registry", &registry.addr],
    );
    assert!(
        !anonymous.status.success(),
        "an anonymous push was accepted"
    );
    assert!(
        text(&anonymous.stderr).contains(&reference.to_string()),
        "{}",
        text(&anonymous.stderr)
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.json");
    // base64("plugins:s3cret")
    let auths = serde_json::json!({"auths": {&registry.addr: {"auth": "cGx1Z2luczpzM2NyZXQ="}}});
    std::fs::write(&config, auths.to_string()).expect("config.json");
    // With every debug line of the host and the registry client on.
    let pushed = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .env("RUST_LOG", "debug")
        .args(["plugin", "push"])
        .arg(&file)
        .arg(reference.to_string())
        .args([
            "--plain-http-registry",
            &registry.addr,
            "--registry-auth-file",
        ])
        .arg(&config)
        .output()
        .expect("wasm-operator runs");
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));
    let logged = text(&pushed.stderr);
    assert!(
        logged.contains("DEBUG"),
        "debug lines were logged: {logged}"
    );
    for secret in ["s3cret", "cGx1Z2luczpzM2NyZXQ="] {
        assert!(!logged.contains(secret), "the credentials are never logged");
    }
    let source = format!("docker://{}/plugins/fixture:v1", registry.addr);
    let read = skopeo(&[
        "inspect",
        "--raw",
        "--tls-verify=false",
        "--creds",
        "plugins:s3cret",
        &source,
    ]);
    assert!(read.status.success(), "{}", text(&read.stderr));
}

#[tokio::test]
async fn a_registry_serving_a_private_ca_certificate_is_trusted_through_the_ca_bundle() {
    let ca_key = rcgen::KeyPair::generate().expect("key");
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "test registry CA");
    let ca_cert = ca.self_signed(&ca_key).expect("CA");
    let issuer = rcgen::Issuer::new(ca, &ca_key);
    let key = rcgen::KeyPair::generate().expect("key");
    let serving = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
        .expect("params")
        .signed_by(&key, &issuer)
        .expect("serving certificate");
    let registry = LocalRegistry::start(Guard {
        tls: Some((serving.pem(), key.serialize_pem())),
        ..Guard::default()
    });
    let dir = tempfile::tempdir().expect("tempdir");
    let bundle = dir.path().join("ca.crt");
    std::fs::write(&bundle, ca_cert.pem()).expect("bundle");
    let reference = registry.reference("plugins/fixture:v1");
    let file = plugin("fixture-reconciler.wasm");

    let untrusted = Registry::new(&RegistryArgs::default()).expect("client");
    let error = wasm_operator::oci::push(&untrusted, &file, &reference)
        .await
        .expect_err("a certificate from an unknown CA is trusted");
    let chain = format!("{:?}", anyhow::Error::from(error));
    assert!(chain.contains("UnknownIssuer"), "{chain}");

    let trusted_args = RegistryArgs {
        registry_ca_file: Some(bundle.clone()),
        ..RegistryArgs::default()
    };
    let trusted = Registry::new(&trusted_args).expect("client");
    let pinned = wasm_operator::oci::push(&trusted, &file, &reference)
        .await
        .expect("pushed over TLS with the bundle");
    let plugins = directory_with_source(&pinned);
    let mut puller = Puller::new(trusted_args, plugins.path().into(), None).expect("puller");
    let pulled = puller.sync().await;
    assert!(matches!(pulled.as_slice(), [(_, Ok(_))]), "{pulled:?}");
    assert_eq!(
        std::fs::read(plugins.path().join("fixture.wasm")).expect("pulled"),
        std::fs::read(&file).expect("fixture")
    );

    let not_pem = dir.path().join("not.pem");
    std::fs::write(&not_pem, "garbage").expect("file");
    let refused = Registry::new(&RegistryArgs {
        registry_ca_file: Some(not_pem.clone()),
        ..RegistryArgs::default()
    });
    assert_eq!(
        refused.err().map(|e| e.to_string()),
        Some(format!(
            "cannot read the registry CA bundle {}: no PEM certificate in it",
            not_pem.display()
        ))
    );
}

#[test]
fn run_pulls_its_plugin_from_the_registry_beside_its_plugins_config_and_swaps_in_a_new_tag_digest_without_a_restart()
 {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::Api;

    let registry = LocalRegistry::start(Guard::default());
    let reference = registry.reference("plugins/fixture:stable");
    let pushed = push_cli(
        &plugin("fixture-reconciler.wasm"),
        &reference,
        &["--plain-http-registry", &registry.addr],
    );
    assert!(pushed.status.success(), "{}", text(&pushed.stderr));

    let tokio = tokio::runtime::Runtime::new().expect("tokio");
    let _context = tokio.enter();
    let cluster = common::Cluster::start(&tokio);
    let kubeconfig = &cluster.kubeconfig;
    let client = cluster.client();
    // As in a Pod: plugins.toml mounted from a ConfigMap, the plugins pulled into an
    // empty writable directory.
    let config = directory_with_source(&reference);
    let plugins = tempfile::tempdir().expect("tempdir");
    let cache = tempfile::tempdir().expect("tempdir");
    let operator = Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .env("WASM_OPERATOR_CACHE_DIR", cache.path())
        .args([
            "run",
            "--health-addr",
            "127.0.0.1:0",
            "--registry-poll-s",
            "1",
        ])
        .args(["--plain-http-registry", &registry.addr, "--plugins"])
        .arg(plugins.path())
        .arg("--plugins-config")
        .arg(config.path().join("plugins.toml"))
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .stderr(Stdio::null())
        .spawn()
        .expect("runs");
    let mut operator = common::Process(operator);
    let served_by = |config_maps: Api<ConfigMap>, version: &'static str| async move {
        for _ in 0..1500 {
            let echo = config_maps.get_opt("a-echo").await.expect("get");
            let served = echo
                .and_then(|e| e.data)
                .and_then(|d| d.get("served-by").cloned());
            if served.as_deref() == Some(version) {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        false
    };
    let (first, upgraded) = tokio.block_on(async {
        let config_maps = common::config_map_to_echo(client).await;
        let first = served_by(config_maps.clone(), "0.1.0").await;
        let pushed = push_cli(
            &plugin("fixture-next.wasm"),
            &reference,
            &["--plain-http-registry", &registry.addr],
        );
        assert!(pushed.status.success(), "{}", text(&pushed.stderr));
        (first, served_by(config_maps, "0.2.0").await)
    });
    let _ = Command::new("kill")
        .args(["-TERM", &operator.0.id().to_string()])
        .status();
    let exit = operator.0.wait().expect("exits");
    assert!(first, "the plugin pulled at start did not echo within 30 s");
    assert!(
        upgraded,
        "the version pushed to the tag did not serve within 30 s"
    );
    assert!(exit.success(), "the same process served both: {exit:?}");
}

#[tokio::test]
async fn a_pinned_plugin_restarts_without_its_registry_and_one_whose_source_is_removed_is_removed()
{
    let registry = LocalRegistry::start(Guard::default());
    let args = plain(&registry);
    let client = Registry::new(&args).expect("client");
    let pinned = wasm_operator::oci::push(
        &client,
        &plugin("fixture-reconciler.wasm"),
        &registry.reference("plugins/fixture:v1"),
    )
    .await
    .expect("push");
    let dir = directory_with_source(&pinned);
    let dropped = dir.path().join("dropped.wasm");
    std::fs::copy(plugin("fixture-next.wasm"), &dropped).expect("a dropped file");
    let mut puller = Puller::new(args.clone(), dir.path().into(), None).expect("puller");
    let first = puller.sync().await;
    assert!(
        matches!(
            first.as_slice(),
            [(_, Ok(wasm_operator::oci::Pulled::Written(_)))]
        ),
        "{first:?}"
    );

    // A restart with the registry gone: the pinned file on disk is the artifact.
    drop(registry);
    let mut restarted = Puller::new(args, dir.path().into(), None).expect("puller");
    let again = restarted.sync().await;
    assert!(
        matches!(
            again.as_slice(),
            [(_, Ok(wasm_operator::oci::Pulled::Current))]
        ),
        "{again:?}"
    );

    // The source removed: the file it pulled goes, a file dropped by hand stays.
    std::fs::write(
        dir.path().join("plugins.toml"),
        "[plugins.fixture]\ndeadline_ms = 5000\n",
    )
    .expect("plugins.toml");
    let none = restarted.sync().await;
    assert!(none.is_empty(), "{none:?}");
    assert!(
        !dir.path().join("fixture.wasm").exists(),
        "the pulled file is removed"
    );
    assert!(
        dropped.exists(),
        "a file the puller did not write is left alone"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".source")), "{names:?}");
}
