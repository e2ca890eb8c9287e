//! The cluster of a kube-rs client: a real cluster, or the embedded API server.
//!
//! Every call is one API request (the shared watch caches of the controller runtime sit in
//! front of this backend). Kinds are resolved once through discovery and cached. Applies are
//! server-side applies under the caller's field manager with force, retried on conflict a
//! bounded number of times; events go through kube's recorder, one per plugin, which
//! aggregates repeats into a series, under a reporting controller the host names and a
//! rate bucket per plugin. HTTP failures become the WIT error cases with the
//! server's message.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};

use crate::cluster::raw::RawObject;
use async_trait::async_trait;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{
    Api, ApiResource, DeleteParams, GroupVersionKind, ListParams, Patch as KubePatch, PatchParams,
    PostParams,
};
use kube::runtime::events::{Event as KubeEvent, EventType as KubeEventType, Recorder, Reporter};
use serde_json::{Value, json};
use wasm_operator_types::{
    ApiError, DeleteOptions, Event, EventType, KindRef, ListOptions, ObjectRef, Owner, Patch,
    Propagation, ReadFrom,
};

use super::discovery::{Discovery, ServedKind};
use crate::metrics::Metrics;
use wasm_operator_runtime::backend::{Caller, ClusterBackend, HOST_IDENTITY};

/// How many times an apply is retried on a conflict.
pub(crate) const APPLY_RETRIES: usize = 3;

/// A client-side limit on API requests: a token bucket of `burst` refilled at `qps` per
/// second (client-go's QPS and Burst).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    pub qps: u32,
    pub burst: u32,
}

impl Default for RateLimit {
    /// 50 requests per second with bursts of 100.
    fn default() -> Self {
        Self {
            qps: 50,
            burst: 100,
        }
    }
}

/// One plugin's event recorder and its rate bucket.
struct PluginEvents {
    recorder: Recorder,
    bucket: DefaultDirectRateLimiter,
}

/// Events a plugin may record in a burst, then [`EVENTS_PER_SECOND`]; the rest are dropped
/// (counted as `event` requests with code 429), as client-go's recorder drops what its
/// spam filter refuses: a plugin's flood costs neither the API server nor other plugins.
pub(crate) const EVENT_BURST: u32 = 100;
/// Events a plugin may record per second after its burst.
pub(crate) const EVENTS_PER_SECOND: u32 = 10;

/// The reporting controller of a plugin's events: set by the host, so a plugin cannot
/// pose as another controller.
pub(crate) fn reporting_controller(plugin: &str) -> String {
    if plugin == HOST_IDENTITY {
        HOST_IDENTITY.to_owned()
    } else {
        format!("{HOST_IDENTITY}/{plugin}")
    }
}

/// A cluster served by a kube-rs client.
pub struct KubeCluster {
    client: kube::Client,
    discovery: Arc<Discovery>,
    recorders: Mutex<HashMap<String, Arc<PluginEvents>>>,
    limiter: Option<DefaultDirectRateLimiter>,
    metrics: Option<Arc<Metrics>>,
}

impl KubeCluster {
    /// The cluster of `client`, with no client-side rate limit and no metrics.
    pub fn new(client: kube::Client) -> Self {
        Self {
            discovery: Arc::new(Discovery::new(client.clone())),
            client,
            recorders: Mutex::default(),
            limiter: None,
            metrics: None,
        }
    }

    /// Limits the requests made for plugins to `limit` (`None`: unlimited).
    pub fn with_rate_limit(mut self, limit: Option<RateLimit>) -> Self {
        self.limiter = limit.and_then(|l| {
            let qps = NonZeroU32::new(l.qps)?;
            let burst = NonZeroU32::new(l.burst).unwrap_or(qps);
            Some(RateLimiter::direct(
                Quota::per_second(qps).allow_burst(burst),
            ))
        });
        self
    }

    /// Counts every request in `metrics`.
    pub fn with_metrics(mut self, metrics: Arc<Metrics>) -> Self {
        self.metrics = Some(metrics);
        self
    }

