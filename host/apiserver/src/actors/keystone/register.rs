//! How a Keystone's stand-in joins the cluster: the actor watches the Deployments labelled
//! [`SELECTOR`] (the Keystone reconciler's `{name}` Deployment), their Services `{name}` and
//! bootstrap Jobs `{name}-bootstrap`, and for each Keystone:
//!
//! - starts its stand-in on first sight (its data lives as long as the server);
//! - once the bootstrap Job is `Complete`, sets the admin password from the Job's
//!   `BOOTSTRAP_PASSWORD` (its `secretKeyRef`'s Secret and key, or a literal value) and the
//!   catalog endpoint from `BOOTSTRAP_INTERNAL_URL`/`BOOTSTRAP_REGION_ID`, as
//!   `keystone-manage bootstrap` would. A Job re-run (a new Job uid completing) sets them
//!   again; a changed Secret alone does not. Until then `admin` has no password (401);
//! - while the Service `{name}` exists, applies the EndpointSlice `{name}-stand-in`
//!   (label `kubernetes.io/service-name={name}`, one port per Service port, named as it is,
//!   pointing at the stand-in's 127.0.0.1 port) under the EndpointSlice controller's manager
//!   [`ENDPOINT_MANAGER`], its endpoint `ready` exactly when the Deployment is available
//!   (`availableReplicas` ≥ 1 and condition `Available=True`).

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt as _;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Secret, Service};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::{Controller, watcher};
use kube::{Api, ResourceExt as _};
use serde_json::json;

use super::Keystones;
use super::instance::Instance;

/// The annotation on a Keystone's Deployment that makes its stand-in answer 503 (`"true"`).
pub const UNAVAILABLE_ANNOTATION: &str = "actors.wasm-operator.dev/keystone-unavailable";
/// The field manager of the EndpointSlices the actor writes (the EndpointSlice controller's).
pub const ENDPOINT_MANAGER: &str = "endpointslice-controller.k8s.io";
/// The Deployments the actor serves: the Keystone API Deployments.
const SELECTOR: &str = "app.kubernetes.io/name=keystone,app.kubernetes.io/component=api";
/// How often a Keystone is looked at again without a change.
const RESYNC: Duration = Duration::from_secs(10);

/// Why one Keystone could not be registered (retried).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RegisterError {
    #[error("Keystone {namespace}/{name}: cannot start its stand-in: {source}")]
    Listen {
        namespace: String,
        name: String,
        #[source]
        source: std::io::Error,
    },
    #[error("Keystone {namespace}/{name}: cannot {action}: {source}")]
    Kube {
        namespace: String,
        name: String,
        action: &'static str,
        #[source]
        source: kube::Error,
    },
}

struct Context {
    client: kube::Client,
    keystones: Arc<Keystones>,
}

/// Runs until the server stops.
pub(crate) async fn run(client: kube::Client, keystones: Arc<Keystones>) {
    let context = Arc::new(Context {
        client: client.clone(),
        keystones,
    });
    Controller::new(
        Api::<Deployment>::all(client.clone()),
        watcher::Config::default().labels(SELECTOR),
    )
    .watches(
        Api::<Service>::all(client.clone()),
        watcher::Config::default(),
        |service| Some(ObjectRef::new(&service.name_any()).within(&service.namespace()?)),
    )
    .watches(Api::<Job>::all(client), watcher::Config::default(), |job| {
        let name = job.name_any();
        let keystone = name.strip_suffix("-bootstrap")?;
        Some(ObjectRef::new(keystone).within(&job.namespace()?))
    })
    .run(reconcile, retry, context)
    .for_each(|_| async {})
    .await;
}

fn retry(_: Arc<Deployment>, error: &RegisterError, _: Arc<Context>) -> Action {
    tracing::warn!(%error, "Keystone stand-in registration failed; retrying");
    Action::requeue(Duration::from_secs(2))
}

