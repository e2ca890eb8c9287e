//! Step 11d — Bootstrap (facts §2.18): `keystone-manage bootstrap` in the run-once Job
//! `{name}-bootstrap`, which creates the admin user, project, roles, region and the
//! identity endpoints.
//!
//! | Case | Job `{name}-bootstrap` | BootstrapReady | Event | Pass |
//! |---|---|---|---|---|
//! | admin Secret, or its `password`, missing, unreadable or empty | — | False `AdminSecretInvalid` | Warning `AdminSecretInvalid` | error |
//! | no Job yet, or finished under another password | created | False `BootstrapInProgress` | — | 60 s |
//! | running | — | False `BootstrapInProgress` | — | 60 s |
//! | failed under this password | — | False `BootstrapFailed` | Warning `BootstrapFailed` | error |
//! | complete under this password | — | True `BootstrapComplete` | Normal `BootstrapComplete` when the condition turns True | goes on |
//!
//! The Job's re-run key (the SDK's `pod-spec-hash` annotation, set by this builder) is
//! the SHA-256 hex of the admin password, also stamped on the pod template as
//! `cobaltcore.c5c3.io/admin-password-hash`: a rotated password runs bootstrap again; a
//! new image or configuration does not (bootstrap is one-time; re-running it after an
//! upgrade's migrations fails on the existing admin user). The password itself reaches
//! the pod only through the `secretKeyRef` of `BOOTSTRAP_PASSWORD`; no log, event,
//! message or Job field carries it.
//!
//! The container runs `/bin/sh -eu -c`: a Python step that inserts the region row with
//! `INSERT IGNORE` (connecting with `OS_DATABASE__CONNECTION`, honouring its `ssl_*`
//! parameters), then `exec keystone-manage bootstrap` with the URLs and region from env.
//!
//! DECISION: the Python step runs as `python3 -c` rather than from a heredoc: a shell
//! may spool a heredoc to a temporary file, and the root filesystem is read-only.
//!
//! DECISION: an empty `bootstrap.region` (a bypassed defaulting webhook) is the webhook's
//! default, `RegionOne`.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::batch::v1::{Job, JobSpec};
use k8s_openapi::api::core::v1::{
    Container, EnvVar, EnvVarSource, PodSpec, PodTemplateSpec, SecretKeySelector,
    SecretVolumeSource, Volume,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha2::{Digest, Sha256};
use wasm_operator_sdk::EventType;
use wasm_operator_sdk::blocks::job::{POD_SPEC_HASH_ANNOTATION, run_job};
use wasm_operator_sdk::blocks::secrets::get_secret_value;

use crate::conditions::BOOTSTRAP_READY;
use crate::error::Error;
use crate::pass::{Pass, StepResult};
use crate::pod;
use crate::steps::deployment::internal_url;
use crate::types::DEFAULT_REGION;

/// The bootstrap Job's backoffLimit.
const BACKOFF_LIMIT: i32 = 4;
/// RequeueBootstrapWait: how long a pass waits for a running bootstrap.
pub(crate) const BOOTSTRAP_POLLING: Duration = Duration::from_secs(60);
/// The pod-template annotation carrying the SHA-256 hex of the admin password.
pub(crate) const ADMIN_PASSWORD_HASH_ANNOTATION: &str = "cobaltcore.c5c3.io/admin-password-hash";
/// The admin Secret's data key (`adminPasswordSecretRef.key` is not consulted).
const PASSWORD_KEY: &str = "password";
/// Where the fernet keys are mounted.
const FERNET_KEYS_DIR: &str = "/etc/keystone/fernet-keys/";

/// Inserts the region row keystone-manage bootstrap refers to, if absent. Shell-quoted
/// in single quotes, so it holds none.
const SEED_REGION: &str = r#"import os
from urllib.parse import parse_qs, unquote, urlsplit
import pymysql
url = urlsplit(os.environ["OS_DATABASE__CONNECTION"])
query = parse_qs(url.query)
def param(name, default=""):
    return query.get(name, [default])[0]
tls = {key: param("ssl_" + key) for key in ("ca", "cert", "key") if param("ssl_" + key)}
if tls:
    tls["verify_mode"] = param("ssl_verify_cert").lower() == "true"
    tls["check_hostname"] = param("ssl_verify_identity").lower() == "true"
options = dict(host=url.hostname, port=url.port or 3306,
               user=unquote(url.username or ""), password=unquote(url.password or ""),
               database=url.path.lstrip("/"), charset=param("charset", "utf8"))
if tls:
    options["ssl"] = tls
connection = pymysql.connect(**options)
try:
    with connection.cursor() as cursor:
        cursor.execute("INSERT IGNORE INTO region (id, description, extra) VALUES (%s, %s, %s)",
                       (os.environ["BOOTSTRAP_REGION_ID"], "", "{}"))
    connection.commit()
finally:
    connection.close()
"#;

/// The bootstrap proper; `--bootstrap-password=` binds a password starting with `-`.
const BOOTSTRAP: &str = r#"exec keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ bootstrap \
  --bootstrap-password="$BOOTSTRAP_PASSWORD" \
  --bootstrap-admin-url "$BOOTSTRAP_ADMIN_URL" \
  --bootstrap-internal-url "$BOOTSTRAP_INTERNAL_URL" \
  --bootstrap-public-url "$BOOTSTRAP_PUBLIC_URL" \
  --bootstrap-region-id "$BOOTSTRAP_REGION_ID"
"#;

/// `{name}-bootstrap`.
pub(crate) fn job_name(keystone: &str) -> String {
    format!("{keystone}-bootstrap")
}

/// The container's shell program.
pub(crate) fn script() -> String {
    format!("python3 -c '{SEED_REGION}'\n{BOOTSTRAP}")
}

/// The SHA-256 hex of `password`: the Job's re-run key.
pub(crate) fn password_digest(password: &str) -> String {
    hex::encode(Sha256::digest(password.as_bytes()))
}

fn env(name: &str, value: String) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value),
        value_from: None,
    }
}