    /// Runs one API request: waits for the rate limit, then counts it by verb, kind and
    /// response code.
    async fn request<T>(
        &self,
        verb: &'static str,
        kind: &str,
        call: impl Future<Output = Result<T, kube::Error>>,
    ) -> Result<T, kube::Error> {
        if let Some(limiter) = &self.limiter {
            limiter.until_ready().await;
        }
        let result = call.await;
        if let Some(metrics) = &self.metrics {
            let code = match &result {
                Ok(_) => 200,
                Err(kube::Error::Api(status)) => status.code,
                Err(_) => 0,
            };
            metrics.api_request(verb, kind, code);
        }
        result
    }

    /// The discovery cache this cluster resolves kinds through.
    pub(crate) fn discovery(&self) -> Arc<Discovery> {
        self.discovery.clone()
    }

    /// The API of one object of `api_version`/`kind` in `namespace` (none for a
    /// cluster-scoped kind). A kind the cluster does not serve is `not-served`; a namespace
    /// that does not fit the served scope is refused before any request.
    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<Api<RawObject>, ApiError> {
        let served = self.served_kind(api_version, kind).await?;
        match (served.namespaced, namespace) {
            (false, Some(ns)) => Err(ApiError::Forbidden(format!(
                "{api_version}/{kind} is cluster-scoped, but the call names namespace {ns:?}"
            ))),
            (true, None) => Err(ApiError::Invalid(format!(
                "{api_version}/{kind} is namespaced: the object must name its namespace"
            ))),
            (_, namespace) => Ok(self.api_in(api_version, kind, &served, namespace)),
        }
    }

    /// The API of a list of `kind` in `namespace` (every namespace with none). The declared
    /// scope must be the served one: a plugin declaring a namespaced kind cluster-scoped
    /// would otherwise list it in every namespace.
    async fn list_api(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
    ) -> Result<Api<RawObject>, ApiError> {
        let served = self.served_kind(&kind.api_version, &kind.kind).await?;
        if served.namespaced != kind.namespaced || served.plural != kind.plural {
            return Err(ApiError::Forbidden(format!(
                "{kind} is served as {:?} ({}), not as declared",
                served.plural,
                scope(served.namespaced)
            )));
        }
        if !served.namespaced && namespace.is_some() {
            return Err(ApiError::Forbidden(format!(
                "{kind} is cluster-scoped, but the list names a namespace"
            )));
        }
        Ok(self.api_in(&kind.api_version, &kind.kind, &served, namespace))
    }

    async fn served_kind(&self, api_version: &str, kind: &str) -> Result<ServedKind, ApiError> {
        self.discovery
            .kind(api_version, kind)
            .await?
            .ok_or_else(|| {
                ApiError::NotServed(format!(
                    "the API server does not serve {api_version}/{kind}"
                ))
            })
    }

    fn api_in(
        &self,
        api_version: &str,
        kind: &str,
        served: &ServedKind,
        namespace: Option<&str>,
    ) -> Api<RawObject> {
        let (group, version) = wasm_operator_types::split_api_version(api_version);
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let resource = ApiResource::from_gvk_with_plural(&gvk, &served.plural);
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &resource),
            None => Api::all_with(self.client.clone(), &resource),
        }
    }
}

fn scope(namespaced: bool) -> &'static str {
    if namespaced {
        "namespaced"
    } else {
        "cluster-scoped"
    }
}

/// The WIT error case of a kube-rs error, with the server's message.
pub(crate) fn to_api_error(error: kube::Error) -> ApiError {
    match error {
        kube::Error::Api(status) => ApiError::from_status(status.code, status.message),
        other => ApiError::Unavailable(other.to_string()),
    }
}

/// The server's object as JSON; an object whose metadata does not decode is passed on as
/// it is (the reader decides), never logged.
fn to_value(object: RawObject) -> Result<Value, ApiError> {
    Ok(object.into_value())
}

/// A body the plugin sends, refused when its metadata does not decode.
fn from_value(object: &Value) -> Result<RawObject, ApiError> {
    if !object.is_object() {
        return Err(ApiError::Invalid(
            "not a Kubernetes object: not a JSON object".into(),
        ));
    }
    let raw = RawObject::from(object.clone());
    match raw.malformed() {
        Some(why) => Err(ApiError::Invalid(format!("not a Kubernetes object: {why}"))),
        None => Ok(raw),
    }
}