async fn reconcile(
    deployment: Arc<Deployment>,
    context: Arc<Context>,
) -> Result<Action, RegisterError> {
    let namespace = deployment.namespace().unwrap_or_default();
    let name = deployment.name_any();
    let kube = |action: &'static str| {
        let (namespace, name) = (namespace.clone(), name.clone());
        move |source| RegisterError::Kube {
            namespace,
            name,
            action,
            source,
        }
    };
    let instance = context
        .keystones
        .instance(&namespace, &name)
        .await
        .map_err(|source| RegisterError::Listen {
            namespace: namespace.clone(),
            name: name.clone(),
            source,
        })?;
    let unavailable = deployment
        .annotations()
        .get(UNAVAILABLE_ANNOTATION)
        .is_some_and(|v| v == "true");
    instance.unavailable.store(unavailable, Ordering::Relaxed);
    let client = &context.client;
    let job = Api::<Job>::namespaced(client.clone(), &namespace)
        .get_opt(&format!("{name}-bootstrap"))
        .await
        .map_err(kube("read the bootstrap Job"))?;
    if let Some(job) = job {
        bootstrap(client, &namespace, &name, &job, &instance)
            .await
            .map_err(kube("read the admin password Secret"))?;
        *instance
            .observed_bootstrap
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = job.uid();
    }
    let service = Api::<Service>::namespaced(client.clone(), &namespace)
        .get_opt(&name)
        .await
        .map_err(kube("read the Service"))?;
    if let Some(service) = service {
        let available = available(&deployment);
        let ports: Vec<_> = service
            .spec
            .iter()
            .flat_map(|s| s.ports.iter().flatten())
            .map(|p| {
                json!({"name": p.name.clone().unwrap_or_default(), "port": instance.addr.port(),
                       "protocol": p.protocol.clone().unwrap_or_else(|| "TCP".into())})
            })
            .collect();
        let slice = json!({
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {
                "name": format!("{name}-stand-in"),
                "namespace": namespace,
                "labels": {
                    "kubernetes.io/service-name": name,
                    "endpointslice.kubernetes.io/managed-by": ENDPOINT_MANAGER,
                },
                "ownerReferences": [{
                    "apiVersion": "v1", "kind": "Service", "name": name,
                    "uid": service.uid().unwrap_or_default(),
                    "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "addressType": "IPv4",
            "endpoints": [{
                "addresses": ["127.0.0.1"],
                "conditions": {"ready": available, "serving": available, "terminating": false},
            }],
            "ports": ports,
        });
        Api::<EndpointSlice>::namespaced(client.clone(), &namespace)
            .patch(
                &format!("{name}-stand-in"),
                &PatchParams::apply(ENDPOINT_MANAGER).force(),
                &Patch::Apply(&slice),
            )
            .await
            .map_err(kube("apply the EndpointSlice"))?;
    }
    Ok(Action::requeue(RESYNC))
}

/// `availableReplicas` ≥ 1 and `Available=True`.
fn available(deployment: &Deployment) -> bool {
    let Some(status) = &deployment.status else {
        return false;
    };
    status.available_replicas.unwrap_or(0) >= 1
        && status
            .conditions
            .iter()
            .flatten()
            .any(|c| c.type_.as_deref() == Some("Available") && c.status.as_deref() == Some("True"))
}

/// Takes the admin password and endpoint from a bootstrap Job that completed (once per Job).
async fn bootstrap(
    client: &kube::Client,
    namespace: &str,
    name: &str,
    job: &Job,
    instance: &Instance,
) -> Result<(), kube::Error> {
    let complete = job
        .status
        .iter()
        .flat_map(|s| s.conditions.iter().flatten())
        .any(|c| c.type_ == "Complete" && c.status == "True");
    let uid = job.uid();
    if !complete
        || *instance
            .bootstrapped_by
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            == uid
    {
        return Ok(());
    }
    let env: Vec<_> = job
        .spec
        .iter()
        .filter_map(|s| s.template.spec.as_ref())
        .flat_map(|p| p.containers.iter())
        .flat_map(|c| c.env.iter().flatten())
        .cloned()
        .collect();
    let var = |n: &str| env.iter().find(|e| e.name == n);
    let literal = |n: &str| var(n).and_then(|e| e.value.clone());
    let password = match var("BOOTSTRAP_PASSWORD") {
        Some(e) if e.value.is_some() => e.value.clone(),
        Some(e) => match e
            .value_from
            .as_ref()
            .and_then(|v| v.secret_key_ref.as_ref())
        {
            Some(selector) => Api::<Secret>::namespaced(client.clone(), namespace)
                .get_opt(&selector.name)
                .await?
                .and_then(|s| s.data)
                .and_then(|d| d.get(&selector.key).cloned())
                .and_then(|b| String::from_utf8(b.0).ok()),
            None => None,
        },
        None => None,
    };
    let Some(password) = password.filter(|p| !p.is_empty()) else {
        tracing::warn!(
            namespace,
            keystone = name,
            "the bootstrap Job completed without a readable BOOTSTRAP_PASSWORD; the admin keeps no password"
        );
        return Ok(());
    };
    let mut identity = instance.lock();
    identity.set_admin_password(&password);
    if let Some(url) = literal("BOOTSTRAP_INTERNAL_URL") {
        let region = literal("BOOTSTRAP_REGION_ID").unwrap_or_else(|| "RegionOne".into());
        identity.endpoint = Some((url, region));
    }
    drop(identity);
    *instance
        .bootstrapped_by
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = uid;
    tracing::info!(
        namespace,
        keystone = name,
        "Keystone stand-in bootstrapped (admin password set)"
    );
    Ok(())
}
