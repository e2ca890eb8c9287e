//! What the rotation CronJobs of the key steps and of PasswordRotation share (facts
//! §2.8–2.11, §2.19): the staging Secret a CronJob writes into, the RBAC it runs as, and
//! the script's part that stages its result on that Secret.
//!
//! The operator owns a staging Secret's metadata and the CronJob its data: the Secret is
//! applied with labels only, so an apply never touches what the CronJob staged. The Role
//! allows `get` of the Secret the CronJob reads and `get` + `patch` of the staging Secret,
//! each by name, nothing else.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    EnvVar, EnvVarSource, ObjectFieldSelector, Secret, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use wasm_operator_sdk::blocks::secrets::{effective_store_ref, push_secret_store_refs};
use wasm_operator_sdk::external::eso::{
    PushSecret, PushSecretData, PushSecretMatch, PushSecretRemoteRef, PushSecretSecret,
    PushSecretSelector, PushSecretSpec,
};

use crate::labels::common_labels;
use crate::pass::Pass;

/// The label naming what a staging Secret stages for.
pub(crate) const ROTATION_TARGET: &str = "cobaltcore.c5c3.io/rotation-target";

/// Metadata of the Keystone's child `name` (in its namespace) with `labels`.
pub(crate) fn meta(pass: &Pass<'_>, name: String, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        namespace: Some(pass.namespace().to_owned()),
        labels: Some(labels),
        ..Default::default()
    }
}

/// The staging Secret `name` of a rotation of `target` (`fernet-keys`, `admin-password`):
/// common labels and [`ROTATION_TARGET`], no data.
pub(crate) fn staging_secret(pass: &Pass<'_>, name: String, target: &str) -> Secret {
    let mut labels = common_labels(pass.name());
    labels.insert(ROTATION_TARGET.into(), target.to_owned());
    Secret {
        metadata: meta(pass, name, labels),
        ..Default::default()
    }
}

/// The ServiceAccount, Role and RoleBinding `name` a rotation CronJob runs as: `get` of the
/// Secret `read`, `get` and `patch` of the staging Secret `staging`.
pub(crate) fn rbac(
    pass: &Pass<'_>,
    name: &str,
    read: &str,
    staging: &str,
) -> (ServiceAccount, Role, RoleBinding) {
    let labels = common_labels(pass.name());
    let account = ServiceAccount {
        metadata: meta(pass, name.to_owned(), labels.clone()),
        ..Default::default()
    };
    let rule = |secret: &str, verbs: &[&str]| PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["secrets".into()]),
        resource_names: Some(vec![secret.to_owned()]),
        verbs: verbs.iter().map(|v| (*v).to_owned()).collect(),
        ..Default::default()
    };
    let role = Role {
        metadata: meta(pass, name.to_owned(), labels.clone()),
        rules: Some(vec![rule(read, &["get"]), rule(staging, &["get", "patch"])]),
    };
    let binding = RoleBinding {
        metadata: meta(pass, name.to_owned(), labels),
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: "Role".into(),
            name: name.to_owned(),
        },
        subjects: Some(vec![Subject {
            kind: "ServiceAccount".into(),
            name: name.to_owned(),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        }]),
    };
    (account, role, binding)
}

/// A rotation script: `#!/bin/sh`, the `comment` lines, `set -eu`, the shell commands
/// `before`, then a Python program (standard library only) that runs `build_data` (which
/// sets `data`, a dict of base64 values), strategic-merge-PATCHes `data` and the
/// completion annotation (UTC RFC 3339 seconds with `Z`) onto the staging Secret
/// `$SECRET_NAMESPACE/$SECRET_NAME` with the pod's ServiceAccount token, and prints
/// `report` (a Python expression that may use the `response`).
pub(crate) fn stage_script(comment: &str, before: &str, build_data: &str, report: &str) -> String {
    format!(
        r#"#!/bin/sh
{comment}set -eu
{before}exec python3 - <<'PY'
import base64, datetime, json, os, ssl, urllib.request

{build_data}now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
body = json.dumps({{"metadata": {{"annotations": {{
    "cobaltcore.c5c3.io/rotation-completed-at": now}}}}, "data": data}}).encode()
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
with open(sa + "/token") as f:
    token = f.read().strip()
host = os.environ.get("KUBERNETES_SERVICE_HOST", "kubernetes.default.svc")
port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
url = "https://%s:%s/api/v1/namespaces/%s/secrets/%s" % (
    host, port, os.environ["SECRET_NAMESPACE"], os.environ["SECRET_NAME"])
request = urllib.request.Request(url, data=body, method="PATCH", headers={{
    "Authorization": "Bearer " + token,
    "Content-Type": "application/strategic-merge-patch+json"}})
context = ssl.create_default_context(cafile=sa + "/ca.crt")
with urllib.request.urlopen(request, context=context) as response:
    print({report})
PY
"#
    )
}

/// The environment every rotation CronJob's container starts with: the staging Secret it
/// patches (`SECRET_NAME`) and its namespace from the downward API (`SECRET_NAMESPACE`).
pub(crate) fn staging_env(staging: String) -> Vec<EnvVar> {
    vec![
        EnvVar {
            name: "SECRET_NAME".into(),
            value: Some(staging),
            value_from: None,
        },
        EnvVar {
            name: "SECRET_NAMESPACE".into(),
            value: None,
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector {
                    field_path: "metadata.namespace".into(),
                    api_version: None,
                }),
                ..Default::default()
            }),
        },
    ]
}

/// The backup PushSecret `name` (facts §2.12): pushes Secret `source` to the Keystone's
/// effective store under `remote_key`, the whole Secret, or only `key` (as the property of
/// the same name) when one is given; `deletion_policy` says whether deleting it deletes
/// what it pushed.
pub(crate) fn backup_push_secret(
    pass: &Pass<'_>,
    name: String,
    deletion_policy: &str,
    source: String,
    remote_key: String,
    key: Option<&str>,
) -> PushSecret {
    let store = effective_store_ref(pass.keystone.spec.secret_store_ref.as_ref());
    PushSecret {
        metadata: ObjectMeta {
            name: Some(name),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        },
        spec: PushSecretSpec {
            deletion_policy: Some(deletion_policy.into()),
            secret_store_refs: push_secret_store_refs(&store),
            selector: PushSecretSelector {
                secret: Some(PushSecretSecret { name: source }),
            },
            data: vec![PushSecretData {
                match_: PushSecretMatch {
                    secret_key: key.map(str::to_owned),
                    remote_ref: PushSecretRemoteRef {
                        remote_key,
                        property: key.map(str::to_owned),
                    },
                },
            }],
            ..Default::default()
        },
        status: None,
    }
}