#[async_trait]
impl ClusterBackend for KubeCluster {
    async fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        match self.discovery.kind(&kind.api_version, &kind.kind).await? {
            None => Ok(false),
            Some(served)
                if served.plural == kind.plural && served.namespaced == kind.namespaced =>
            {
                Ok(true)
            }
            Some(served) => Err(ApiError::Invalid(format!(
                "{kind} is served as {:?} ({}), not as declared ({:?}, {})",
                served.plural,
                scope(served.namespaced),
                kind.plural,
                scope(kind.namespaced)
            ))),
        }
    }

    async fn get(&self, object: &ObjectRef, _from: ReadFrom) -> Result<Option<Value>, ApiError> {
        let api = self
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        self.request("get", &object.kind, api.get_opt(&object.name))
            .await
            .map_err(to_api_error)?
            .map(to_value)
            .transpose()
    }

    async fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        if let Some((index, _)) = &options.field_index {
            return Err(ApiError::Other(format!(
                "field index {index}: field indexes are answered by the controller's cache"
            )));
        }
        let api = self.list_api(kind, namespace).await?;
        let mut params = ListParams::default();
        if let Some(selector) = &options.label_selector {
            params = params.labels(selector);
        }
        let list = self
            .request("list", &kind.kind, api.list(&params))
            .await
            .map_err(to_api_error)?;
        list.items.into_iter().map(to_value).collect()
    }

    async fn apply(
        &self,
        caller: &Caller,
        mut object: Value,
        owner: Option<&Owner>,
    ) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(&object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        if let (Some(owner), Some(meta)) = (owner, object.get_mut("metadata")) {
            meta["ownerReferences"] = json!([{"apiVersion": owner.api_version, "kind": owner.kind, "name": owner.name,
                "uid": owner.uid, "controller": true, "blockOwnerDeletion": true}]);
        }
        let api = self
            .api(&r.api_version, &r.kind, r.namespace.as_deref())
            .await?;
        let params = PatchParams::apply(&caller.field_manager).force();
        let mut attempt = 0;
        loop {
            match self
                .request(
                    "apply",
                    &r.kind,
                    api.patch(&r.name, &params, &KubePatch::Apply(&object)),
                )
                .await
            {
                Ok(stored) => return to_value(stored),
                Err(kube::Error::Api(status)) if status.code == 409 && attempt < APPLY_RETRIES => {
                    attempt += 1
                }
                Err(e) => return Err(to_api_error(e)),
            }
        }
    }

    async fn create(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(&object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        let api = self
            .api(&r.api_version, &r.kind, r.namespace.as_deref())
            .await?;
        let body = from_value(&object)?;
        let stored = self
            .request("create", &r.kind, api.create(&PostParams::default(), &body))
            .await
            .map_err(to_api_error)?;
        to_value(stored)
    }

    async fn patch(
        &self,
        caller: &Caller,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        let api = self
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        let params = PatchParams {
            field_manager: Some(caller.field_manager.clone()),
            ..PatchParams::default()
        };
        let stored = match patch {
            Patch::Merge(body) => {
                let mut body = body.clone();
                if let Some(rv) = resource_version {
                    json_patch::merge(&mut body, &json!({"metadata": {"resourceVersion": rv}}));
                }
                self.request(
                    "patch",
                    &object.kind,
                    api.patch(&object.name, &params, &KubePatch::Merge(&body)),
                )
                .await
            }
            Patch::Json(body) => {
                let mut ops = body.as_array().cloned().unwrap_or_default();
                if let Some(rv) = resource_version {
                    ops.insert(
                        0,
                        json!({"op": "add", "path": "/metadata/resourceVersion", "value": rv}),
                    );
                }
                let ops: json_patch::Patch = serde_json::from_value(Value::Array(ops))
                    .map_err(|e| ApiError::Invalid(format!("not a JSON patch: {e}")))?;
                self.request(
                    "patch",
                    &object.kind,
                    api.patch(&object.name, &params, &KubePatch::Json::<()>(ops)),
                )
                .await
            }
        };
        to_value(stored.map_err(to_api_error)?)
    }

    async fn delete(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        let api = self
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        let mut params = match options.propagation {
            Propagation::Background => DeleteParams::background(),
            Propagation::Foreground => DeleteParams::foreground(),
            Propagation::Orphan => DeleteParams::orphan(),
        };
        if !options.preconditions.is_empty() {
            params.preconditions = Some(kube::api::Preconditions {
                uid: options.preconditions.uid.clone(),
                resource_version: options.preconditions.resource_version.clone(),
            });
        }
        self.request("delete", &object.kind, api.delete(&object.name, &params))
            .await
            .map_err(to_api_error)?;
        Ok(())
    }

    async fn create_subresource(
        &self,
        _caller: &Caller,
        object: &ObjectRef,
        subresource: &str,
        body: Value,
    ) -> Result<Value, ApiError> {
        let api = self
            .api(
                &object.api_version,
                &object.kind,
                object.namespace.as_deref(),
            )
            .await?;
        self.request(
            "create",
            &object.kind,
            api.create_subresource::<Value, Value>(
                subresource,
                &object.name,
                &PostParams::default(),
                &body,
            ),
        )
        .await
        .map_err(to_api_error)
    }

    async fn update_status(&self, _caller: &Caller, object: Value) -> Result<Value, ApiError> {
        let r = ObjectRef::from_object(&object).map_err(|e| ApiError::Invalid(e.to_string()))?;
        let api = self
            .api(&r.api_version, &r.kind, r.namespace.as_deref())
            .await?;
        let body = from_value(&object)?;
        let stored = self
            .request(
                "update-status",
                &r.kind,
                api.replace_status(&r.name, &PostParams::default(), &body),
            )
            .await
            .map_err(to_api_error)?;
        to_value(stored)
    }

    async fn record_event(
        &self,
        caller: &Caller,
        regarding: &ObjectRef,
        event: &Event,
    ) -> Result<(), ApiError> {
        let events = {
            let mut recorders = self
                .recorders
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            recorders
                .entry(caller.plugin.clone())
                .or_insert_with(|| {
                    let burst = NonZeroU32::new(EVENT_BURST).unwrap_or(NonZeroU32::MIN);
                    let rate = NonZeroU32::new(EVENTS_PER_SECOND).unwrap_or(NonZeroU32::MIN);
                    Arc::new(PluginEvents {
                        recorder: Recorder::new(
                            self.client.clone(),
                            Reporter {
                                controller: reporting_controller(&caller.plugin),
                                instance: std::env::var("POD_NAME").ok(),
                            },
                        ),
                        bucket: RateLimiter::direct(Quota::per_second(rate).allow_burst(burst)),
                    })
                })
                .clone()
        };
        if events.bucket.check().is_err() {
            if let Some(metrics) = &self.metrics {
                metrics.api_request("event", "Event", 429);
            }
            tracing::debug!(plugin = caller.plugin, regarding = %regarding, reason = event.reason, "event dropped: the plugin's event rate is exhausted");
            return Ok(());
        }
        let reference = ObjectReference {
            api_version: Some(regarding.api_version.clone()),
            kind: Some(regarding.kind.clone()),
            name: Some(regarding.name.clone()),
            namespace: regarding.namespace.clone(),
            ..ObjectReference::default()
        };
        let event = KubeEvent {
            type_: match event.event_type {
                EventType::Normal => KubeEventType::Normal,
                EventType::Warning => KubeEventType::Warning,
            },
            reason: event.reason.clone(),
            // The note may be a guest's text: escaped, and within the Event note's 1 KiB.
            note: Some(wasm_operator_runtime::text::escape(
                &event.note,
                wasm_operator_runtime::GUEST_TEXT_MAX,
            )),
            action: event.action.clone(),
            secondary: None,
        };
        self.request(
            "event",
            "Event",
            events.recorder.publish(&event, &reference),
        )
        .await
        .map_err(to_api_error)
    }
}

