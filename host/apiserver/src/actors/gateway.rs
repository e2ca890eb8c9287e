//! The Gateway API actor: an implementation of `gateway.networking.k8s.io/v1` that
//! programs nothing but reports what a controller would.
//!
//! On start it installs the GatewayClass, Gateway and HTTPRoute CRDs
//! (`crds/external/gateway-api.yaml`). It takes every Gateway as its own (no GatewayClass is
//! needed): a Gateway gets `Accepted` and `Programmed` True. A GatewayClass naming
//! [`CONTROLLER_NAME`] gets `Accepted` True. Each HTTPRoute gets one `status.parents[]` entry
//! per parentRef of kind Gateway, with [`CONTROLLER_NAME`], the parentRef as written and:
//! - `Accepted`: True (`Accepted`) when the Gateway exists (and has the listener a
//!   `sectionName` names), else False (`NoMatchingParent`);
//! - `ResolvedRefs`: True (`ResolvedRefs`) when every backendRef's Service exists, else
//!   False (`BackendNotFound`).
//!
//! Routes are re-evaluated whenever a Gateway, Service or HTTPRoute changes. Parent entries
//! of other controllers are kept.

use std::sync::Arc;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::Service;
use kube::ResourceExt as _;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{WatchStreamExt as _, watcher};
use serde_json::{Value, json};
use tokio::sync::Notify;
use tokio::task::JoinHandle;

use super::workloads::{condition, conditions_of};
use super::{Actor, ActorContext, ActorError, Started};

/// The `controllerName` the actor reports in route status (and accepts GatewayClasses of).
pub const CONTROLLER_NAME: &str = "actors.wasm-operator.dev/gateway-controller";

/// The field manager of the actor's status writes.
const MANAGER: &str = "gateway-api-controller";

/// The field manager the CRDs are installed under.
const INSTALLER: &str = "wasm-operator-apiserver";

const CRDS: &str = include_str!("../../../../crds/external/gateway-api.yaml");

const GROUP: &str = "gateway.networking.k8s.io";

/// Why a status write failed (logged; the next event tries again).
#[derive(Debug, thiserror::Error)]
#[error("{kind} {object}: cannot write status: {source}")]
struct StatusError {
    kind: &'static str,
    object: String,
    #[source]
    source: kube::Error,
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    let client = ctx.client;
    super::kit::install_crds(&client, Actor::Gateway, INSTALLER, CRDS).await?;
    let wake = Arc::new(Notify::new());
    let kind = |k: &str| ApiResource::from_gvk(&GroupVersionKind::gvk(GROUP, "v1", k));
    let (classes, t1) = watch(&client, kind("GatewayClass"), &wake);
    let (gateways, t2) = watch(&client, kind("Gateway"), &wake);
    let (routes, t3) = watch(&client, kind("HTTPRoute"), &wake);
    let (services, t4) = watch_services(&client, &wake);
    let worker = tokio::spawn(async move {
        loop {
            wake.notified().await;
            let writes = Writes { client: &client };
            for class in classes.state() {
                writes.class(&class).await;
            }
            for gateway in gateways.state() {
                writes.gateway(&gateway).await;
            }
            for route in routes.state() {
                writes.route(&route, &gateways, &services).await;
            }
        }
    });
    Ok(Started {
        tasks: vec![t1, t2, t3, t4, worker],
        handle: None,
    })
}

/// A reflector of every object of `ar`; each event wakes the worker.
fn watch(
    client: &kube::Client,
    ar: ApiResource,
    wake: &Arc<Notify>,
) -> (Store<DynamicObject>, JoinHandle<()>) {
    let writer = reflector::store::Writer::new(ar.clone());
    let reader = writer.as_reader();
    let api = Api::<DynamicObject>::all_with(client.clone(), &ar);
    let wake = wake.clone();
    let task = tokio::spawn(async move {
        let stream = reflector::reflector(writer, watcher(api, watcher::Config::default()))
            .default_backoff();
        futures::pin_mut!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => wake.notify_one(),
                Err(e) => {
                    tracing::warn!(kind = %ar.kind, error = %e, "gateway actor: watch failed")
                }
            }
        }
    });
    (reader, task)
}

