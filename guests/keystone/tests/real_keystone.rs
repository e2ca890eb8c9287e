//! The keys the Keystone reconciler generates and rotates (facts §2.8–2.11), used by the
//! real OpenStack Keystone: Debian's python3-keystone 22.0.2 on sqlite, its WSGI app on
//! loopback, set up once for this binary (`real_keystone/setup-keystone.sh`). The key
//! steps run on a fake cluster; their Secrets become the Keystone's key repositories, and
//! a rotation runs the CronJob's pod as built — its init container and its script's
//! keystone-manage lines with the real `keystone-manage` — then stages what the script's
//! PATCH would for the next pass to commit. A missing tool fails the test.

#[path = "real_keystone/http.rs"]
mod http;
#[path = "real_keystone/pod.rs"]
mod pod;
#[path = "real_keystone/server.rs"]
mod server;

use std::path::{Path, PathBuf};
use std::time::Duration;

use keystone::Keystone;
use keystone::config::{ConfigInputs, render};
use keystone::testkit::{KeyStep, Keys, run_key_step};
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use pod::RotationPod;
use server::{KeyFiles, RealKeystone, sha1};

/// The Keystone's `fernet.maxActiveKeys` (the real Keystone's `[fernet_tokens]
/// max_active_keys`); not keystone's default 3, so a rotation that ignored it would show.
const FERNET_MAX_ACTIVE_KEYS: i32 = 4;
/// The Keystone's `credentialKeys.maxActiveKeys`: keystone keeps 3 credential keys
/// whatever the configuration says (`credential_fernet.MAX_ACTIVE_KEYS`).
const CREDENTIAL_MAX_ACTIVE_KEYS: i32 = 5;
/// How long the key steps wait after generating or committing keys.
const SECRET_POLLING: Duration = Duration::from_secs(15);

/// An empty directory `name` of this binary's scratch space.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("real_keystone")
        .join(name);
    if dir.exists() {
        std::fs::remove_dir_all(&dir).expect("clears the scratch directory");
    }
    std::fs::create_dir_all(&dir).expect("creates the scratch directory");
    dir
}

/// The Keystone `ks` in `ns`. Its cache backend needs no server (there is no memcached
/// here; the pods reach the Keystone's).
fn keystone() -> Keystone {
    serde_json::from_value(json!({
        "apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": "ns", "uid": "ks-uid", "generation": 1},
        "spec": {
            "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                         "secretRef": {"name": "ks-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.null"},
            "bootstrap": {"adminPasswordSecretRef": {"name": "ks-admin"}},
            "fernet": {"maxActiveKeys": FERNET_MAX_ACTIVE_KEYS},
            "credentialKeys": {"maxActiveKeys": CREDENTIAL_MAX_ACTIVE_KEYS},
        },
    }))
    .expect("a Keystone")
}

/// The fake cluster of one test: the Keystone's config ConfigMap as the Config step
/// creates it, and the key steps run until their keys are available.
struct Cluster {
    fake: FakeCluster,
    keystone: Keystone,
    config_map: String,
}