#[cfg(all(test, feature = "demo"))]
mod tests {
    use super::*;
    use wasm_operator_apiserver::{ApiServer, ServerConfig};

    fn caller(plugin: &str) -> Caller {
        Caller {
            plugin: plugin.into(),
            field_manager: plugin.into(),
        }
    }

    fn event(n: usize) -> Event {
        Event {
            event_type: EventType::Normal,
            // Distinct reasons: kube's recorder folds repeats of one reason into a series.
            reason: format!("Flood{n}"),
            action: "Test".into(),
            note: format!("event {n}"),
        }
    }

    #[tokio::test]
    async fn a_plugins_event_flood_is_dropped_past_its_own_bucket_and_others_still_record() {
        let server = ApiServer::start(ServerConfig::default())
            .await
            .expect("the API server starts");
        let metrics = Arc::new(Metrics::new());
        let cluster =
            KubeCluster::new(server.client().expect("a client")).with_metrics(metrics.clone());
        let namespace =
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
        cluster
            .create(&caller("setup"), namespace)
            .await
            .expect("namespace");
        let regarding = ObjectRef {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("ns".into()),
            name: "cm".into(),
        };
        let flood = usize::try_from(EVENT_BURST).expect("small") + 20;
        for n in 0..flood {
            cluster
                .record_event(&caller("noisy"), &regarding, &event(n))
                .await
                .expect("a dropped event is not an error");
        }
        cluster
            .record_event(&caller("quiet"), &regarding, &event(0))
            .await
            .expect("another plugin's event");
        let kind = KindRef {
            api_version: "events.k8s.io/v1".into(),
            kind: "Event".into(),
            plural: "events".into(),
            namespaced: true,
        };
        let events = cluster
            .list(&kind, Some("ns"), &ListOptions::default())
            .await
            .expect("events");
        let by = |controller: &str| {
            events
                .iter()
                .filter(|e| e["reportingController"] == controller)
                .count()
        };
        // The bucket refills at 10/s while the flood runs: at least the burst landed, and
        // at most what a second of refill adds to it.
        let noisy = by("wasm-operator/noisy");
        let burst = usize::try_from(EVENT_BURST).expect("small");
        assert!(
            (burst..flood).contains(&noisy),
            "{noisy} of {flood} recorded"
        );
        assert_eq!(by("wasm-operator/quiet"), 1);
        let dropped = flood - noisy;
        assert!(
            metrics.render().contains(&format!(
                "verb=\"event\",kind=\"Event\",code=\"429\"}} {dropped}"
            )),
            "{dropped} dropped:\n{}",
            metrics.render()
        );
    }

