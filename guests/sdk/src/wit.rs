//! The WIT side of the SDK (wasm32 only): the generated bindings, the [`Cluster`] that calls
//! across the component boundary, and the export glue behind
//! [`export_reconciler!`](crate::export_reconciler).
//!
//! Every conversion between a generated record and the SDK's own type (the shared types of
//! `wasm-operator-types` and `wasm-operator-planner`) is a `From` impl at the end of this
//! file, one per record, so the bindings of this world are converted in one place.

use serde_json::Value;

use crate::admission;
use crate::cluster::{
    Cluster, DeleteOptions, Event, EventType, ListOptions, Owner, Patch, Propagation, ReadFrom,
};
use crate::crypto;
use crate::error::ApiError;
use crate::json::Json;
use crate::log::Level;
use crate::object::{KindRef, ObjectRef};
use crate::planner;
use crate::plugin::{self, Reconciler};

/// The generated bindings of the `planning-reconciler-plugin` world of `gitlab:secretgen`
/// (`wit/secretgen/`): `wasm-operator:plugin`'s `selecting-reconciler-plugin` (contract 1.4)
/// plus the `planner` import. A reconciler imports `planner` only when it calls it, so plain reconcilers do not
/// depend on a planner.
pub mod bindings {
    wit_bindgen::generate!({
        path: "../../wit/secretgen",
        world: "planning-reconciler-plugin",
        // The platform's interfaces come from a dependency package (`wit/secretgen/deps`).
        generate_all,
        pub_export_macro: true,
        export_macro_name: "export_plugin",
        default_bindings_module: "wasm_operator_sdk::wit::bindings",
    });
}

pub use bindings::export_plugin;

use bindings::exports::wasm_operator::plugin::admission as wit_admission;
use bindings::exports::wasm_operator::plugin::extensions as wit_extensions;
use bindings::exports::wasm_operator::plugin::reconciler as wit_reconciler;
use bindings::exports::wasm_operator::plugin::selection as wit_selection;
use bindings::exports::wasm_operator::plugin::targeting as wit_targeting;
use bindings::gitlab::secretgen::planner as wit_planner;
use bindings::wasm_operator::plugin::{
    client as wit_client, cluster as wit_cluster, crypto as wit_crypto, logging as wit_logging,
    targets as wit_targets, types as wit_types,
};

/// Exports a [`Reconciler`] as the WIT `reconciler` interface.
pub struct Exported<R>(std::marker::PhantomData<R>);

impl<R: Reconciler> wit_reconciler::Guest for Exported<R> {
    fn describe() -> wit_reconciler::Description {
        R::describe().into()
    }

