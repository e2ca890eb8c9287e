//! Admission (contract 1.2): the kinds a plugin admits, checked at load, and the two calls
//! the webhook server makes — `default` and `validate` — each in a fresh store with the
//! plugin's limits and a read-only view of the cluster.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use wasm_operator_types::admission::{
    AdmissionRequest, AdmittedKind, Defaulted, Denial, FailurePolicy, FieldError, Operation,
    Validated,
};
use wasm_operator_types::{Description, ObjectRef};

use crate::backend::checked::Checked;
use crate::backend::{Caller, ClusterBackend};
use crate::bindings::admission as wit;
use crate::capabilities::ClusterCtx;
use crate::capabilities::texts::object_text;
use crate::error::PassError;
use crate::pass::Failure;
use crate::plugin::Plugin;
use crate::text::guest_text;
use crate::{Runtime, describe};

/// The shared form of what `describe-admission` returned.
pub(crate) fn from_wit(kinds: Vec<wit::AdmittedKind>) -> Vec<AdmittedKind> {
    kinds
        .into_iter()
        .map(|k| AdmittedKind {
            kind: describe::kind(k.kind),
            default_on: k.default_on.into_iter().map(operation).collect(),
            validate_on: k.validate_on.into_iter().map(operation).collect(),
            failure_policy: match k.failure_policy {
                wit::FailurePolicy::Fail => FailurePolicy::Fail,
                wit::FailurePolicy::Ignore => FailurePolicy::Ignore,
            },
        })
        .collect()
}

fn operation(o: wit::Operation) -> Operation {
    match o {
        wit::Operation::Create => Operation::Create,
        wit::Operation::Update => Operation::Update,
        wit::Operation::Delete => Operation::Delete,
    }
}

/// Each admitted kind is a kind the plugin declared a permission on, named once, with at
/// least one operation and none twice.
pub(crate) fn validate(d: &Description) -> Result<(), String> {
    for (i, a) in d.admission.iter().enumerate() {
        let field = format!("admission[{i}]");
        describe::check_kind(&a.kind, &format!("{field}.kind"))?;
        if !d
            .permissions
            .iter()
            .any(|p| describe::same_kind(&p.kind, &a.kind) && p.kind.plural == a.kind.plural)
        {
            return Err(format!(
                "{field}.kind {} is not a kind the plugin declared a permission on",
                a.kind
            ));
        }
        if let Some(j) = d.admission[..i]
            .iter()
            .position(|b| describe::same_kind(&a.kind, &b.kind))
        {
            return Err(format!(
                "{field}.kind {} is admitted twice (admission[{j}] names it too)",
                a.kind
            ));
        }
        if a.default_on.is_empty() && a.validate_on.is_empty() {
            return Err(format!(
                "{field}: neither default-on nor validate-on names an operation"
            ));
        }
        if a.default_on.contains(&Operation::Delete) {
            return Err(format!(
                "{field}.default-on names delete, which has no object to default"
            ));
        }
        for (list, name) in [
            (&a.default_on, "default-on"),
            (&a.validate_on, "validate-on"),
        ] {
            let mut seen = list.clone();
            seen.sort_unstable();
            if seen.windows(2).any(|p| p[0] == p[1]) {
                return Err(format!("{field}.{name} names an operation twice"));
            }
        }
    }
    Ok(())
}

impl Plugin {
    /// The kinds the plugin admits (empty for a planner or a plugin built before 1.2).
    pub fn admitted(&self) -> &[AdmittedKind] {
        self.description().map_or(&[], |d| &d.admission)
    }

    /// Calls the plugin's `default` for `request`: the object to store, or the plugin's
    /// refusal. A failed call (trap, deadline, memory cap, a plugin that does not admit the
    /// kind) is the outer error. The call's deadline is the plugin's, or `within` when that
    /// is shorter (the caller's own timeout, so that it hears the failure rather than
    /// giving up first).
    pub async fn default_write(
        &self,
        runtime: &Runtime,
        backend: Arc<dyn ClusterBackend>,
        request: &AdmissionRequest,
        within: Duration,
    ) -> Result<Result<Defaulted, Denial>, PassError> {
        let answer = self
            .admission_call(
                runtime,
                backend,
                request,
                within,
                async |store, admission, wit| {
                    admission
                        .call_default(store, wit)
                        .await
                        .map_err(Failure::Call)
                },
            )
            .await?;
        match answer {
            Err(denial) => Ok(Err(from_denial(denial))),
            Ok(defaulted) => {
                let stored: Value =
                    serde_json::from_str(&defaulted.object).map_err(|e| PassError::Reconcile {
                        plugin: self.name.clone(),
                        object: subject(request),
                        message: format!("default returned an object that is not JSON: {e}"),
                        retryable: false,
                        retry_after: None,
                        conflict: false,
                    })?;
                Ok(Ok(Defaulted {
                    object: stored,
                    warnings: defaulted.warnings.iter().map(|w| guest_text(w)).collect(),
                }))
            }
        }
    }

