//! Which Secrets a GitLabSecrets declares.
//!
//! spec.secrets is grouped by name, in the order each name first appears: the entries of a
//! group are planned together as one Secret. The certificate sets add their CA, TLS and
//! chain Secrets, which the field index also names.

use wasm_operator_sdk::object::object_key;

use crate::types::{GitLabSecretsSpec, SecretEntry};

/// The entries of spec.secrets that name one Secret, in spec order.
#[derive(Debug, Clone, PartialEq)]
pub struct SecretGroup<'a> {
    /// The Secret's name.
    pub name: &'a str,
    /// Its entries.
    pub entries: Vec<&'a SecretEntry>,
}

impl SecretGroup<'_> {
    /// The entries as the JSON array the planner takes.
    pub fn entries_json(&self) -> String {
        // A Vec of serde structs with string keys always serializes.
        serde_json::to_string(&self.entries).unwrap_or_else(|_| "[]".to_owned())
    }
}

/// Groups spec.secrets by name, in the order of each name's first entry.
pub fn group_secrets(spec: &GitLabSecretsSpec) -> Vec<SecretGroup<'_>> {
    let mut groups: Vec<SecretGroup<'_>> = Vec::new();
    for entry in &spec.secrets {
        match groups.iter_mut().find(|g| g.name == entry.name) {
            Some(group) => group.entries.push(entry),
            None => groups.push(SecretGroup {
                name: &entry.name,
                entries: vec![entry],
            }),
        }
    }
    groups
}

/// The names of every Secret the spec declares: spec.secrets, then the CA, TLS and chain
/// Secrets of each certificate set; each once.
pub fn declared_secret_names(spec: &GitLabSecretsSpec) -> Vec<&str> {
    let mut names: Vec<&str> = Vec::new();
    let all = spec
        .secrets
        .iter()
        .map(|e| e.name.as_str())
        .chain(spec.certificates.iter().flat_map(|c| c.secret_names()));
    for name in all {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// The keys of the declared-secrets index: `namespace/name` of every declared Secret.
pub fn index_keys(namespace: Option<&str>, spec: &GitLabSecretsSpec) -> Vec<String> {
    declared_secret_names(spec)
        .into_iter()
        .map(|name| object_key(namespace, name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::CertificateEntry;

    fn entry(name: &str, key: &str) -> SecretEntry {
        serde_json::from_value(serde_json::json!({"name": name, "generators": [
            {"type": "static", "key": key, "value": ""}]}))
        .expect("entry")
    }

    #[test]
    fn a_pass_groups_spec_secrets_by_name_in_the_order_names_first_appear() {
        let spec = GitLabSecretsSpec {
            secrets: vec![entry("b", "1"), entry("a", "2"), entry("b", "3")],
            certificates: vec![],
        };
        let groups = group_secrets(&spec);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].name, "b");
        assert_eq!(groups[0].entries.len(), 2);
        assert_eq!(groups[1].name, "a");
        assert!(groups[0].entries_json().contains(r#""key":"3""#));
    }

    #[test]
    fn the_index_names_every_declared_secret_once_certificates_included() {
        let spec = GitLabSecretsSpec {
            secrets: vec![entry("a", "1"), entry("a", "2")],
            certificates: vec![CertificateEntry {
                ca_secret: "ca".into(),
                tls_secret: "tls".into(),
                chain_secret: "chain".into(),
                ..Default::default()
            }],
        };
        assert_eq!(
            index_keys(Some("ns"), &spec),
            ["ns/a", "ns/ca", "ns/tls", "ns/chain"]
        );
    }
}
