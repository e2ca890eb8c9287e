//! Glance and its GlanceBackends (facts §3.3, §4): glance.wasm and glancebackends.wasm
//! through the five steps of the handshake — the backend's gate (CredentialsReady), the
//! Glance's Backends step, the `{glance}-backends-{hash}` Secret, the Deployment mounting
//! it, and the backend finding its `[name]` section there (ConfigProjected).

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_e2e::{counter_rises, current_condition, eventually, passes, setup};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::{DeleteOptions, ObjectRef, Patch};

use crate::harness::{Harness, WAIT, in_ns, secret};

pub(crate) const GROUP_VERSION: &str = "glance.openstack.c5c3.io/v1alpha1";
pub(crate) const NS: &str = "ns";

/// The harness with both plugins; `admission` as [`Harness::start`] takes it.
async fn start_with(admission: bool) -> Harness {
    let h = Harness::start(
        &["glance", "glancebackends"],
        &[
            "glance.openstack.c5c3.io_glances.yaml",
            "glance.openstack.c5c3.io_glancebackends.yaml",
        ],
        admission,
    )
    .await;
    for object in children_inputs() {
        h.cluster.create(object).await;
    }
    h
}

/// What the Glance's children need where they live: the MariaDB and the credentials.
pub(crate) fn children_inputs() -> [Value; 3] {
    [
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS}, "spec": {"replicas": 1}}),
        secret(
            NS,
            "glance-db",
            json!({"username": "glance", "password": "db-pw"}),
        ),
        secret(NS, "glance-service", json!({"password": "svc-pw"})),
    ]
}

pub(crate) async fn start() -> Harness {
    start_with(true).await
}

pub(crate) fn glance() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "Glance",
        "metadata": {"name": "glance", "namespace": NS},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/glance", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "glance",
                         "secretRef": {"name": "glance-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "keystoneEndpoint": "http://keystone.ns.svc:5000/v3",
            "serviceUser": {"secretRef": {"name": "glance-service"}}}})
}

/// The S3 backend `name` of Glance `glance`, its credentials in `{name}-s3`.
pub(crate) fn backend(name: &str, default: bool) -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "GlanceBackend",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"glanceRef": {"name": "glance"}, "type": "S3", "isDefault": default,
                 "s3": {"host": format!("https://{name}.s3.example.com"), "bucket": name,
                        "credentialsSecretRef": {"name": format!("{name}-s3")}}}})
}

pub(crate) fn s3_secret(name: &str, secret_key: &str) -> Value {
    secret(
        NS,
        &format!("{name}-s3"),
        json!({"access-key-id": "AKIA", "secret-access-key": secret_key}),
    )
}

pub(crate) fn object_ref(kind: &str, name: &str) -> ObjectRef {
    in_ns(GROUP_VERSION, kind, name)
}

impl Harness {
    pub(crate) async fn backend_condition(&self, name: &str, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(
                GROUP_VERSION,
                "GlanceBackend",
                NS,
                name,
                type_,
                reason,
                WAIT,
            )
            .await
    }

    pub(crate) async fn glance_condition(&self, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(GROUP_VERSION, "Glance", NS, "glance", type_, reason, WAIT)
            .await
    }

    /// The name of the Secret the Deployment `glance` mounts as `backends`, and its
    /// `backends.conf`.
    async fn mounted_backends(&self) -> Option<(String, String)> {
        let deployment = self
            .cluster
            .get("apps/v1", "Deployment", NS, "glance")
            .await?;
        let name = deployment
            .pointer("/spec/template/spec/volumes")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == "backends")?
            .pointer("/secret/secretName")?
            .as_str()?
            .to_owned();
        let secret = self.cluster.get("v1", "Secret", NS, &name).await?;
        let text = secret["data"]["backends.conf"]
            .as_str()
            .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())?;
        Some((name, text))
    }

    /// Waits until the mounted `backends.conf` satisfies `check`; the Secret's name then.
    async fn mounted_until(&self, what: &str, check: impl Fn(&str) -> bool) -> (String, String) {
        eventually(what, WAIT, || async {
            self.mounted_backends()
                .await
                .filter(|(_, text)| check(text))
        })
        .await
    }
}

