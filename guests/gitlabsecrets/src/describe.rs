//! What the host needs to run the reconciler: [`describe`] and the field index.
//!
//! The host watches GitLabSecrets for a change of generation or labels, and every Secret;
//! a changed or deleted Secret maps, through the [`DECLARED_SECRETS`] index, to the
//! GitLabSecrets that declare it. The verbs are exactly those a pass uses; events are the
//! host's own writes and need no declaration.

use k8s_openapi::api::core::v1::Secret;
use serde::Deserialize;
use serde_json::Value;
use wasm_operator_sdk::{
    Description, FieldIndex, KindRef, Mapping, Permission, Predicate, Verb, Watch,
};

use crate::types::GitLabSecrets;
use wasm_operator_sdk::object::object_key;

/// The plugin's name.
pub const NAME: &str = "gitlabsecrets";
/// The field index of the Secrets a GitLabSecrets declares, as `namespace/name`.
pub const DECLARED_SECRETS: &str = "declared-secrets";

/// The description the host loads the plugin with.
pub fn describe() -> Description {
    let primary = KindRef::of::<GitLabSecrets>();
    let secret = KindRef::of::<Secret>();
    Description {
        name: NAME.into(),
        version: env!("CARGO_PKG_VERSION").into(),
        field_manager: NAME.into(),
        primary: primary.clone(),
        primary_predicates: vec![Predicate::GenerationChanged, Predicate::LabelsChanged],
        watches: vec![Watch {
            kind: secret.clone(),
            mapping: Mapping::FieldIndex(DECLARED_SECRETS.into()),
            optional: false,
        }],
        watched_indexes: vec![],
        subresources: vec![],
        admission: vec![],
        egress: vec![],
        indexes: vec![FieldIndex {
            name: DECLARED_SECRETS.into(),
            description: "namespace/name of every Secret the GitLabSecrets declares: \
                          spec.secrets and the CA, TLS and chain Secrets of spec.certificates"
                .into(),
        }],
        permissions: vec![
            Permission {
                kind: primary,
                verbs: vec![Verb::Get, Verb::List, Verb::Watch, Verb::UpdateStatus],
            },
            Permission {
                kind: secret,
                verbs: vec![
                    Verb::Get,
                    Verb::List,
                    Verb::Watch,
                    Verb::Create,
                    Verb::Patch,
                ],
            },
        ],
        targets: Default::default(),
        primary_selector: None,
    }
}

/// The keys of field index `name` for a GitLabSecrets; none for another index.
pub fn index(name: &str, object: &Value) -> Vec<String> {
    if name != DECLARED_SECRETS {
        return Vec::new();
    }
    Declaring::deserialize(object).map_or_else(|_| Vec::new(), |d| d.keys())
}

/// What the [`DECLARED_SECRETS`] index reads of a GitLabSecrets: its name and namespace
/// and the Secret names of its entries, nothing else, so a Secret still maps to a
/// GitLabSecrets whose generators this version of the types would not decode. (An object
/// whose entries are not the CRD's shape, which the API server does not store, has none.)
#[derive(Debug, Default, Deserialize)]
pub struct Declaring {
    #[serde(default)]
    pub metadata: DeclaringMetadata,
    #[serde(default)]
    spec: DeclaringSpec,
}

/// See [`Declaring`].
#[derive(Debug, Default, Deserialize)]
pub struct DeclaringMetadata {
    pub name: Option<String>,
    pub namespace: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct DeclaringSpec {
    #[serde(default)]
    secrets: Vec<NamedEntry>,
    #[serde(default)]
    certificates: Vec<CertificateNames>,
}

#[derive(Debug, Deserialize)]
struct NamedEntry {
    name: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CertificateNames {
    ca_secret: Option<String>,
    tls_secret: Option<String>,
    chain_secret: Option<String>,
}

impl Declaring {
    /// `namespace/name` of every Secret it declares, once each, in spec order.
    pub fn keys(&self) -> Vec<String> {
        let secrets = self.spec.secrets.iter().map(|e| &e.name);
        let certificates = self
            .spec
            .certificates
            .iter()
            .flat_map(|c| [&c.ca_secret, &c.tls_secret, &c.chain_secret]);
        let mut keys: Vec<String> = Vec::new();
        for name in secrets.chain(certificates).flatten() {
            let key = object_key(self.metadata.namespace.as_deref(), name);
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn it_watches_generation_and_labels_and_every_secret_through_the_index() {
        let d = describe();
        assert_eq!(d.name, "gitlabsecrets");
        assert_eq!(d.primary.api_version, "apps.gitlab.com/v2alpha1");
        assert_eq!(d.primary.plural, "gitlabsecrets");
        assert!(d.primary.namespaced);
        assert_eq!(
            d.primary_predicates,
            [Predicate::GenerationChanged, Predicate::LabelsChanged]
        );
        assert_eq!(d.watches.len(), 1);
        assert_eq!(d.watches[0].kind.kind, "Secret");
        assert_eq!(
            d.watches[0].mapping,
            Mapping::FieldIndex(DECLARED_SECRETS.into())
        );
    }

    #[test]
    fn it_declares_exactly_the_verbs_a_pass_uses_and_no_update_or_delete_of_a_secret() {
        let d = describe();
        let verbs = |kind: &str| {
            d.permissions
                .iter()
                .find(|p| p.kind.kind == kind)
                .map(|p| p.verbs.clone())
                .unwrap_or_default()
        };
        assert_eq!(d.permissions.len(), 2);
        assert_eq!(
            verbs("GitLabSecrets"),
            [Verb::Get, Verb::List, Verb::Watch, Verb::UpdateStatus]
        );
        assert_eq!(
            verbs("Secret"),
            [
                Verb::Get,
                Verb::List,
                Verb::Watch,
                Verb::Create,
                Verb::Patch
            ]
        );
    }

    #[test]
    fn the_index_names_every_declared_secret_once_certificates_included() {
        // A generator type the types do not know does not keep the Secret from mapping.
        let object = json!({"metadata": {"name": "demo", "namespace": "gitlab"}, "spec": {
            "secrets": [{"name": "a", "generators": [{"type": "sshHostKeys"}]},
                        {"name": "a", "generators": [{"type": "future"}]}],
            "certificates": [{"authority": {"algorithm": "rsa"}, "domain": "example.com",
                "caSecret": "ca", "caKey": "k", "tlsSecret": "tls", "chainSecret": "chain",
                "chainKey": "c"}]}});
        assert_eq!(
            index(DECLARED_SECRETS, &object),
            ["gitlab/a", "gitlab/ca", "gitlab/tls", "gitlab/chain"]
        );
        assert!(index("other", &object).is_empty());
    }
}
