//! Test hooks: injected faults and request counters.
//!
//! A fault matches requests by verb, resource and name (each optional; a create's name is
//! the body's `metadata.name`) and either fails
//! them with a status code, delays them, or (for watches) drops the stream at once. Counters
//! count every request by verb and resource, so a test can assert "this pass made 0
//! writes".

use std::collections::BTreeMap;
use std::time::Duration;

/// What an injected fault does to a matching request.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultAction {
    /// Fail with this code and message (a `Status` body with the matching reason).
    Fail { code: u16, message: String },
    /// Delay the request, then serve it.
    Delay(Duration),
    /// End a watch stream right after it starts.
    DropWatch,
    /// Store a write's object without kube-apiserver's metadata and data validation: what a
    /// cluster may still hold from before a rule existed, for tests of readers' robustness.
    StoreUnvalidated,
}

/// A fault and the requests it matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    /// `get`, `list`, `watch`, `create`, `update`, `patch`, `apply`, `delete`,
    /// `deletecollection`; `None` matches every verb.
    pub verb: Option<String>,
    /// The resource (plural, e.g. `secrets`); `None` matches every resource.
    pub resource: Option<String>,
    /// The object's name; `None` matches every name.
    pub name: Option<String>,
    /// The request's namespace; `None` matches every namespace and cluster-wide requests.
    pub namespace: Option<String>,
    /// What it does.
    pub action: FaultAction,
    /// How many more requests it applies to; `None` for every one.
    pub remaining: Option<u32>,
}

impl Fault {
    /// Fails `verb` requests on `resource` with `code`.
    pub fn fail(verb: &str, resource: &str, code: u16, message: &str) -> Self {
        Self {
            verb: Some(verb.into()),
            resource: Some(resource.into()),
            name: None,
            namespace: None,
            action: FaultAction::Fail {
                code,
                message: message.into(),
            },
            remaining: None,
        }
    }

    /// The same fault, only for requests in `namespace`.
    pub fn in_namespace(mut self, namespace: &str) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    fn matches(&self, verb: &str, resource: &str, request: Requested<'_>) -> bool {
        self.verb.as_deref().is_none_or(|v| v == verb)
            && self.resource.as_deref().is_none_or(|r| r == resource)
            && self.name.as_deref().is_none_or(|n| Some(n) == request.name)
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| Some(n) == request.namespace)
    }
}

/// What a request names: its namespace and object (a create's from its body).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Requested<'a> {
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// The injected faults and the request counters.
#[derive(Debug, Default)]
pub(crate) struct Hooks {
    faults: Vec<Fault>,
    counters: BTreeMap<(String, String), u64>,
}

impl Hooks {
    /// Adds a fault.
    pub(crate) fn inject(&mut self, fault: Fault) {
        self.faults.push(fault);
    }

    /// Removes every fault.
    pub(crate) fn clear_faults(&mut self) {
        self.faults.clear();
    }

    /// Whether a fault matches by name (so a create's body must be read for its name).
    pub(crate) fn has_named_faults(&self) -> bool {
        self.faults.iter().any(|f| f.name.is_some())
    }

    /// Counts a request and returns the fault it hits, if any; a hit is counted too, under
    /// the verb `fault:<verb>`.
    pub(crate) fn on_request(
        &mut self,
        verb: &str,
        resource: &str,
        request: Requested<'_>,
    ) -> Option<FaultAction> {
        *self
            .counters
            .entry((verb.to_owned(), resource.to_owned()))
            .or_default() += 1;
        let index = self
            .faults
            .iter()
            .position(|f| f.matches(verb, resource, request))?;
        *self
            .counters
            .entry((format!("fault:{verb}"), resource.to_owned()))
            .or_default() += 1;
        let fault = &mut self.faults[index];
        let action = fault.action.clone();
        if let Some(n) = &mut fault.remaining {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.faults.remove(index);
            }
        }
        Some(action)
    }

    /// Counts one event under (`verb`, `resource`) without consulting the faults (webhook
    /// calls and their results).
    pub(crate) fn count(&mut self, verb: &str, resource: &str) {
        *self
            .counters
            .entry((verb.to_owned(), resource.to_owned()))
            .or_default() += 1;
    }

    /// Requests counted so far, by (verb, resource).
    pub(crate) fn counters(&self) -> BTreeMap<(String, String), u64> {
        self.counters.clone()
    }
}

/// Request counts at one moment, with the arithmetic tests need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counts(pub BTreeMap<(String, String), u64>);

impl Counts {
    /// Requests of `verb` on `resource`.
    pub fn get(&self, verb: &str, resource: &str) -> u64 {
        self.0
            .get(&(verb.to_owned(), resource.to_owned()))
            .copied()
            .unwrap_or(0)
    }

    /// Calls of the admission webhook `name` that ended in `result`: `allowed`, `denied`,
    /// `failed` (failurePolicy Fail) or `ignored` (failurePolicy Ignore); `called` counts
    /// every call.
    pub fn webhook(&self, name: &str, result: &str) -> u64 {
        self.get(&format!("webhook:{result}"), name)
    }

    /// Requests of `verb` on `resource` refused with `code` (409: a conflict, a failed
    /// precondition included), whether by the server or by an injected fault.
    pub fn refused(&self, verb: &str, resource: &str, code: u16) -> u64 {
        self.get(&format!("{verb}:{code}"), resource)
    }

    /// Changes stored on `resource` (what write requests actually changed).
    pub fn stored(&self, resource: &str) -> u64 {
        self.get("stored", resource)
    }

    /// Changes stored on every resource.
    pub fn stored_total(&self) -> u64 {
        self.0
            .iter()
            .filter(|((verb, _), _)| verb == "stored")
            .map(|(_, n)| n)
            .sum()
    }

    /// Requests that write (create, update, patch, apply, delete, deletecollection), whether
    /// or not they changed anything.
    pub fn writes(&self) -> u64 {
        self.0
            .iter()
            .filter(|((verb, _), _)| {
                matches!(
                    verb.as_str(),
                    "create" | "update" | "patch" | "apply" | "delete" | "deletecollection"
                )
            })
            .map(|(_, n)| n)
            .sum()
    }

    /// The counts made since `earlier`.
    pub fn since(&self, earlier: &Counts) -> Counts {
        Counts(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), v - earlier.0.get(k).copied().unwrap_or(0)))
                .filter(|(_, v)| *v > 0)
                .collect(),
        )
    }
}