/// The bootstrap Job for the admin password of digest `digest`.
pub(crate) fn job(pass: &Pass<'_>, digest: &str) -> Result<Job, Error> {
    let config_map = pass.config_map("bootstrap")?;
    let spec = &pass.keystone.spec;
    let internal = internal_url(pass);
    let public = match spec.bootstrap.public_endpoint.as_str() {
        "" => internal.clone(),
        endpoint => endpoint.to_owned(),
    };
    let region = match spec.bootstrap.region.as_str() {
        "" => DEFAULT_REGION.to_owned(),
        region => region.to_owned(),
    };
    let password = EnvVar {
        name: "BOOTSTRAP_PASSWORD".into(),
        value: None,
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: spec.bootstrap.admin_password_secret_ref.name.clone(),
                key: PASSWORD_KEY.into(),
                optional: None,
            }),
            ..Default::default()
        }),
    };
    let fernet_keys = Volume {
        name: "fernet-keys".into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(format!("{}-fernet-keys", pass.name())),
            ..Default::default()
        }),
        ..Default::default()
    };
    let (config, config_mount) = pod::config(&config_map);
    let mut volumes = vec![config, fernet_keys];
    let mut mounts = vec![config_mount, pod::read_only("fernet-keys", FERNET_KEYS_DIR)];
    for (volume, mount) in pod::db_tls(pass).into_iter().chain(pod::domains(pass)) {
        volumes.push(volume);
        mounts.push(mount);
    }
    let container = Container {
        name: "bootstrap".into(),
        image: Some(spec.image.reference()),
        command: Some(vec!["/bin/sh".into(), "-eu".into(), "-c".into(), script()]),
        env: Some(vec![
            password,
            pod::db_connection_env(pass.name()),
            env("BOOTSTRAP_REGION_ID", region),
            env("BOOTSTRAP_ADMIN_URL", internal.clone()),
            env("BOOTSTRAP_INTERNAL_URL", internal),
            env("BOOTSTRAP_PUBLIC_URL", public),
        ]),
        security_context: Some(pod::restricted()),
        volume_mounts: Some(mounts),
        ..Default::default()
    };
    let annotation = |key: &str| BTreeMap::from([(key.to_owned(), digest.to_owned())]);
    Ok(Job {
        metadata: ObjectMeta {
            name: Some(job_name(pass.name())),
            namespace: Some(pass.namespace().to_owned()),
            annotations: Some(annotation(POD_SPEC_HASH_ANNOTATION)),
            ..Default::default()
        },
        spec: Some(JobSpec {
            backoff_limit: Some(BACKOFF_LIMIT),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    annotations: Some(annotation(ADMIN_PASSWORD_HASH_ANNOTATION)),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    restart_policy: Some("Never".into()),
                    priority_class_name: spec.deployment.priority_class_name.clone(),
                    containers: vec![container],
                    volumes: Some(volumes),
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    })
}

/// The digest of the admin password; a missing, unreadable or empty one is reported as
/// `AdminSecretInvalid` (condition and Warning event) and returned as the error.
fn admin_password_digest(pass: &mut Pass<'_>) -> Result<String, Error> {
    let namespace = pass.namespace().to_owned();
    let name = pass
        .keystone
        .spec
        .bootstrap
        .admin_password_secret_ref
        .name
        .clone();
    let secret = format!("{namespace}/{name}");
    let read = get_secret_value(pass.cluster, &namespace, &name, PASSWORD_KEY);
    let error = match read {
        Ok(password) if !password.is_empty() => return Ok(password_digest(&password)),
        Ok(_) => Error::EmptyAdminPassword {
            secret: secret.clone(),
        },
        Err(source) => Error::Secrets {
            what: format!("reading admin password from Secret {secret}"),
            source,
        },
    };
    let message = format!(
        "Admin password Secret {secret} is missing, unreadable, or has an empty \
         {PASSWORD_KEY:?} value"
    );
    pass.condition(BOOTSTRAP_READY, false, "AdminSecretInvalid", &message);
    pass.event(EventType::Warning, "AdminSecretInvalid", &message);
    Err(error)
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let digest = admin_password_digest(pass)?;
    let job = job(pass, &digest)?;
    match run_job(pass.cluster, &pass.owner, &job) {
        Err(source) => {
            let message = format!("Keystone bootstrap job failed: {source}");
            pass.condition(BOOTSTRAP_READY, false, "BootstrapFailed", &message);
            pass.event(EventType::Warning, "BootstrapFailed", &message);
            Err(Error::Job {
                what: "running bootstrap".into(),
                source,
            })
        }
        Ok(false) => {
            pass.condition(
                BOOTSTRAP_READY,
                false,
                "BootstrapInProgress",
                "Keystone bootstrap job is running",
            );
            Ok(Some(BOOTSTRAP_POLLING))
        }
        Ok(true) => {
            let complete_before = pass
                .conditions_of(BOOTSTRAP_READY)
                .is_some_and(|c| c.status == "True");
            let message = "Keystone bootstrap completed successfully";
            pass.condition(BOOTSTRAP_READY, true, "BootstrapComplete", message);
            // Once per completion: a converged pass records nothing.
            if !complete_before {
                pass.event(EventType::Normal, "BootstrapComplete", message);
            }
            Ok(None)
        }
    }
}

#[cfg(test)]
#[path = "bootstrap_tests.rs"]
mod tests;