    /// What a 1.0 host calls; a 1.1 host calls `extensions.reconcile`.
    fn reconcile(
        request: wit_reconciler::Request,
    ) -> Result<wit_reconciler::Outcome, wit_reconciler::ReconcileError> {
        R::reconcile(&WitCluster, &request.into())
            .map(Into::into)
            .map_err(Into::into)
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

impl<R: Reconciler> wit_extensions::Guest for Exported<R> {
    fn describe_extensions() -> wit_extensions::DescriptionExtensions {
        extensions(R::describe())
    }

    fn reconcile(
        request: wit_reconciler::Request,
    ) -> Result<wit_reconciler::Outcome, wit_extensions::PassError> {
        R::reconcile(&WitCluster, &request.into())
            .map(Into::into)
            .map_err(Into::into)
    }
}

impl<R: Reconciler> wit_admission::Guest for Exported<R> {
    fn describe_admission() -> Vec<wit_admission::AdmittedKind> {
        R::describe()
            .admission
            .into_iter()
            .map(Into::into)
            .collect()
    }

    fn default(
        request: wit_admission::AdmissionRequest,
    ) -> Result<wit_admission::Defaulted, wit_admission::Denial> {
        let request = admission_request(request)?;
        R::default_object(&WitCluster, &request)
            .map(|d| wit_admission::Defaulted {
                object: d.object.to_string(),
                warnings: d.warnings,
            })
            .map_err(Into::into)
    }

    fn validate(request: wit_admission::AdmissionRequest) -> wit_admission::Validated {
        match admission_request(request) {
            Ok(request) => {
                let validated = R::validate_object(&WitCluster, &request);
                wit_admission::Validated {
                    denial: validated.denial.map(Into::into),
                    warnings: validated.warnings,
                }
            }
            Err(denial) => wit_admission::Validated {
                denial: Some(denial),
                warnings: Vec::new(),
            },
        }
    }
}

impl<R: Reconciler> wit_targeting::Guest for Exported<R> {
    fn describe_targets() -> wit_targeting::TargetDescription {
        let targets = R::describe().targets;
        wit_targeting::TargetDescription {
            owner_label_prefix: targets.owner_label_prefix,
            watches: targets.watches.iter().map(Into::into).collect(),
        }
    }
}

impl<R: Reconciler> wit_selection::Guest for Exported<R> {
    fn describe_selection() -> wit_selection::Selection {
        wit_selection::Selection {
            primary_labels: R::describe().primary_selector,
        }
    }
}

/// The request in the SDK's types; an object that is not JSON is refused.
fn admission_request(
    r: wit_admission::AdmissionRequest,
) -> Result<admission::AdmissionRequest, wit_admission::Denial> {
    let read = |text: Option<String>| {
        text.map(|t| serde_json::from_str::<Value>(&t))
            .transpose()
            .map_err(|e| wit_admission::Denial {
                message: format!("the host passed an object that is not JSON: {e}"),
                fields: Vec::new(),
            })
    };
    Ok(admission::AdmissionRequest {
        operation: match r.operation {
            wit_admission::Operation::Create => admission::Operation::Create,
            wit_admission::Operation::Update => admission::Operation::Update,
            wit_admission::Operation::Delete => admission::Operation::Delete,
        },
        kind: KindRef {
            api_version: r.kind.api_version,
            kind: r.kind.kind,
            plural: r.kind.plural,
            namespaced: r.kind.namespaced,
        },
        namespace: r.namespace,
        name: r.name,
        object: read(r.object)?,
        old_object: read(r.old_object)?,
        user: admission::UserInfo {
            username: r.user.username,
            uid: r.user.uid,
            groups: r.user.groups,
        },
        dry_run: r.dry_run,
    })
}

/// The [`Cluster`] served by the host across the component boundary.
pub struct WitCluster;

impl Cluster for WitCluster {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        parse_read(self.get_json(object, from)?)
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        parse_list(self.list_json(kind, namespace, options)?)
    }

    fn get_json(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Json>, ApiError> {
        Ok(wit_client::get(&object.into(), from.into())?.map(Json::Text))
    }

    fn list_json(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Json>, ApiError> {
        let texts = wit_client::list(&kind.into(), namespace, &options.into())?;
        Ok(texts.into_iter().map(Json::Text).collect())
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let owner = owner.map(wit_cluster::Owner::from);
        parse(&wit_client::apply(&object.to_string(), owner.as_ref())?)
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        parse(&wit_client::create(&object.to_string())?)
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
        let stored = wit_client::patch(
            &object.into(),
            patch_type,
            &body.to_string(),
            resource_version,
        )?;
        parse(&stored)
    }

    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        Ok(wit_client::delete(&object.into(), &options.into())?)
    }

    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        parse(&wit_client::update_status(&object.to_string())?)
    }

    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        Ok(wit_client::record_event(&regarding.into(), &event.into())?)
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        Ok(wit_client::served(&kind.into())?)
    }

    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        parse(&wit_client::create_subresource(
            &object.into(),
            subresource,
            &body.to_string(),
        )?)
    }

    fn open_target(&self, name: &str) -> Result<Box<dyn Cluster + '_>, crate::TargetError> {
        let target = wit_targets::Target::open(name).map_err(|e| match e {
            wit_targets::TargetError::NotRegistered(m) => crate::TargetError::NotRegistered(m),
            wit_targets::TargetError::Unavailable(m) => crate::TargetError::Unavailable(m),
        })?;
        Ok(Box::new(WitTarget { target }))
    }
}

/// A target cluster the host opened for this pass (contract 1.3).
struct WitTarget {
    target: wit_targets::Target,
}

