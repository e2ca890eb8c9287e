//! The state of one pass: what it read, what it found, and what it will report.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use wasm_operator_sdk::planner::Planner;
use wasm_operator_sdk::{ApiError, Cluster, Event, KindRef, ListOptions};

use crate::declared::DeclaredSpec;
use crate::describe::{Declaring, DeclaringMetadata};
use crate::error::Error;
use crate::labels;
use crate::types::GitLabSecrets;

/// What a pass found for one Secret: a status entry and the failure or reports behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretResult {
    /// The Secret's name.
    pub name: String,
    /// Whether it holds everything it declares.
    pub ready: bool,
    /// The readyUnits of its status entry.
    pub ready_units: Vec<String>,
    /// What the planner reported for it.
    pub reports: Vec<String>,
    /// Why its read, plan or write failed.
    pub failure: Option<Error>,
}

/// One pass over one GitLabSecrets.
pub struct Pass<'a> {
    pub cluster: &'a dyn Cluster,
    pub planner: &'a dyn Planner,
    /// The GitLabSecrets as the cache holds it, without spec.secrets and spec.certificates.
    pub primary: GitLabSecrets,
    /// Its spec.secrets and spec.certificates, decoded entry by entry.
    pub spec: DeclaredSpec,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The labels its Secrets get.
    pub labels: BTreeMap<String, String>,
    /// Whether the cached GitLabSecrets was found current in this pass.
    pub primary_current: bool,
    /// What the pass found, in status order.
    pub results: Vec<SecretResult>,
    /// The events to record on the GitLabSecrets.
    pub events: Vec<Event>,
    /// The Secrets the other GitLabSecrets of the namespace declare (`namespace/name` →
    /// their names), read from the cache once, when first asked for.
    declared_by_others: OnceCell<Result<BTreeMap<String, Vec<String>>, ApiError>>,
}

impl<'a> Pass<'a> {
    /// A pass over `primary`, read from the cache.
    pub fn new(
        cluster: &'a dyn Cluster,
        planner: &'a dyn Planner,
        primary: GitLabSecrets,
        spec: DeclaredSpec,
    ) -> Self {
        let namespace = primary.metadata.namespace.clone();
        let name = primary.metadata.name.clone().unwrap_or_default();
        let labels = labels::copied(primary.metadata.labels.as_ref());
        Self {
            cluster,
            planner,
            primary,
            spec,
            namespace,
            name,
            labels,
            primary_current: false,
            results: Vec::new(),
            events: Vec::new(),
            declared_by_others: OnceCell::new(),
        }
    }

    /// The Secrets the other GitLabSecrets of the namespace declare, keyed `namespace/name`,
    /// each with the names of the GitLabSecrets declaring it: one list of the namespace's
    /// GitLabSecrets per pass, whatever the number of Secrets asked about.
    pub fn declared_by_others(&self) -> Result<&BTreeMap<String, Vec<String>>, &ApiError> {
        self.declared_by_others
            .get_or_init(|| {
                let all = self.cluster.list_json(
                    &KindRef::of::<GitLabSecrets>(),
                    self.namespace.as_deref(),
                    &ListOptions::default(),
                )?;
                let mut declared: BTreeMap<String, Vec<String>> = BTreeMap::new();
                for other in &all {
                    // This GitLabSecrets is told by its metadata alone, without reading its
                    // spec again. One that is not the CRD's shape declares nothing, as in
                    // the index.
                    let Ok(DeclaringMetadata {
                        name: Some(name), ..
                    }) = other.metadata()
                    else {
                        continue;
                    };
                    if name == self.name {
                        continue;
                    }
                    let Ok(other) = other.decode::<Declaring>() else {
                        continue;
                    };
                    for key in other.keys() {
                        declared.entry(key).or_default().push(name.clone());
                    }
                }
                Ok(declared)
            })
            .as_ref()
    }

    /// `namespace/name` of the GitLabSecrets.
    pub fn key(&self) -> String {
        wasm_operator_sdk::object::object_key(self.namespace.as_deref(), &self.name)
    }

    /// The readyUnits of the status entry of `secret`, as the cached status holds them.
    pub fn old_ready_units(&self, secret: &str) -> Vec<String> {
        self.primary
            .status
            .iter()
            .flat_map(|s| &s.secrets)
            .find(|s| s.name == secret)
            .map(|s| s.ready_units.clone())
            .unwrap_or_default()
    }
}
