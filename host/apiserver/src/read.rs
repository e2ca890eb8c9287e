//! Reads: get, list (selectors, limit/continue) and watch (resourceVersion, bookmarks,
//! 410 Gone).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use base64::Engine as _;
use futures::StreamExt as _;
use serde_json::{Value, json};
use tokio_stream::wrappers::BroadcastStream;

use crate::objects::{key_for, served};
use crate::route::{Params, Target};
use crate::selector::{FieldSelector, LabelSelector, parse_label_selector};
use crate::server::Shared;
use crate::status::{ApiError, Result};
use crate::store::{Change, EventType, StoreKey};
use crate::table::TableRequest;

/// GET of one object.
pub(crate) fn get(shared: &Shared, target: &Target, name: &str) -> Result<Value> {
    let state = shared.lock();
    let key = key_for(&target.rt, target.namespace.as_deref(), name);
    let object = state
        .store
        .get(&key)
        .ok_or_else(|| ApiError::not_found(&target.rt, name))?;
    Ok(served(object, &target.rt))
}

struct Filter {
    /// The core/v1 view of Events (stored as events.k8s.io/v1).
    core_event: bool,
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Filter {
    fn new(target: &Target, params: &Params) -> Result<Self> {
        Ok(Self {
            core_event: crate::events::is_core_event(&target.rt),
            labels: parse_label_selector(params.get("labelSelector").unwrap_or_default())?,
            fields: FieldSelector::parse(
                params.get("fieldSelector").unwrap_or_default(),
                &target.rt.kind,
            )?,
        })
    }

    /// Whether `object` (as stored) matches, judged on the form it is served in (a core/v1
    /// Event's field selectors name `involvedObject`, stored as `regarding`).
    fn matches(&self, object: &Value) -> bool {
        if self.core_event {
            let view = crate::events::to_core(object);
            return self.labels.matches(&view) && self.fields.matches(&view);
        }
        self.labels.matches(object) && self.fields.matches(object)
    }
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Continue {
    rv: u64,
    after: StoreKey,
}

/// GET of a collection.
pub(crate) fn list(shared: &Shared, target: &Target, params: &Params) -> Result<Value> {
    let filter = Filter::new(target, params)?;
    let limit: Option<usize> = params
        .get("limit")
        .and_then(|l| l.parse().ok())
        .filter(|l| *l > 0);
    let after = match params.get("continue") {
        Some(token) => Some(decode_continue(token)?),
        None => None,
    };
    let state = shared.lock();
    let rv = after
        .as_ref()
        .map(|c| c.rv)
        .unwrap_or_else(|| state.store.resource_version());
    let rt = &target.rt;
    let mut matching = state
        .store
        .list(rt.storage_group(), &rt.plural, target.namespace.as_deref())
        .filter(|(k, _)| after.as_ref().is_none_or(|c| *k > &c.after))
        .filter(|(_, o)| filter.matches(o));
    let mut items = Vec::new();
    let mut last = None;
    for (key, object) in matching.by_ref() {
        items.push(served(object, rt));
        last = Some(key.clone());
        if limit.is_some_and(|l| items.len() == l) {
            break;
        }
    }
    let remaining = matching.count();
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if let (Some(_), Some(after), true) = (limit, last, remaining > 0) {
        let token = serde_json::to_vec(&Continue { rv, after })
            .map_err(|e| ApiError::internal(e.to_string()))?;
        metadata["continue"] = json!(base64::engine::general_purpose::STANDARD.encode(token));
        metadata["remainingItemCount"] = json!(remaining);
    }
    Ok(
        json!({"apiVersion": rt.api_version(), "kind": format!("{}List", rt.kind), "metadata": metadata, "items": items}),
    )
}

fn decode_continue(token: &str) -> Result<Continue> {
    let bad = || ApiError::bad_request(format!("continue key is not valid: {token}"));
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| bad())?;
    serde_json::from_slice(&bytes).map_err(|_| bad())
}

/// How often a watch that asked for bookmarks gets one.
pub(crate) const BOOKMARK_INTERVAL: Duration = Duration::from_secs(5);

/// GET with `watch=true`: newline-delimited watch events from `resourceVersion` on; with
/// `table`, each event's object is a one-row Table (column definitions in the first only),
/// as kube-apiserver streams them to `kubectl get -w`.
pub(crate) fn watch(
    shared: Arc<Shared>,
    target: &Target,
    params: &Params,
    drop_at_once: bool,
    table: Option<TableRequest>,
    slot: Option<crate::watch_slots::WatchSlot>,
) -> Result<Response> {
    let filter = Filter::new(target, params)?;
    let rt = target.rt.clone();
    let namespace = target.namespace.clone();
    let bookmarks = params.flag("allowWatchBookmarks");
    let timeout = params
        .get("timeoutSeconds")
        .and_then(|t| t.parse().ok())
        .map(Duration::from_secs);
    let requested: Option<u64> = match params.get("resourceVersion") {
        None | Some("0") => None,
        Some(rv) => Some(
            rv.parse()
                .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv}")))?,
        ),
    };
    let in_scope = {
        let (group, plural, namespace) = (
            rt.storage_group().to_owned(),
            rt.plural.clone(),
            namespace.clone(),
        );
        move |key: &StoreKey| {
            key.group == group
                && key.plural == plural
                && namespace.as_ref().is_none_or(|ns| &key.namespace == ns)
        }
    };
    let (backlog, receiver, current) = {
        let state = shared.lock();
        let receiver = state.store.subscribe();
        let current = state.store.resource_version();
        let backlog: Vec<Value> = match requested {
            // No version: the current state as ADDED events, then changes.
            None => state
                .store
                .list(rt.storage_group(), &rt.plural, namespace.as_deref())
                .filter(|(_, o)| filter.matches(o))
                .map(|(_, o)| event("ADDED", served(o, &rt)))
                .collect(),
            Some(rv) => match state.store.changes_since(rv) {
                Ok(changes) => changes
                    .iter()
                    .filter(|c| in_scope(&c.key))
                    .filter_map(|c| to_event(c, &filter, &rt))
                    .collect(),
                Err(oldest) => vec![event(
                    "ERROR",
                    ApiError::gone(format!(
                        "too old resource version: {rv} ({})",
                        oldest.saturating_sub(1)
                    ))
                    .body(),
                )],
            },
        };
        (backlog, receiver, current)
    };
    if drop_at_once {
        return Ok(stream_response(futures::stream::empty().boxed()));
    }
    let gone = backlog.iter().any(|e| e["type"] == "ERROR");
    let mut initial = backlog;
    if bookmarks && !gone {
        initial.push(bookmark(&rt, current));
    }
    let initial = futures::stream::iter(initial);
    let live_rt = rt.clone();
    let live = BroadcastStream::new(receiver).filter_map(move |change| {
        let out = match change {
            Ok(change) if change.resource_version > current && in_scope(&change.key) => {
                to_event(&change, &filter, &live_rt)
            }
            Ok(_) => None,
            // A watcher that fell behind the channel is told to relist, as kube-apiserver does
            // when a watch cannot keep up.
            Err(_) => Some(event(
                "ERROR",
                ApiError::gone("the watch fell behind; relist").body(),
            )),
        };
        futures::future::ready(out)
    });
    let live = if gone {
        futures::stream::empty().boxed()
    } else {
        live.boxed()
    };
    let ticks = if bookmarks && !gone {
        let shared = shared.clone();
        let rt = rt.clone();
        tokio_stream::wrappers::IntervalStream::new(tokio::time::interval_at(
            tokio::time::Instant::now() + BOOKMARK_INTERVAL,
            BOOKMARK_INTERVAL,
        ))
        .map(move |_| bookmark(&rt, shared.lock().store.resource_version()))
        .boxed()
    } else {
        futures::stream::pending().boxed()
    };
    let events = initial.chain(futures::stream::select(live, ticks));
    let events = match timeout {
        Some(t) => events.take_until(tokio::time::sleep(t)).boxed(),
        None => events.boxed(),
    };
    // The user's slot is held as long as the stream is (given back when the client goes).
    let events = events
        .map(move |event| {
            let _held = &slot;
            event
        })
        .boxed();
    let events = match table {
        Some(request) => {
            let mut first = true;
            events
                .map(move |event| {
                    let headers = std::mem::take(&mut first);
                    crate::table::of_event(&rt, event, &request, headers)
                })
                .boxed()
        }
        None => events,
    };
    Ok(stream_response(events))
}