    fn kind(api_version: &str, kind: &str, plural: &str, namespaced: bool) -> KindRef {
        KindRef {
            api_version: api_version.into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced,
        }
    }

    #[tokio::test]
    async fn a_kind_the_cluster_does_not_serve_is_not_served_and_a_mismatched_scope_is_refused() {
        let server = ApiServer::start(ServerConfig::default())
            .await
            .expect("the API server starts");
        let cluster = KubeCluster::new(server.client().expect("a client"));
        let widget = kind("example.com/v1", "Widget", "widgets", true);
        let config_maps = kind("v1", "ConfigMap", "configmaps", true);
        let widget_ref = ObjectRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            namespace: Some("ns".into()),
            name: "w".into(),
        };

        assert_eq!(cluster.served(&config_maps).await, Ok(true));
        assert_eq!(cluster.served(&widget).await, Ok(false));
        assert!(
            matches!(
                cluster.served(&kind("v1", "ConfigMap", "secrets", true)).await,
                Err(ApiError::Invalid(m)) if m.contains("is served as \"configmaps\"")
            ),
            "a kind probed with another plural is told apart from one not served"
        );
        assert!(matches!(
            cluster.get(&widget_ref, ReadFrom::Server).await,
            Err(ApiError::NotServed(m)) if m == "the API server does not serve example.com/v1/Widget"
        ));
        assert!(matches!(
            cluster
                .list(&widget, Some("ns"), &ListOptions::default())
                .await,
            Err(ApiError::NotServed(_))
        ));
        // A namespaced kind declared cluster-scoped would list every namespace.
        assert!(matches!(
            cluster
                .list(&kind("v1", "ConfigMap", "configmaps", false), None, &ListOptions::default())
                .await,
            Err(ApiError::Forbidden(m)) if m.contains("not as declared")
        ));
        // A cluster-scoped kind with a namespace is another resource than the one served.
        let namespace_in_ns = ObjectRef {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: Some("ns".into()),
            name: "default".into(),
        };
        assert!(matches!(
            cluster.get(&namespace_in_ns, ReadFrom::Server).await,
            Err(ApiError::Forbidden(m)) if m.contains("is cluster-scoped, but the call names namespace")
        ));
        assert!(
            cluster
                .list(&config_maps, Some("default"), &ListOptions::default())
                .await
                .is_ok(),
            "the valid row"
        );
    }
}
