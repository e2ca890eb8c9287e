//! A scenario's own reads and writes on the API server: apply and delete its documents,
//! read what it expects. Kinds are found through API discovery, so a scenario names
//! objects by apiVersion and kind only, as manifests do.

use std::time::{Duration, Instant};

use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::Value;
use wasm_operator_types::split_api_version;

use super::files::Document;
use crate::cluster::discovery::{Discovery, ServedKind};

/// The field manager of what a scenario applies.
pub(crate) const FIELD_MANAGER: &str = "wasm-operator-scenario";

/// How long a kind may take to be served (a CRD applied just before).
const SERVED_WITHIN: Duration = Duration::from_secs(10);

/// The namespace of a namespaced object that names none, as kubectl's.
const DEFAULT_NAMESPACE: &str = "default";

/// The scenario's client.
pub(crate) struct Objects {
    client: kube::Client,
    discovery: Discovery,
}

impl Objects {
    pub(crate) fn new(client: kube::Client) -> Self {
        Self {
            discovery: Discovery::new(client.clone()),
            client,
        }
    }

    /// How `api_version`/`kind` is served, waiting [`SERVED_WITHIN`] for it to be.
    async fn served(&self, api_version: &str, kind: &str) -> Result<ServedKind, String> {
        let deadline = Instant::now() + SERVED_WITHIN;
        loop {
            match self.discovery.kind(api_version, kind).await {
                Ok(Some(served)) => return Ok(served),
                Ok(None) if Instant::now() < deadline => {}
                Ok(None) => {
                    return Err(format!(
                        "{api_version} {kind} is not served by the API server (is its \
                         CustomResourceDefinition among the given objects?)"
                    ));
                }
                Err(error) => {
                    return Err(format!("API discovery of {api_version} {kind}: {error}"));
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            self.discovery.invalidate();
        }
    }

    /// The API of `api_version`/`kind` in `namespace` (every namespace for `None`), and
    /// whether the kind is namespaced.
    async fn api(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
    ) -> Result<(Api<DynamicObject>, bool), String> {
        let served = self.served(api_version, kind).await?;
        let (group, version) = split_api_version(api_version);
        let resource = ApiResource {
            group: group.into(),
            version: version.into(),
            api_version: api_version.into(),
            kind: kind.into(),
            plural: served.plural,
        };
        let api = match (served.namespaced, namespace) {
            (true, Some(namespace)) => {
                Api::namespaced_with(self.client.clone(), namespace, &resource)
            }
            _ => Api::all_with(self.client.clone(), &resource),
        };
        Ok((api, served.namespaced))
    }

    /// The API of a named document's object, its namespace defaulted as kubectl does.
    async fn api_of(&self, document: &Document) -> Result<Api<DynamicObject>, String> {
        let namespace = document.namespace().unwrap_or(DEFAULT_NAMESPACE);
        Ok(self
            .api(document.api_version(), document.kind(), Some(namespace))
            .await?
            .0)
    }

    /// Server-side applies `document` (forcing conflicts: the scenario owns what it says).
    pub(crate) async fn apply(&self, document: &Document) -> Result<(), String> {
        let api = self.api_of(document).await?;
        let name = document.name().unwrap_or_default();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        api.patch(name, &params, &Patch::Apply(&document.object))
            .await
            .map(drop)
            .map_err(|e| format!("apply: {}", message(e)))
    }

    /// Deletes `document`'s object; one that is not there is an error of the scenario.
    pub(crate) async fn delete(&self, document: &Document) -> Result<(), String> {
        let api = self.api_of(document).await?;
        let name = document.name().unwrap_or_default();
        api.delete(name, &DeleteParams::default())
            .await
            .map(drop)
            .map_err(|e| format!("delete: {}", message(e)))
    }

    /// The object a named document names, if it is there.
    pub(crate) async fn get(&self, document: &Document) -> Result<Option<Value>, String> {
        let api = self.api_of(document).await?;
        let name = document.name().unwrap_or_default();
        let found = api
            .get_opt(name)
            .await
            .map_err(|e| format!("get: {}", message(e)))?;
        found
            .map(|o| serde_json::to_value(o).map_err(|e| e.to_string()))
            .transpose()
    }

    /// The objects of a document's kind, in its namespace when it names one.
    pub(crate) async fn list(&self, document: &Document) -> Result<Vec<Value>, String> {
        let (api, _) = self
            .api(
                document.api_version(),
                document.kind(),
                document.namespace(),
            )
            .await?;
        let list = api
            .list(&ListParams::default())
            .await
            .map_err(|e| format!("list: {}", message(e)))?;
        list.items
            .into_iter()
            .map(|o| serde_json::to_value(o).map_err(|e| e.to_string()))
            .collect()
    }

    /// The documents' namespaces that are not there yet, as Namespace objects to apply
    /// first (kubectl would refuse them; a scenario states only what matters to it).
    pub(crate) async fn missing_namespaces(&self, documents: &[Document]) -> Vec<Document> {
        let mut names: Vec<&str> = documents.iter().filter_map(Document::namespace).collect();
        names.sort_unstable();
        names.dedup();
        let mut missing = Vec::new();
        for name in names {
            let declared = documents
                .iter()
                .any(|d| d.kind() == "Namespace" && d.name() == Some(name));
            let namespace = Document {
                path: "(namespace of the given objects)".into(),
                index: 1,
                object: serde_json::json!({
                    "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                }),
            };
            if !declared && matches!(self.get(&namespace).await, Ok(None)) {
                missing.push(namespace);
            }
        }
        missing
    }
}

/// The order a stage's objects are applied in: CRDs, then Namespaces, then the rest as
/// written.
pub(crate) fn apply_order(documents: &[Document]) -> Vec<&Document> {
    let rank = |d: &Document| match d.kind() {
        "CustomResourceDefinition" => 0,
        "Namespace" => 1,
        _ => 2,
    };
    let mut ordered: Vec<&Document> = documents.iter().collect();
    ordered.sort_by_key(|d| rank(d));
    ordered
}

/// The API server's message, without the client's wrapping.
fn message(error: kube::Error) -> String {
    match error {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => other.to_string(),
    }
}
