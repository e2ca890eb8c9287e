//! The WIT side of the SDK (wasm32 only): the generated bindings, the [`Cluster`] that calls
//! across the component boundary, and the export glue behind
//! [`export_reconciler!`](crate::export_reconciler).

use serde_json::Value;

use crate::cluster::{Cluster, Event, EventType, ListOptions, Owner, Patch, Propagation, ReadFrom};
use crate::error::ApiError;
use crate::log::Level;
use crate::object::{KindRef, ObjectRef};
use crate::plugin::{self, Reconciler};

/// The generated bindings of the `planning-reconciler-plugin` world. A reconciler imports
/// `planner` only when it calls it, so plain reconcilers do not depend on a planner.
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit",
        world: "planning-reconciler-plugin",
        pub_export_macro: true,
        export_macro_name: "export_plugin",
        default_bindings_module: "wasm_operator_sdk::wit::bindings",
    });
}

pub use bindings::export_plugin;

use bindings::exports::wasm_operator::plugin::reconciler as wit_reconciler;
use bindings::wasm_operator::plugin::{
    cluster as wit_cluster, logging as wit_logging, types as wit_types,
};

/// Exports a [`Reconciler`] as the WIT `reconciler` interface.
pub struct Exported<R>(std::marker::PhantomData<R>);

impl<R: Reconciler> wit_reconciler::Guest for Exported<R> {
    fn describe() -> wit_reconciler::Description {
        description_to_wit(R::describe())
    }

    fn reconcile(
        request: wit_reconciler::Request,
    ) -> Result<wit_reconciler::Outcome, wit_reconciler::ReconcileError> {
        let request = plugin::Request {
            namespace: request.namespace,
            name: request.name,
        };
        match R::reconcile(&WitCluster, &request) {
            Ok(outcome) => Ok(wit_reconciler::Outcome {
                requeue_after_ms: outcome
                    .requeue_after
                    .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
            }),
            Err(plugin::ReconcileError::Transient(m)) => {
                Err(wit_reconciler::ReconcileError::Transient(m))
            }
            Err(plugin::ReconcileError::Permanent(m)) => {
                Err(wit_reconciler::ReconcileError::Permanent(m))
            }
        }
    }

    fn index(name: String, object: String) -> Vec<String> {
        match serde_json::from_str::<Value>(&object) {
            Ok(object) => R::index(&name, &object),
            Err(e) => {
                crate::log::error(&format!(
                    "index {name}: the host passed an object that is not JSON: {e}"
                ));
                Vec::new()
            }
        }
    }
}

/// The [`Cluster`] served by the host across the component boundary.
pub struct WitCluster;

impl Cluster for WitCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        let from = match from {
            ReadFrom::Cache => wit_cluster::ReadFrom::Cache,
            ReadFrom::Server => wit_cluster::ReadFrom::Server,
        };
        wit_cluster::get(&object_ref_to_wit(object), from)
            .map_err(api_error_from_wit)?
            .map(|text| parse(&text))
            .transpose()
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let options = wit_cluster::ListOptions {
            label_selector: options.label_selector.clone(),
            field_index: options.field_index.clone(),
        };
        wit_cluster::list(&kind_ref_to_wit(kind), namespace, &options)
            .map_err(api_error_from_wit)?
            .iter()
            .map(|text| parse(text))
            .collect()
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let owner = owner.map(|o| wit_cluster::Owner {
            api_version: o.api_version.clone(),
            kind: o.kind.clone(),
            name: o.name.clone(),
            uid: o.uid.clone(),
        });
        parse(&wit_cluster::apply(&object.to_string(), owner.as_ref()).map_err(api_error_from_wit)?)
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        parse(&wit_cluster::create(&object.to_string()).map_err(api_error_from_wit)?)
    }

    fn patch(
        &self,
        object: &ObjectRef,
        patch: &Patch,
        resource_version: Option<&str>,
    ) -> Result<Value, ApiError> {
        let (patch_type, body) = match patch {
            Patch::Merge(body) => (wit_cluster::PatchType::Merge, body),
            Patch::Json(body) => (wit_cluster::PatchType::Json, body),
        };
        let stored = wit_cluster::patch(
            &object_ref_to_wit(object),
            patch_type,
            &body.to_string(),
            resource_version,
        )
        .map_err(api_error_from_wit)?;
        parse(&stored)
    }

    fn delete(&self, object: &ObjectRef, propagation: Propagation) -> Result<(), ApiError> {
        let propagation = match propagation {
            Propagation::Background => wit_cluster::Propagation::Background,
            Propagation::Foreground => wit_cluster::Propagation::Foreground,
            Propagation::Orphan => wit_cluster::Propagation::Orphan,
        };
        wit_cluster::delete(&object_ref_to_wit(object), propagation).map_err(api_error_from_wit)
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        parse(&wit_cluster::update_status(&object.to_string()).map_err(api_error_from_wit)?)
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        let event = wit_cluster::Event {
            event_type: match event.event_type {
                EventType::Normal => wit_types::EventType::Normal,
                EventType::Warning => wit_types::EventType::Warning,
            },
            reason: event.reason.clone(),
            action: event.action.clone(),
            note: event.note.clone(),
        };
        wit_cluster::record_event(&object_ref_to_wit(regarding), &event).map_err(api_error_from_wit)
    }
}

