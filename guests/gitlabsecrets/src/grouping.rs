//! The Secrets of spec.secrets.
//!
//! spec.secrets is grouped by name, in the order each name first appears: the entries of a
//! group are planned together as one Secret.

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