    /// Calls the plugin's `validate` for `request`, with the deadline of
    /// [`Plugin::default_write`].
    pub async fn validate_write(
        &self,
        runtime: &Runtime,
        backend: Arc<dyn ClusterBackend>,
        request: &AdmissionRequest,
        within: Duration,
    ) -> Result<Validated, PassError> {
        let answer = self
            .admission_call(
                runtime,
                backend,
                request,
                within,
                async |store, admission, wit| {
                    admission
                        .call_validate(store, wit)
                        .await
                        .map_err(Failure::Call)
                },
            )
            .await?;
        Ok(Validated {
            denial: answer.denial.map(from_denial),
            warnings: answer.warnings.iter().map(|w| guest_text(w)).collect(),
        })
    }

    fn admission_request(
        &self,
        object: &str,
        request: &AdmissionRequest,
    ) -> Result<wit::AdmissionRequest, PassError> {
        if !self
            .admitted()
            .iter()
            .any(|a| describe::same_kind(&a.kind, &request.kind))
        {
            return Err(PassError::Instantiate {
                plugin: self.name.clone(),
                object: object.to_owned(),
                message: format!("does not admit {}", request.kind),
            });
        }
        let k = &request.kind;
        Ok(wit::AdmissionRequest {
            operation: match request.operation {
                Operation::Create => wit::Operation::Create,
                Operation::Update => wit::Operation::Update,
                Operation::Delete => wit::Operation::Delete,
            },
            kind: crate::bindings::types::KindRef {
                api_version: k.api_version.clone(),
                kind: k.kind.clone(),
                plural: k.plural.clone(),
                namespaced: k.namespaced,
            },
            namespace: request.namespace.clone(),
            name: request.name.clone(),
            object: request.object.as_ref().map(object_text),
            old_object: request.old_object.as_ref().map(object_text),
            user: wit::UserInfo {
                username: request.user.username.clone(),
                uid: request.user.uid.clone(),
                groups: request.user.groups.clone(),
            },
            dry_run: request.dry_run,
        })
    }

    /// Runs `call` with the request in WIT terms on the instance's `admission` export, in a
    /// fresh store whose cluster view reads within the plugin's permissions (relative to the
    /// written object's namespace) and refuses every write.
    async fn admission_call<T>(
        &self,
        runtime: &Runtime,
        backend: Arc<dyn ClusterBackend>,
        request: &AdmissionRequest,
        within: Duration,
        call: impl AsyncFnOnce(
            &mut wasmtime::Store<crate::capabilities::PassState>,
            &wit::Guest,
            &wit::AdmissionRequest,
        ) -> Result<T, Failure>,
    ) -> Result<T, PassError> {
        let object = subject(request);
        let object = object.as_str();
        let wit_request = self.admission_request(object, request)?;
        let (pre, description) = self.reconciler(object)?;
        let caller = Caller {
            plugin: self.name.clone(),
            field_manager: description.field_manager.clone(),
        };
        let subject = ObjectRef {
            api_version: request.kind.api_version.clone(),
            kind: request.kind.kind.clone(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let checked = Checked::new(backend, caller, self.permissions.clone(), subject).read_only();
        let cluster = ClusterCtx::new(checked, runtime.texts.clone());
        let name = self.name.clone();
        let deadline = within.min(self.limits.deadline);
        self.run_within(runtime, object, cluster, deadline, async |store| {
            let instance = pre
                .instantiate_async(&mut *store)
                .await
                .map_err(Failure::Instantiate)?;
            let Some(admission) = &instance.admission else {
                return Err(Failure::Instantiate(wasmtime::Error::msg(format!(
                    "plugin {name} does not export admission"
                ))));
            };
            call(store, admission, &wit_request).await
        })
        .await
    }
}

/// `namespace/name` of the written object, for errors and logs.
fn subject(request: &AdmissionRequest) -> String {
    wasm_operator_types::object_key(request.namespace.as_deref(), &request.name)
}

fn from_denial(d: wit::Denial) -> Denial {
    Denial {
        message: guest_text(&d.message),
        fields: d
            .fields
            .into_iter()
            .map(|f| FieldError {
                field: guest_text(&f.field),
                message: guest_text(&f.message),
            })
            .collect(),
    }
}
