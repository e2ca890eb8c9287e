//! The Secrets of spec.secrets.
//!
//! spec.secrets is grouped by name, in the order each name first appears: the entries of a
//! group are planned together as one Secret. A group with an entry that does not decode is
//! not planned: the first such entry is its failure.

use crate::declared::{DeclaredSecret, EntryError};
use crate::types::SecretEntry;

/// The entries of spec.secrets that name one Secret, in spec order.
#[derive(Debug, Clone, PartialEq)]
pub struct SecretGroup<'a> {
    /// The Secret's name.
    pub name: &'a str,
    /// Its entries that decode.
    pub entries: Vec<&'a SecretEntry>,
    /// Its first entry that does not decode.
    pub invalid: Option<&'a EntryError>,
}

impl SecretGroup<'_> {
    /// The entries as the JSON array the planner takes.
    pub fn entries_json(&self) -> String {
        // A Vec of serde structs with string keys always serializes.
        serde_json::to_string(&self.entries).unwrap_or_else(|_| "[]".to_owned())
    }
}

/// Groups spec.secrets by name, in the order of each name's first entry.
pub fn group_secrets(secrets: &[DeclaredSecret]) -> Vec<SecretGroup<'_>> {
    let mut groups: Vec<SecretGroup<'_>> = Vec::new();
    for declared in secrets {
        let index = match groups.iter().position(|g| g.name == declared.name) {
            Some(index) => index,
            None => {
                groups.push(SecretGroup {
                    name: &declared.name,
                    entries: Vec::new(),
                    invalid: None,
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[index];
        match &declared.entry {
            Ok(entry) => group.entries.push(entry),
            Err(error) => {
                group.invalid.get_or_insert(error);
            }
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(name: &str, key: &str) -> DeclaredSecret {
        DeclaredSecret {
            name: name.into(),
            entry: Ok(
                serde_json::from_value(serde_json::json!({"name": name, "generators": [
            {"type": "static", "key": key, "value": ""}]}))
                .expect("entry"),
            ),
        }
    }

    #[test]
    fn a_pass_groups_spec_secrets_by_name_in_the_order_names_first_appear() {
        let invalid = EntryError {
            field: "spec.secrets[3].generators".into(),
            message: "invalid type".into(),
        };
        let secrets = [
            entry("b", "1"),
            entry("a", "2"),
            entry("b", "3"),
            DeclaredSecret {
                name: "a".into(),
                entry: Err(invalid.clone()),
            },
        ];
        let groups = group_secrets(&secrets);
        assert_eq!(groups.len(), 2);
        assert_eq!(groups[0].name, "b");
        assert_eq!(groups[0].entries.len(), 2);
        assert_eq!(groups[0].invalid, None);
        assert_eq!(groups[1].name, "a");
        assert_eq!(groups[1].invalid, Some(&invalid));
        assert!(groups[0].entries_json().contains(r#""key":"3""#));
    }
}
