use serde_json::json;

use crate::admission::tests::{assert_create_table, oidc};

#[test]
fn a_mapping_rule_needs_local_and_remote_entries_with_header_safe_types() {
    assert_create_table(
        oidc,
        &[
            (&[], &[]),
            (
                &[("/spec/mappings/0/local", json!([]))],
                &[
                    "spec.mappings[0].local: Required value: every mapping rule needs at least one local entry",
                ],
            ),
            (
                &[("/spec/mappings/0/remote", json!([]))],
                &[
                    "spec.mappings[0].remote: Required value: every mapping rule needs at least one remote entry",
                ],
            ),
            (
                &[(
                    "/spec/mappings/0/remote",
                    json!([{"type": ""}, {"type": "HTTP_OIDC_GROUPS\nRequestHeader set X y"}]),
                )],
                &[
                    "spec.mappings[0].remote[0].type: Required value: remote.type must be set",
                    "spec.mappings[0].remote[1].type: Invalid value: \"HTTP_OIDC_GROUPS\\nRequestHeader set X y\": remote.type must match ^[A-Za-z0-9_-]+$ (it renders into Apache header directives)",
                ],
            ),
        ],
    );
}

#[test]
fn a_group_is_named_once_and_each_role_is_on_a_project_or_the_domain() {
    assert_create_table(
        oidc,
        &[
            (&[], &[]),
            (
                &[("/spec/groups", json!([{"name": ""}]))],
                &["spec.groups[0].name: Required value: group name must be set"],
            ),
            (
                &[(
                    "/spec/groups",
                    json!([{"name": "members"}, {"name": "members"}]),
                )],
                &["spec.groups[1].name: Duplicate value: \"members\""],
            ),
            (
                &[(
                    "/spec/groups/0/roleAssignments",
                    json!([{"role": "", "domain": true}]),
                )],
                &["spec.groups[0].roleAssignments[0].role: Required value: role must be set"],
            ),
            (
                &[(
                    "/spec/groups/0/roleAssignments",
                    json!([
                        {"role": "member"},
                        {"role": "admin", "domain": true, "project": {"name": "demo"}}
                    ]),
                )],
                &[
                    "spec.groups[0].roleAssignments[0]: Invalid value: \"member\": exactly one of project or domain must be set",
                    "spec.groups[0].roleAssignments[1]: Invalid value: \"admin\": exactly one of project or domain must be set",
                ],
            ),
        ],
    );
}