impl Cluster {
    fn converged() -> Self {
        let keystone = keystone();
        let rendered = render(&keystone, &ConfigInputs::default()).expect("the config renders");
        let fake = FakeCluster::new();
        fake.put(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": rendered.config_map_name, "namespace": "ns"},
            "data": rendered.data, "immutable": true}));
        let cluster = Self {
            fake,
            keystone,
            config_map: rendered.config_map_name,
        };
        for keys in [Keys::Fernet, Keys::Credential] {
            let generated = cluster.step(keys);
            assert_eq!(generated.requeue, Some(SECRET_POLLING));
            assert_eq!(
                (
                    generated.condition.status.as_str(),
                    generated.condition.reason.as_str()
                ),
                ("False", "GeneratingKeys")
            );
            let available = cluster.step(keys);
            assert_eq!(available.requeue, None);
            assert_eq!(available.condition.status, "True");
        }
        cluster
    }

    fn step(&self, keys: Keys) -> KeyStep {
        run_key_step(&self.fake, &self.keystone, &self.config_map, keys)
            .unwrap_or_else(|e| panic!("the {keys:?} key step: {e}"))
    }

    fn keys(&self, keys: Keys) -> KeyFiles {
        self.fake.secret_data(match keys {
            Keys::Fernet => "ks-fernet-keys",
            Keys::Credential => "ks-credential-keys",
        })
    }

    /// The `{name}-db-connection` Secret the DBConnectionSecret step writes, naming the
    /// real Keystone's database.
    fn connect_to(&self, real: &RealKeystone) {
        let url = real.database_url();
        self.fake.put(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "ks-db-connection", "namespace": "ns"},
            "data": {"connection": serde_json::to_value(k8s_openapi::ByteString(url.into_bytes()))
                .expect("base64")}}));
    }

    /// The pass after a rotation: it commits the staged keys (condition `reason`) and
    /// deletes the staging Secret, which the pass after recreates without data.
    fn commit(&self, keys: Keys, reason: &str) {
        let staging = match keys {
            Keys::Fernet => "ks-fernet-keys-rotation",
            Keys::Credential => "ks-credential-keys-rotation",
        };
        let committed = self.step(keys);
        assert_eq!(committed.requeue, Some(SECRET_POLLING));
        let condition = &committed.condition;
        assert_eq!(
            (
                condition.status.as_str(),
                condition.reason.as_str(),
                condition.message.as_str()
            ),
            ("True", reason, "rotation applied; staging secret cleared")
        );
        assert_eq!(self.fake.server("Secret", staging), None);
        let next = self.step(keys);
        assert_eq!(
            (next.requeue, next.condition.status.as_str()),
            (None, "True")
        );
        let recreated = self
            .fake
            .server("Secret", staging)
            .expect("the staging Secret");
        assert!(
            recreated.get("data").is_none_or(Value::is_null),
            "{recreated}"
        );
        assert!(
            recreated
                .pointer("/metadata/annotations/cobaltcore.c5c3.io~1rotation-completed-at")
                .is_none(),
            "{recreated}"
        );
    }

    /// One run of `keys`' rotation CronJob: its pod laid out, its init container run, its
    /// script's keystone-manage lines run, and what its PATCH stages written. The files
    /// staged.
    fn rotate(&self, keys: Keys, root: &str) -> KeyFiles {
        let (cron_job, container) = match keys {
            Keys::Fernet => ("ks-fernet-rotate", "fernet-rotate"),
            Keys::Credential => ("ks-credential-rotate", "credential-rotate"),
        };
        let pod = RotationPod::new(&self.fake, cron_job, scratch(root));
        let env = [
            ("PATH", "/usr/bin:/bin".to_owned()),
            ("HOME", pod.reroot("/nonexistent")),
            // keystone 22's default `[fernet_receipts] key_repository`, the token keys'
            // mount in the pod; under the root it must be named.
            (
                "OS_FERNET_RECEIPTS__KEY_REPOSITORY",
                pod.reroot("/etc/keystone/fernet-keys/"),
            ),
        ];
        pod.run_init_containers(&env);
        pod.run_script_until_the_patch(container, &env);
        pod.stage(container)
    }
}

/// The primary key of a repository: the highest-numbered file.
fn primary(files: &KeyFiles) -> &[u8] {
    files
        .iter()
        .max_by_key(|(name, _)| name.parse::<u32>().expect("a numbered key file"))
        .map(|(_, key)| key.as_slice())
        .expect("a key")
}

fn assert_valid(real: &RealKeystone, token: &server::Token, what: &str) {
    let answer = real.validate(token);
    assert_eq!(answer.status, 200, "{what}: {:?}", answer.body);
    assert_eq!(answer.body["token"]["user"]["name"], "admin", "{what}");
}

fn names(files: &KeyFiles) -> Vec<&str> {
    files.keys().map(String::as_str).collect()
}