fn message(object: &Value, type_: &str) -> Value {
    current_condition(object, type_)
        .map(|c| c["message"].clone())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_applied_before_its_glance_waits_then_is_projected_and_a_converged_pass_writes_nothing()
 {
    let h = start().await;
    h.cluster.create(s3_secret("store", "s3-secret")).await;
    // GitOps order: the satellite lands first.
    h.cluster.create(backend("store", true)).await;
    let waiting = h
        .backend_condition("store", "CredentialsReady", "WaitingForParent")
        .await;
    assert_eq!(
        message(&waiting, "CredentialsReady"),
        "parent Glance ns/glance does not exist; the cluster this backend's credentials belong on is unknown"
    );
    h.cluster.create(glance()).await;

    let ready = h.backend_condition("store", "Ready", "AllReady").await;
    assert_eq!(
        message(&ready, "ConfigProjected"),
        "store section is rendered into the Glance Deployment's backends config"
    );
    let glance = h.glance_condition("Ready", "AllReady").await;
    assert_eq!(
        message(&glance, "BackendsReady"),
        "All attached backends are projected"
    );
    let (secret, text) = h.mounted_backends().await.expect("the mounted backends");
    assert!(secret.starts_with("glance-backends-"), "{secret}");
    assert!(text.starts_with("[store]\n"), "{text}");

    // A converged pass of either plugin writes nothing: a touched Deployment wakes both.
    let writes = h.writes();
    let before = (
        passes(&h.operator, "glance"),
        passes(&h.operator, "glancebackends"),
    );
    h.cluster
        .backend
        .patch(
            &setup(),
            &in_ns("apps/v1", "Deployment", "glance"),
            &Patch::Merge(json!({"metadata": {"annotations": {"touched": "yes"}}})),
            None,
        )
        .await
        .expect("annotated");
    counter_rises("the Glance pass", WAIT, before.0, || {
        passes(&h.operator, "glance")
    })
    .await;
    counter_rises("the GlanceBackend pass", WAIT, before.1, || {
        passes(&h.operator, "glancebackends")
    })
    .await;
    assert_eq!(h.writes(), writes, "a converged pass wrote");
    assert_eq!(
        h.mounted_backends().await.map(|(name, _)| name),
        Some(secret),
        "the backends Secret's hash is stable across passes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_backend_rolls_the_glance_a_deleting_one_leaves_at_once_and_name2_is_not_name() {
    let h = start().await;
    h.cluster.create(s3_secret("store", "s3-secret")).await;
    h.cluster.create(backend("store", true)).await;
    h.cluster.create(glance()).await;
    h.backend_condition("store", "Ready", "AllReady").await;
    let (first, _) = h
        .mounted_until("[store] mounted", |t| t.contains("[store]"))
        .await;

    // A new satellite: a new Secret name, a new pod template, then its ConfigProjected.
    h.cluster.create(s3_secret("store2", "s3-secret")).await;
    let mut second = backend("store2", false);
    second["metadata"]["finalizers"] = json!(["test.example.com/hold"]);
    h.cluster.create(second).await;
    h.backend_condition("store2", "ConfigProjected", "ConfigProjected")
        .await;
    let (rolled, _) = h
        .mounted_until("[store2] mounted", |t| t.contains("[store2]"))
        .await;
    assert_ne!(rolled, first, "the pod template names the new Secret");

    // `[store2]` is never taken for `[store]`: with `store`'s credentials unrenderable on
    // the Glance side, only `[store2]` is mounted and `store` is not projected.
    h.cluster
        .merge_patch(
            &in_ns("v1", "Secret", "store-s3"),
            json!({"stringData": {"secret-access-key": "line\ninjected = yes"}}),
        )
        .await;
    // `store` is the only default: without it rendered, the store set stays as it was
    // (the default rule holds on credential-readiness); the warning names it.
    eventually("GlanceBackendSkipped", WAIT, || async {
        let events = h
            .cluster
            .events_with_reason(NS, "GlanceBackendSkipped")
            .await;
        (!events.is_empty()).then_some(())
    })
    .await;
    let glance = h
        .glance_condition("BackendsReady", "WaitingForBackends")
        .await;
    assert!(
        message(&glance, "BackendsReady")
            .as_str()
            .is_some_and(|m| m.starts_with("Waiting for backends: store (")),
        "{}",
        message(&glance, "BackendsReady")
    );
    let (_, text) = h
        .mounted_until("only [store2] mounted", |t| {
            t.contains("[store2]") && !t.contains("[store]")
        })
        .await;
    assert!(!text.contains("injected"), "{text}");
    h.backend_condition("store", "ConfigProjected", "WaitingForProjection")
        .await;

    // Deleting: de-projected while the object still exists (held by its finalizer).
    h.cluster
        .backend
        .delete(
            &object_ref("GlanceBackend", "store2"),
            &DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    h.mounted_until("[store2] gone", |t| !t.contains("[store2]"))
        .await;
    assert!(
        h.cluster
            .get(GROUP_VERSION, "GlanceBackend", NS, "store2")
            .await
            .is_some(),
        "the backend is still there, held by its finalizer"
    );
}

/// Admission refuses a second default; a cluster can still hold two (written while the
/// webhook was down, or before it was installed), which this test stands for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_defaults_past_admission_are_named_on_the_glance_and_the_running_projection_stays() {
    let h = start_with(false).await;
    for name in ["east", "west"] {
        h.cluster.create(s3_secret(name, "s3-secret")).await;
    }
    h.cluster.create(backend("east", true)).await;
    h.cluster.create(backend("west", false)).await;
    h.cluster.create(glance()).await;
    h.backend_condition("west", "Ready", "AllReady").await;
    let (mounted, _) = h.mounted_backends().await.expect("mounted");

    h.cluster
        .merge_patch(
            &object_ref("GlanceBackend", "west"),
            json!({"spec": {"isDefault": true}}),
        )
        .await;
    let glance = h
        .glance_condition("BackendsReady", "NoDefaultBackend")
        .await;
    assert_eq!(
        message(&glance, "BackendsReady"),
        "More than one attached, credential-ready backend is marked isDefault (east, west); exactly one is required"
    );
    assert_eq!(
        h.mounted_backends().await.map(|(name, _)| name),
        Some(mounted),
        "the last good projection keeps running"
    );
}