/// Sends one log line to the host.
pub(crate) fn log(level: Level, message: &str) {
    let level = match level {
        Level::Trace => wit_logging::Level::Trace,
        Level::Debug => wit_logging::Level::Debug,
        Level::Info => wit_logging::Level::Info,
        Level::Warn => wit_logging::Level::Warn,
        Level::Error => wit_logging::Level::Error,
    };
    wit_logging::log(level, message);
}

fn parse(text: &str) -> Result<Value, ApiError> {
    serde_json::from_str(text)
        .map_err(|e| ApiError::Other(format!("the host returned an object that is not JSON: {e}")))
}

fn api_error_from_wit(error: wit_types::ApiError) -> ApiError {
    use wit_types::ApiError as W;
    match error {
        W::NotFound(m) => ApiError::NotFound(m),
        W::Conflict(m) => ApiError::Conflict(m),
        W::Invalid(m) => ApiError::Invalid(m),
        W::TooLarge(m) => ApiError::TooLarge(m),
        W::Forbidden(m) => ApiError::Forbidden(m),
        W::Gone(m) => ApiError::Gone(m),
        W::Unavailable(m) => ApiError::Unavailable(m),
        W::Other(m) => ApiError::Other(m),
    }
}

fn object_ref_to_wit(object: &ObjectRef) -> wit_types::ObjectRef {
    wit_types::ObjectRef {
        api_version: object.api_version.clone(),
        kind: object.kind.clone(),
        namespace: object.namespace.clone(),
        name: object.name.clone(),
    }
}

fn kind_ref_to_wit(kind: &KindRef) -> wit_types::KindRef {
    wit_types::KindRef {
        api_version: kind.api_version.clone(),
        kind: kind.kind.clone(),
        plural: kind.plural.clone(),
        namespaced: kind.namespaced,
    }
}

fn description_to_wit(d: plugin::Description) -> wit_reconciler::Description {
    use wit_reconciler as w;
    let verb = |v: plugin::Verb| match v {
        plugin::Verb::Get => w::Verb::Get,
        plugin::Verb::List => w::Verb::List,
        plugin::Verb::Watch => w::Verb::Watch,
        plugin::Verb::Create => w::Verb::Create,
        plugin::Verb::Update => w::Verb::Update,
        plugin::Verb::Patch => w::Verb::Patch,
        plugin::Verb::Delete => w::Verb::Delete,
        plugin::Verb::UpdateStatus => w::Verb::UpdateStatus,
    };
    w::Description {
        name: d.name,
        version: d.version,
        field_manager: d.field_manager,
        primary: kind_ref_to_wit(&d.primary),
        primary_predicates: d
            .primary_predicates
            .into_iter()
            .map(|p| match p {
                plugin::Predicate::GenerationChanged => w::Predicate::GenerationChanged,
                plugin::Predicate::LabelsChanged => w::Predicate::LabelsChanged,
            })
            .collect(),
        watches: d
            .watches
            .into_iter()
            .map(|watch| w::Watch {
                kind: kind_ref_to_wit(&watch.kind),
                mapping: match watch.mapping {
                    plugin::Mapping::Owner => w::Mapping::Owner,
                    plugin::Mapping::FieldIndex(name) => w::Mapping::FieldIndex(name),
                    plugin::Mapping::Label(label) => w::Mapping::Label(label),
                },
            })
            .collect(),
        indexes: d
            .indexes
            .into_iter()
            .map(|i| w::FieldIndex {
                name: i.name,
                description: i.description,
            })
            .collect(),
        permissions: d
            .permissions
            .into_iter()
            .map(|p| w::Permission {
                kind: kind_ref_to_wit(&p.kind),
                verbs: p.verbs.into_iter().map(verb).collect(),
            })
            .collect(),
    }
}