fn event(kind: &str, object: Value) -> Value {
    json!({"type": kind, "object": object})
}

fn bookmark(rt: &crate::registry::ResourceType, rv: u64) -> Value {
    event(
        "BOOKMARK",
        json!({"apiVersion": rt.api_version(), "kind": rt.kind, "metadata": {"resourceVersion": rv.to_string(),
            "annotations": {"k8s.io/initial-events-end": "true"}}}),
    )
}

/// The watch event for `change` as a watcher with `filter` sees it: a change into the
/// selection is ADDED, out of it DELETED.
fn to_event(change: &Change, filter: &Filter, rt: &crate::registry::ResourceType) -> Option<Value> {
    let now = filter.matches(&change.object);
    let before = change.old.as_ref().is_some_and(|o| filter.matches(o));
    let kind = match (change.event, before, now) {
        (EventType::Deleted, _, true) => EventType::Deleted,
        (EventType::Added, _, true) => EventType::Added,
        (EventType::Modified, true, true) => EventType::Modified,
        (EventType::Modified, false, true) => EventType::Added,
        (EventType::Modified, true, false) => EventType::Deleted,
        _ => return None,
    };
    Some(event(kind.as_str(), served(&change.object, rt)))
}

fn stream_response(events: futures::stream::BoxStream<'static, Value>) -> Response {
    let lines = events.map(|e| {
        let mut line = e.to_string();
        line.push('\n');
        Ok::<_, std::convert::Infallible>(line)
    });
    Response::builder()
        .header("content-type", "application/json")
        .body(Body::from_stream(lines))
        .unwrap_or_else(|_| Response::new(Body::empty()))
}
