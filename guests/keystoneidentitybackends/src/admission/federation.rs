//! The rules of `spec.mappings` and `spec.groups` (CobaltCore's webhook):
//!
//! | Rule | Field | Message |
//! |---|---|---|
//! | a rule has a local entry | `spec.mappings[i].local` | Required value: every mapping rule needs at least one local entry |
//! | a rule has a remote entry | `spec.mappings[i].remote` | Required value: every mapping rule needs at least one remote entry |
//! | a remote entry has a type | `spec.mappings[i].remote[j].type` | Required value: remote.type must be set |
//! | the type matches `^[A-Za-z0-9_-]+$` (it renders into the proxy's header directives) | `spec.mappings[i].remote[j].type` | remote.type must match … |
//! | a group has a name, once | `spec.groups[i].name` | Required value: group name must be set / Duplicate value |
//! | a role assignment has a role | `spec.groups[i].roleAssignments[j].role` | Required value: role must be set |
//! | a role assignment is on exactly one of a project or the domain | `spec.groups[i].roleAssignments[j]` | exactly one of project or domain must be set |

use std::collections::BTreeSet;

use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;

use crate::types::{FederationGroupSpec, MappingRuleSpec};

/// Whether `value` is letters, digits, `_` and `-` only (and not empty).
fn is_remote_type(value: &str) -> bool {
    !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Checks `spec.mappings`.
pub(super) fn check_mappings(rules: &[MappingRuleSpec], errors: &mut FieldErrors) {
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.mappings[{i}]");
        if rule.local.is_empty() {
            errors.required(
                &format!("{at}.local"),
                "every mapping rule needs at least one local entry",
            );
        }
        if rule.remote.is_empty() {
            errors.required(
                &format!("{at}.remote"),
                "every mapping rule needs at least one remote entry",
            );
        }
        for (j, remote) in rule.remote.iter().enumerate() {
            let field = format!("{at}.remote[{j}].type");
            if remote.type_.is_empty() {
                errors.required(&field, "remote.type must be set");
            } else if !is_remote_type(&remote.type_) {
                errors.invalid(
                    &field,
                    &json!(remote.type_),
                    "remote.type must match ^[A-Za-z0-9_-]+$ (it renders into Apache header directives)",
                );
            }
        }
    }
}

/// Checks `spec.groups`.
pub(super) fn check_groups(groups: &[FederationGroupSpec], errors: &mut FieldErrors) {
    let mut seen = BTreeSet::new();
    for (i, group) in groups.iter().enumerate() {
        let at = format!("spec.groups[{i}]");
        if group.name.is_empty() {
            errors.required(&format!("{at}.name"), "group name must be set");
        } else if !seen.insert(group.name.as_str()) {
            errors.duplicate(&format!("{at}.name"), &json!(group.name));
        }
        for (j, assignment) in group.role_assignments.iter().enumerate() {
            let field = format!("{at}.roleAssignments[{j}]");
            if assignment.role.is_empty() {
                errors.required(&format!("{field}.role"), "role must be set");
            }
            if assignment.project.is_some() == assignment.domain {
                errors.invalid(
                    &field,
                    &json!(assignment.role),
                    "exactly one of project or domain must be set",
                );
            }
        }
    }
}

#[cfg(test)]
#[path = "federation_tests.rs"]
mod tests;