impl Cluster for WitTarget {
    fn get(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Value>, ApiError> {
        parse_read(self.get_json(object, from)?)
    }

    fn list(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Value>, ApiError> {
        parse_list(self.list_json(kind, namespace, options)?)
    }

    fn get_json(&self, object: &ObjectRef, from: ReadFrom) -> Result<Option<Json>, ApiError> {
        Ok(self
            .target
            .get(&object.into(), from.into())?
            .map(Json::Text))
    }

    fn list_json(
        &self,
        kind: &KindRef,
        namespace: Option<&str>,
        options: &ListOptions,
    ) -> Result<Vec<Json>, ApiError> {
        let texts = self.target.list(&kind.into(), namespace, &options.into())?;
        Ok(texts.into_iter().map(Json::Text).collect())
    }

    fn apply(&self, object: &Value, owner: Option<&Owner>) -> Result<Value, ApiError> {
        let owner = owner.map(wit_cluster::Owner::from);
        parse(&self.target.apply(&object.to_string(), owner.as_ref())?)
    }

    fn create(&self, object: &Value) -> Result<Value, ApiError> {
        parse(&self.target.create(&object.to_string())?)
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
        let stored = self.target.patch(
            &object.into(),
            patch_type,
            &body.to_string(),
            resource_version,
        )?;
        parse(&stored)
    }

    fn delete_with(&self, object: &ObjectRef, options: &DeleteOptions) -> Result<(), ApiError> {
        Ok(self.target.delete(&object.into(), &options.into())?)
    }

    /// The primary's status, on the plugin's own cluster.
    fn update_status(&self, object: &Value) -> Result<Value, ApiError> {
        WitCluster.update_status(object)
    }

    /// An event about the primary, on the plugin's own cluster.
    fn record_event(&self, regarding: &ObjectRef, event: &Event) -> Result<(), ApiError> {
        WitCluster.record_event(regarding, event)
    }

    fn served(&self, kind: &KindRef) -> Result<bool, ApiError> {
        Ok(self.target.served(&kind.into())?)
    }

    fn create_subresource(
        &self,
        object: &ObjectRef,
        subresource: &str,
        body: &Value,
    ) -> Result<Value, ApiError> {
        parse(
            &self
                .target
                .create_subresource(&object.into(), subresource, &body.to_string())?,
        )
    }
}

/// Sends one log line to the host.
pub(crate) fn log(level: Level, message: &str) {
    wit_logging::log(level.into(), message);
}

/// `egress.trust-ca` (behind [`crate::http::trust_ca`]).
pub(crate) fn trust_ca(secret: &ObjectRef, key: &str) -> Result<(), ApiError> {
    bindings::wasm_operator::plugin::egress::trust_ca(&secret.into(), key).map_err(Into::into)
}

fn parse_read(read: Option<Json>) -> Result<Option<Value>, ApiError> {
    read.map(|json| json.into_value().map_err(not_json))
        .transpose()
}

fn parse_list(read: Vec<Json>) -> Result<Vec<Value>, ApiError> {
    read.into_iter()
        .map(|json| json.into_value().map_err(not_json))
        .collect()
}

fn not_json(e: serde_json::Error) -> ApiError {
    ApiError::Other(format!("the host returned an object that is not JSON: {e}"))
}

fn parse(text: &str) -> Result<Value, ApiError> {
    serde_json::from_str(text).map_err(not_json)
}

// --- Conversions: one `From` per record of this world ---

// types

impl From<&ObjectRef> for wit_types::ObjectRef {
    fn from(object: &ObjectRef) -> Self {
        Self {
            api_version: object.api_version.clone(),
            kind: object.kind.clone(),
            namespace: object.namespace.clone(),
            name: object.name.clone(),
        }
    }
}

impl From<&KindRef> for wit_types::KindRef {
    fn from(kind: &KindRef) -> Self {
        Self {
            api_version: kind.api_version.clone(),
            kind: kind.kind.clone(),
            plural: kind.plural.clone(),
            namespaced: kind.namespaced,
        }
    }
}

impl From<wit_types::ApiError> for ApiError {
    fn from(error: wit_types::ApiError) -> Self {
        use wit_types::ApiError as W;
        match error {
            W::NotFound(m) => Self::NotFound(m),
            W::Conflict(m) => Self::Conflict(m),
            W::Invalid(m) => Self::Invalid(m),
            W::TooLarge(m) => Self::TooLarge(m),
            W::Forbidden(m) => Self::Forbidden(m),
            W::Gone(m) => Self::Gone(m),
            W::Unavailable(m) => Self::Unavailable(m),
            W::Other(m) => Self::Other(m),
        }
    }
}

impl From<wit_types::CallError> for ApiError {
    fn from(error: wit_types::CallError) -> Self {
        match error {
            wit_types::CallError::Api(api) => api.into(),
            wit_types::CallError::NotServed(m) => Self::NotServed(m),
        }
    }
}

impl From<EventType> for wit_types::EventType {
    fn from(event_type: EventType) -> Self {
        match event_type {
            EventType::Normal => Self::Normal,
            EventType::Warning => Self::Warning,
        }
    }
}

// cluster

impl From<ReadFrom> for wit_cluster::ReadFrom {
    fn from(from: ReadFrom) -> Self {
        match from {
            ReadFrom::Cache => Self::Cache,
            ReadFrom::Server => Self::Server,
        }
    }
}

impl From<&ListOptions> for wit_cluster::ListOptions {
    fn from(options: &ListOptions) -> Self {
        Self {
            label_selector: options.label_selector.clone(),
            field_index: options.field_index.clone(),
        }
    }
}

impl From<Propagation> for wit_cluster::Propagation {
    fn from(propagation: Propagation) -> Self {
        match propagation {
            Propagation::Background => Self::Background,
            Propagation::Foreground => Self::Foreground,
            Propagation::Orphan => Self::Orphan,
        }
    }
}

impl From<&DeleteOptions> for wit_client::DeleteOptions {
    fn from(options: &DeleteOptions) -> Self {
        Self {
            propagation: options.propagation.into(),
            preconditions: wit_client::Preconditions {
                uid: options.preconditions.uid.clone(),
                resource_version: options.preconditions.resource_version.clone(),
            },
        }
    }
}

impl From<&Owner> for wit_cluster::Owner {
    fn from(owner: &Owner) -> Self {
        Self {
            api_version: owner.api_version.clone(),
            kind: owner.kind.clone(),
            name: owner.name.clone(),
            uid: owner.uid.clone(),
        }
    }
}

impl From<&Event> for wit_cluster::Event {
    fn from(event: &Event) -> Self {
        Self {
            event_type: event.event_type.into(),
            reason: event.reason.clone(),
            action: event.action.clone(),
            note: event.note.clone(),
        }
    }
}

// logging

impl From<Level> for wit_logging::Level {
    fn from(level: Level) -> Self {
        match level {
            Level::Trace => Self::Trace,
            Level::Debug => Self::Debug,
            Level::Info => Self::Info,
            Level::Warn => Self::Warn,
            Level::Error => Self::Error,
        }
    }
}

// reconciler

impl From<wit_reconciler::Request> for plugin::Request {
    fn from(request: wit_reconciler::Request) -> Self {
        Self {
            namespace: request.namespace,
            name: request.name,
        }
    }
}

impl From<plugin::Outcome> for wit_reconciler::Outcome {
    fn from(outcome: plugin::Outcome) -> Self {
        Self {
            requeue_after_ms: outcome
                .requeue_after
                .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        }
    }
}

/// 1.0 has no retry-after: a 1.0 host retries it with its backoff.
impl From<plugin::ReconcileError> for wit_reconciler::ReconcileError {
    fn from(error: plugin::ReconcileError) -> Self {
        match error {
            plugin::ReconcileError::Transient(m) => Self::Transient(m),
            plugin::ReconcileError::Permanent(m) => Self::Permanent(m),
            plugin::ReconcileError::RetryAfter { message, .. } => Self::Transient(message),
        }
    }
}

impl From<plugin::ReconcileError> for wit_extensions::PassError {
    fn from(error: plugin::ReconcileError) -> Self {
        match error {
            plugin::ReconcileError::Transient(m) => Self::Transient(m),
            plugin::ReconcileError::Permanent(m) => Self::Permanent(m),
            plugin::ReconcileError::RetryAfter { after, message } => {
                Self::RetryAfter(wit_extensions::Retry {
                    after_ms: u64::try_from(after.as_millis()).unwrap_or(u64::MAX),
                    message,
                })
            }
        }
    }
}

impl From<plugin::Verb> for wit_reconciler::Verb {
    fn from(verb: plugin::Verb) -> Self {
        match verb {
            plugin::Verb::Get => Self::Get,
            plugin::Verb::List => Self::List,
            plugin::Verb::Watch => Self::Watch,
            plugin::Verb::Create => Self::Create,
            plugin::Verb::Update => Self::Update,
            plugin::Verb::Patch => Self::Patch,
            plugin::Verb::Delete => Self::Delete,
            plugin::Verb::UpdateStatus => Self::UpdateStatus,
        }
    }
}

impl From<plugin::Predicate> for wit_reconciler::Predicate {
    fn from(predicate: plugin::Predicate) -> Self {
        match predicate {
            plugin::Predicate::GenerationChanged => Self::GenerationChanged,
            plugin::Predicate::LabelsChanged => Self::LabelsChanged,
        }
    }
}

impl From<plugin::Mapping> for wit_extensions::WatchMapping {
    fn from(mapping: plugin::Mapping) -> Self {
        match mapping {
            plugin::Mapping::Owner => Self::Base(wit_reconciler::Mapping::Owner),
            plugin::Mapping::FieldIndex(name) => {
                Self::Base(wit_reconciler::Mapping::FieldIndex(name))
            }
            plugin::Mapping::Label(label) => Self::Base(wit_reconciler::Mapping::Label(label)),
            plugin::Mapping::Reference(path) => Self::Reference(path),
            plugin::Mapping::Via { kind, index } => Self::Via(wit_extensions::ViaIndex {
                kind: (&kind).into(),
                index,
            }),
        }
    }
}

impl From<plugin::Watch> for wit_extensions::ExtendedWatch {
    fn from(watch: plugin::Watch) -> Self {
        Self {
            kind: (&watch.kind).into(),
            mapping: watch.mapping.into(),
            optional: watch.optional,
        }
    }
}

impl From<plugin::FieldIndex> for wit_reconciler::FieldIndex {
    fn from(index: plugin::FieldIndex) -> Self {
        Self {
            name: index.name,
            description: index.description,
        }
    }
}

impl From<plugin::Permission> for wit_reconciler::Permission {
    fn from(permission: plugin::Permission) -> Self {
        Self {
            kind: (&permission.kind).into(),
            verbs: permission.verbs.into_iter().map(Into::into).collect(),
        }
    }
}

/// The 1.0 part of a description. Every watch goes to `extensions` (a 1.1 host reads them
/// there), so `watches` is empty here.
impl From<plugin::Description> for wit_reconciler::Description {
    fn from(d: plugin::Description) -> Self {
        Self {
            name: d.name,
            version: d.version,
            field_manager: d.field_manager,
            primary: (&d.primary).into(),
            primary_predicates: d.primary_predicates.into_iter().map(Into::into).collect(),
            watches: Vec::new(),
            indexes: d.indexes.into_iter().map(Into::into).collect(),
            permissions: d.permissions.into_iter().map(Into::into).collect(),
        }
    }
}

/// The parts of a description contract 1.1 adds: every watch, the indexes on watched kinds,
/// the subresources and the egress destinations.
fn extensions(d: plugin::Description) -> wit_extensions::DescriptionExtensions {
    wit_extensions::DescriptionExtensions {
        egress: d.egress,
        watches: d.watches.into_iter().map(Into::into).collect(),
        indexes: d
            .watched_indexes
            .into_iter()
            .map(|i| wit_extensions::KindIndex {
                kind: (&i.kind).into(),
                index: i.index.into(),
            })
            .collect(),
        subresources: d
            .subresources
            .into_iter()
            .map(|s| wit_extensions::SubresourcePermission {
                kind: (&s.kind).into(),
                subresource: s.subresource,
                verbs: s.verbs.into_iter().map(Into::into).collect(),
            })
            .collect(),
    }
}

// planner (the import behind `planner::WitPlanner`)

impl From<&planner::SecretRequest> for wit_planner::SecretRequest {
    fn from(r: &planner::SecretRequest) -> Self {
        Self {
            name: r.name.clone(),
            entries: r.entries.clone(),
            existing: r.existing.clone(),
            ready_units: r.ready_units.clone(),
            generate: r.generate,
        }
    }
}

impl From<&planner::CertificatesRequest> for wit_planner::CertificatesRequest {
    fn from(r: &planner::CertificatesRequest) -> Self {
        Self {
            certificate: r.certificate.clone(),
            ca_secret: r.ca_secret.clone(),
            tls_secret: r.tls_secret.clone(),
            chain_secret: r.chain_secret.clone(),
            ready_units: r.ready_units.clone(),
            generate: r.generate,
        }
    }
}

impl From<wit_planner::Entry> for planner::Entry {
    fn from(e: wit_planner::Entry) -> Self {
        Self {
            key: e.key,
            value: e.value,
        }
    }
}

impl From<wit_planner::SecretPlan> for planner::SecretPlan {
    fn from(p: wit_planner::SecretPlan) -> Self {
        Self {
            name: p.name,
            secret_type: p.secret_type,
            add: p.add.into_iter().map(Into::into).collect(),
            reports: p.reports,
            declared_units: p.declared_units,
            next_ready_units: p.next_ready_units,
            type_kept: p.type_kept,
            ready: p.ready,
        }
    }
}

impl From<wit_planner::CertificateAction> for planner::CertificateAction {
    fn from(action: wit_planner::CertificateAction) -> Self {
        use wit_planner::CertificateAction as W;
        match action {
            W::None => Self::None,
            W::Issue => Self::Issue,
            W::DeriveChain => Self::DeriveChain,
            W::Report => Self::Report,
        }
    }
}

impl From<wit_planner::CertificatesPlan> for planner::CertificatesPlan {
    fn from(p: wit_planner::CertificatesPlan) -> Self {
        Self {
            action: p.action.into(),
            secrets: p.secrets.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<wit_planner::PlanError> for planner::PlanError {
    fn from(error: wit_planner::PlanError) -> Self {
        Self {
            subject: error.subject,
            message: error.message,
        }
    }
}

// admission

impl From<admission::AdmittedKind> for wit_admission::AdmittedKind {
    fn from(a: admission::AdmittedKind) -> Self {
        let operation = |o: admission::Operation| match o {
            admission::Operation::Create => wit_admission::Operation::Create,
            admission::Operation::Update => wit_admission::Operation::Update,
            admission::Operation::Delete => wit_admission::Operation::Delete,
        };
        Self {
            kind: (&a.kind).into(),
            default_on: a.default_on.into_iter().map(operation).collect(),
            validate_on: a.validate_on.into_iter().map(operation).collect(),
            failure_policy: match a.failure_policy {
                admission::FailurePolicy::Fail => wit_admission::FailurePolicy::Fail,
                admission::FailurePolicy::Ignore => wit_admission::FailurePolicy::Ignore,
            },
        }
    }
}

impl From<admission::Denial> for wit_admission::Denial {
    fn from(d: admission::Denial) -> Self {
        Self {
            message: d.message,
            fields: d
                .fields
                .into_iter()
                .map(|f| wit_admission::FieldError {
                    field: f.field,
                    message: f.message,
                })
                .collect(),
        }
    }
}

// crypto (the import behind `crypto::generate`)

impl From<crypto::KeyAlgorithm> for wit_crypto::KeyAlgorithm {
    fn from(algorithm: crypto::KeyAlgorithm) -> Self {
        use crypto::{Curve, KeyAlgorithm};
        match algorithm {
            KeyAlgorithm::Rsa(bits) => Self::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => Self::Ecdsa(wit_crypto::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => Self::Ecdsa(wit_crypto::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => Self::Ecdsa(wit_crypto::Curve::P521),
            KeyAlgorithm::Ed25519 => Self::Ed25519,
        }
    }
}

impl From<wit_crypto::KeyError> for crypto::KeyError {
    fn from(e: wit_crypto::KeyError) -> Self {
        match e {
            wit_crypto::KeyError::Unsupported(m) => Self::Unsupported(m),
            wit_crypto::KeyError::Failed(m) => Self::Failed(m),
        }
    }
}