/// A reflector of every Service (for backendRefs).
fn watch_services(client: &kube::Client, wake: &Arc<Notify>) -> (Store<Service>, JoinHandle<()>) {
    let (reader, writer) = reflector::store();
    let api = Api::<Service>::all(client.clone());
    let wake = wake.clone();
    let task = tokio::spawn(async move {
        let stream = reflector::reflector(writer, watcher(api, watcher::Config::default()))
            .default_backoff();
        futures::pin_mut!(stream);
        while let Some(event) = stream.next().await {
            match event {
                Ok(_) => wake.notify_one(),
                Err(e) => tracing::warn!(error = %e, "gateway actor: Service watch failed"),
            }
        }
    });
    (reader, task)
}

struct Writes<'a> {
    client: &'a kube::Client,
}

impl Writes<'_> {
    /// `Accepted` on a GatewayClass of [`CONTROLLER_NAME`].
    async fn class(&self, class: &DynamicObject) {
        if class.data["spec"]["controllerName"] != CONTROLLER_NAME {
            return;
        }
        let previous = conditions_of(class.data.get("status"));
        let generation = class.metadata.generation;
        let want = json!({"conditions": [with_generation(
            condition(&previous, "Accepted", true, "Accepted", "GatewayClass is accepted", false), generation)]});
        self.write("GatewayClass", class, want).await;
    }

    /// `Accepted` and `Programmed` on a Gateway.
    async fn gateway(&self, gateway: &DynamicObject) {
        let previous = conditions_of(gateway.data.get("status"));
        let generation = gateway.metadata.generation;
        let want = json!({"conditions": [
            with_generation(condition(&previous, "Accepted", true, "Accepted", "Gateway is accepted", false), generation),
            with_generation(condition(&previous, "Programmed", true, "Programmed", "Gateway is programmed", false), generation),
        ]});
        self.write("Gateway", gateway, want).await;
    }

    /// One parent status per Gateway parentRef of `route` (other controllers' kept).
    async fn route(
        &self,
        route: &DynamicObject,
        gateways: &Store<DynamicObject>,
        services: &Store<Service>,
    ) {
        let Some(ns) = route.namespace() else { return };
        let status = route.data.get("status");
        let old_parents = status
            .and_then(|s| s.get("parents"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let generation = route.metadata.generation;
        let resolved = backends_resolved(route, &ns, services);
        let mut parents: Vec<Value> = old_parents
            .iter()
            .filter(|p| p["controllerName"] != CONTROLLER_NAME)
            .cloned()
            .collect();
        let refs = route.data["spec"]["parentRefs"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for parent_ref in refs {
            let group = parent_ref["group"].as_str().unwrap_or(GROUP);
            let kind = parent_ref["kind"].as_str().unwrap_or("Gateway");
            if group != GROUP || kind != "Gateway" {
                continue;
            }
            let previous = old_parents
                .iter()
                .find(|p| p["controllerName"] == CONTROLLER_NAME && p["parentRef"] == parent_ref)
                .map(|p| conditions_of(Some(p)))
                .unwrap_or_default();
            let accepted = match accepts(&parent_ref, &ns, gateways) {
                Ok(()) => condition(
                    &previous,
                    "Accepted",
                    true,
                    "Accepted",
                    "Route is accepted",
                    false,
                ),
                Err(why) => condition(
                    &previous,
                    "Accepted",
                    false,
                    "NoMatchingParent",
                    &why,
                    false,
                ),
            };
            let refs = match &resolved {
                Ok(()) => condition(
                    &previous,
                    "ResolvedRefs",
                    true,
                    "ResolvedRefs",
                    "All references resolved",
                    false,
                ),
                Err(why) => condition(
                    &previous,
                    "ResolvedRefs",
                    false,
                    "BackendNotFound",
                    why,
                    false,
                ),
            };
            parents.push(json!({
                "parentRef": parent_ref,
                "controllerName": CONTROLLER_NAME,
                "conditions": [with_generation(accepted, generation), with_generation(refs, generation)],
            }));
        }
        self.write("HTTPRoute", route, json!({"parents": parents}))
            .await;
    }

    /// Merges `want` into the object's status when it differs.
    async fn write(&self, kind: &'static str, object: &DynamicObject, want: Value) {
        let current = object.data.get("status");
        let same = want.as_object().is_some_and(|w| {
            w.iter()
                .all(|(k, v)| current.and_then(|c| c.get(k)) == Some(v))
        });
        if same {
            return;
        }
        let ar = ApiResource::from_gvk(&GroupVersionKind::gvk(GROUP, "v1", kind));
        let api = match object.namespace() {
            Some(ns) => Api::<DynamicObject>::namespaced_with(self.client.clone(), &ns, &ar),
            None => Api::<DynamicObject>::all_with(self.client.clone(), &ar),
        };
        let params = PatchParams {
            field_manager: Some(MANAGER.to_owned()),
            ..PatchParams::default()
        };
        let name = object.name_any();
        if let Err(source) = api
            .patch_status(&name, &params, &Patch::Merge(json!({"status": want})))
            .await
        {
            let object = match object.namespace() {
                Some(ns) => format!("{ns}/{name}"),
                None => name,
            };
            let e = StatusError {
                kind,
                object,
                source,
            };
            tracing::warn!(error = %e, "gateway actor: a status write failed");
        }
    }
}

/// Whether the Gateway `parent_ref` names (from a route in `ns`) exists and has the
/// listener its `sectionName` names; why not otherwise.
fn accepts(parent_ref: &Value, ns: &str, gateways: &Store<DynamicObject>) -> Result<(), String> {
    let name = parent_ref["name"].as_str().unwrap_or_default();
    let gw_ns = parent_ref["namespace"].as_str().unwrap_or(ns);
    let gateway = gateways
        .state()
        .into_iter()
        .find(|g| {
            g.namespace().as_deref() == Some(gw_ns)
                && g.name_any() == name
                && g.metadata.deletion_timestamp.is_none()
        })
        .ok_or_else(|| format!("Gateway {gw_ns}/{name} not found"))?;
    if let Some(section) = parent_ref["sectionName"].as_str() {
        let listeners = gateway.data["spec"]["listeners"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !listeners.iter().any(|l| l["name"] == section) {
            return Err(format!(
                "Gateway {gw_ns}/{name} has no listener {section:?}"
            ));
        }
    }
    Ok(())
}

/// Whether every Service backendRef of `route` names an existing Service; which not.
fn backends_resolved(
    route: &DynamicObject,
    ns: &str,
    services: &Store<Service>,
) -> Result<(), String> {
    let rules = route.data["spec"]["rules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let missing: Vec<String> = rules
        .iter()
        .flat_map(|r| r["backendRefs"].as_array().cloned().unwrap_or_default())
        .filter(|b| {
            b["group"].as_str().unwrap_or("").is_empty()
                && b["kind"].as_str().unwrap_or("Service") == "Service"
        })
        .filter_map(|b| {
            let name = b["name"].as_str().unwrap_or_default().to_owned();
            let svc_ns = b["namespace"].as_str().unwrap_or(ns).to_owned();
            let found = services
                .state()
                .iter()
                .any(|s| s.namespace().as_deref() == Some(&svc_ns) && s.name_any() == name);
            (!found).then(|| format!("{svc_ns}/{name}"))
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("Service {} not found", missing.join(", ")))
    }
}

fn with_generation(mut condition: Value, generation: Option<i64>) -> Value {
    if let Some(g) = generation {
        condition["observedGeneration"] = json!(g);
    }
    condition
}
