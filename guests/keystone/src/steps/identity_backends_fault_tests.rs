//! The backends the step cannot project: pending with why, faults warned once.

use serde_json::json;
use wasm_operator_sdk::testing::FakeCluster;

use super::*;

#[test]
fn backends_that_cannot_be_projected_are_waited_for_by_name_with_why() {
    let not_ready = json!({"status": {"conditions": [{"type": "DomainReady", "status": "False"}]}});
    let cases: Vec<(&str, Vec<Value>, &str)> = vec![
        (
            "every member of a case-insensitive domain collision",
            vec![ldap("a", "Corp"), ldap("b", "corp")],
            "a (duplicate domain \"Corp\" also claimed by a, b); \
             b (duplicate domain \"corp\" also claimed by a, b)",
        ),
        (
            "a domain that is not ready",
            vec![with(ldap("a", "corp"), not_ready.clone())],
            "a (domain \"corp\" not ready)",
        ),
        (
            "a domain without a DomainReady condition",
            vec![with(
                ldap("a", "corp"),
                json!({"status": {"conditions": []}}),
            )],
            "a (domain \"corp\" not ready)",
        ),
        (
            "a backend of another Keystone is not listed",
            vec![
                with(
                    ldap("a", "corp"),
                    json!({"spec": {"keystoneRef": {"name": "other"}}}),
                ),
                with(ldap("b", "corp"), not_ready.clone()),
            ],
            "b (domain \"corp\" not ready)",
        ),
    ];
    for (case, backends, pending) in cases {
        let cluster = cluster_with(backends);
        let pass = run_over(&cluster, &keystone());
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY),
            (
                "False".into(),
                "WaitingForBackends".into(),
                format!("Waiting for identity backends: {pending}")
            ),
            "{case}"
        );
        assert!(pass.domains_secret_name.is_empty(), "{case}");
        assert!(
            domains_secrets(&cluster).is_empty(),
            "{case}: nothing projected"
        );
        assert!(events(&cluster).is_empty(), "{case}: no event");
    }
}

#[test]
fn a_render_fault_skips_the_backend_with_one_warning_until_the_message_changes() {
    let cluster = FakeCluster::new()
        .with(deployment(json!([]), 3))
        .with(ldap("corp-ldap", "corp"));
    let first = run_over(&cluster, &keystone());
    let why = "getting Secret ns/bind: not found";
    assert_eq!(
        condition(&first, IDENTITY_BACKENDS_READY),
        (
            "False".into(),
            "WaitingForBackends".into(),
            format!("Waiting for identity backends: corp-ldap ({why})")
        )
    );
    assert_eq!(
        events(&cluster),
        [(
            "Warning".into(),
            "IdentityBackendSkipped".into(),
            format!("Skipping identity backend corp-ldap: {why}")
        )]
    );
    assert!(domains_secrets(&cluster).is_empty());
    cluster.clear_calls();
    let status = serde_json::to_value(&first.keystone).expect("encodes");
    let second = run_over(&cluster, &status);
    assert_eq!(
        condition(&second, IDENTITY_BACKENDS_READY).1,
        "WaitingForBackends"
    );
    assert!(
        events(&cluster).is_empty(),
        "the same message: no second event"
    );
    assert_eq!(cluster.write_log(), Vec::<String>::new());
}

#[test]
fn injected_lines_and_oversized_renders_skip_the_backend_with_a_warning() {
    let huge = "x".repeat(300 * 1024);
    let oversized = with(
        ldap("a", "corp"),
        json!({"spec": {"extraOptions": {"query_scope": huge}}}),
    );
    let size = {
        let backend: IdentityBackend = serde_json::from_value(oversized.clone()).expect("decodes");
        let cluster = cluster_with(vec![]);
        ldap::render(&cluster, "ns", &backend)
            .expect("reads")
            .expect("renders")
            .size()
    };
    let cases = [
        (
            "a newline in an extra option",
            with(
                ldap("a", "corp"),
                json!({"spec": {"extraOptions": {"query_scope": "sub\nx = y"}}}),
            ),
            "[ldap] option \"query_scope\": [ldap] option name or value contains a newline or \
             carriage-return character"
                .to_owned(),
            None,
        ),
        (
            "a rendered file over 256 KiB",
            oversized,
            format!("rendered config too large: {size} bytes"),
            Some(format!(
                "rendered config is {size} bytes, exceeding the 262144-byte per-domain budget"
            )),
        ),
    ];
    for (case, backend, why, note) in cases {
        let cluster = cluster_with(vec![backend]);
        let pass = run_over(&cluster, &keystone());
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY).2,
            format!("Waiting for identity backends: a ({why})"),
            "{case}"
        );
        let note = note.unwrap_or(why);
        assert_eq!(
            events(&cluster),
            [(
                "Warning".into(),
                "IdentityBackendSkipped".into(),
                format!("Skipping identity backend a: {note}")
            )],
            "{case}"
        );
        assert!(domains_secrets(&cluster).is_empty(), "{case}");
    }
}

#[test]
fn a_backend_whose_spec_cannot_be_decoded_is_skipped_with_a_warning() {
    let bad = with(
        ldap("a", "corp"),
        json!({"spec": {"ldap": {"pool": {"size": "ten"}}}}),
    );
    let cluster = cluster_with(vec![bad, ldap("b", "sales")]);
    let pass = run_over(&cluster, &keystone());
    let message = condition(&pass, IDENTITY_BACKENDS_READY).2;
    assert!(
        message.starts_with("Waiting for identity backends: a (spec cannot be read: "),
        "{message}"
    );
    assert_eq!(cluster.event_reasons(), ["IdentityBackendSkipped"]);
    let data = cluster.secret_data(&pass.domains_secret_name);
    assert_eq!(data.keys().collect::<Vec<_>>(), ["keystone.sales.conf"]);
}