#[test]
fn generated_keys_let_the_real_keystone_issue_and_validate_a_token() {
    let cluster = Cluster::converged();
    let fernet = cluster.keys(Keys::Fernet);
    let credential = cluster.keys(Keys::Credential);
    assert_eq!(names(&fernet), ["0", "1", "2", "3"]);
    assert_eq!(names(&credential), ["0", "1", "2", "3", "4"]);
    let real = server::real();
    real.install(Keys::Fernet, &fernet);
    real.install(Keys::Credential, &credential);

    let token = real.issue_token();
    assert_valid(&real, &token, "a token under the generated keys");
    let id = real.create_credential(&token, "generated-keys-blob");
    let read = real.credential(&token, &id);
    assert_eq!(read.status, 200, "{:?}", read.body);
    assert_eq!(read.body["credential"]["blob"], "generated-keys-blob");
    assert_eq!(
        real.credential_key_hash(&id),
        sha1(primary(&credential)),
        "the credential is encrypted with the generated primary key"
    );

    // The Keystone reads the repository it was given: under other keys the token is
    // refused.
    real.install(Keys::Fernet, &credential);
    let refused = real.validate(&token);
    assert_eq!(refused.status, 401, "{:?}", refused.body);
    assert_eq!(refused.body["error"]["title"], "Unauthorized");
    assert!(
        refused.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("requires authentication")),
        "{:?}",
        refused.body
    );
}

#[test]
fn a_fernet_rotation_round_trip_ends_with_keys_the_real_keystone_accepts() {
    let cluster = Cluster::converged();
    let generated = cluster.keys(Keys::Fernet);
    let real = server::real();
    cluster.connect_to(&real);
    real.install(Keys::Fernet, &generated);
    real.install(Keys::Credential, &cluster.keys(Keys::Credential));
    let before = real.issue_token();
    assert_valid(&real, &before, "a token before the rotation");

    let staged = cluster.rotate(Keys::Fernet, "fernet-rotation");
    // keystone-manage promoted the staged key 0 to primary 4, added a new staged key and
    // kept max_active_keys keys.
    assert_eq!(names(&staged), ["0", "2", "3", "4"]);
    assert_eq!(staged["4"], generated["0"]);
    assert_eq!(staged["3"], generated["3"]);
    assert_ne!(staged["0"], generated["0"]);

    cluster.commit(Keys::Fernet, "FernetKeysRotated");
    assert_eq!(cluster.keys(Keys::Fernet), staged);

    real.install(Keys::Fernet, &cluster.keys(Keys::Fernet));
    assert_valid(&real, &before, "a token issued before the rotation");
    let after = real.issue_token();
    assert_valid(&real, &after, "a token issued after the rotation");
}

#[test]
fn a_credential_rotation_round_trip_ends_with_keys_the_real_keystone_accepts() {
    let cluster = Cluster::converged();
    let generated = cluster.keys(Keys::Credential);
    let real = server::real();
    cluster.connect_to(&real);
    real.install(Keys::Fernet, &cluster.keys(Keys::Fernet));
    real.install(Keys::Credential, &generated);
    let token = real.issue_token();
    let id = real.create_credential(&token, "rotated-keys-blob");
    assert_eq!(real.credential_key_hash(&id), sha1(primary(&generated)));

    let staged = cluster.rotate(Keys::Credential, "credential-rotation");
    // Keystone keeps 3 credential keys whatever maxActiveKeys says: the staged key 0
    // became primary 5, the old primary 4 stays for credential_migrate, a new 0 is staged.
    assert_eq!(names(&staged), ["0", "4", "5"]);
    assert_eq!(staged["5"], generated["0"]);
    assert_eq!(
        real.credential_key_hash(&id),
        sha1(&staged["5"]),
        "credential_migrate re-encrypted the credential with the new primary key"
    );

    cluster.commit(Keys::Credential, "CredentialKeysRotated");
    assert_eq!(cluster.keys(Keys::Credential), staged);

    real.install(Keys::Credential, &cluster.keys(Keys::Credential));
    let read = real.credential(&token, &id);
    assert_eq!(read.status, 200, "{:?}", read.body);
    assert_eq!(read.body["credential"]["blob"], "rotated-keys-blob");
    let second = real.create_credential(&token, "after-rotation-blob");
    assert_eq!(real.credential_key_hash(&second), sha1(&staged["5"]));
    assert_eq!(
        real.credential(&token, &second).body["credential"]["blob"],
        "after-rotation-blob"
    );
}
