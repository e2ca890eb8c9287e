use serde_json::json;
use wasm_operator_sdk::ClusterExt as _;

use super::*;
use crate::testing::{
    NAME, backend, cluster, cluster_with_backends, pass, pass_condition, s3_secret, secret,
    secret_text,
};

fn state(
    cluster: &wasm_operator_sdk::testing::FakeCluster,
) -> ((String, String, String), Projection) {
    let mut pass = pass(cluster);
    assert_eq!(
        run(&mut pass).expect("runs"),
        None,
        "the step never requeues"
    );
    (pass_condition(&pass, BACKENDS_READY), pass.projection)
}

fn t(status: &str, reason: &str, message: &str) -> (String, String, String) {
    (status.into(), reason.into(), message.into())
}

#[test]
fn the_default_rule_needs_exactly_one_credential_ready_default() {
    let none = "No attached, credential-ready backend is marked isDefault; exactly one is required";
    let two = "More than one attached, credential-ready backend is marked isDefault (a, b); exactly one is required";
    // (backends as (name, credential-ready, default), condition, valid)
    type Row<'a> = (Vec<(&'a str, bool, bool)>, (String, String, String), bool);
    let table: Vec<Row<'_>> = vec![
        (vec![], t("False", "NoDefaultBackend", none), false),
        (
            vec![("a", true, false)],
            t("False", "NoDefaultBackend", none),
            false,
        ),
        // A default whose credentials are not ready is no candidate.
        (
            vec![("a", false, true), ("b", true, false)],
            t("False", "NoDefaultBackend", none),
            false,
        ),
        (
            vec![("a", true, true), ("b", true, true)],
            t("False", "NoDefaultBackend", two),
            false,
        ),
        (
            vec![("a", true, true), ("b", true, false)],
            t(
                "True",
                "AllBackendsProjected",
                "All attached backends are projected",
            ),
            true,
        ),
    ];
    for (backends, want, valid) in table {
        let mut cluster = cluster();
        for (name, ready, default) in &backends {
            cluster = cluster
                .with(backend(name, *ready, *default))
                .with(s3_secret(&format!("{name}-s3")));
        }
        let (condition, projection) = state(&cluster);
        assert_eq!(condition, want, "{backends:?}");
        assert_eq!(projection.valid, valid, "{backends:?}");
        // Every attached backend's host reaches the egress set, valid or not.
        assert_eq!(projection.hosts.len(), backends.len(), "{backends:?}");
    }
}

#[test]
fn every_credential_ready_backend_is_a_section_of_the_backends_secret_sorted_by_name() {
    let cluster = cluster_with_backends(&["zeta", "alpha"]);
    let (_, projection) = state(&cluster);
    assert!(
        projection.secret_name.starts_with("glance-backends-"),
        "{projection:?}"
    );
    assert_eq!(projection.enabled_backends, "alpha:s3,zeta:s3");
    assert_eq!(projection.default_backend, "zeta");
    let rendered = secret_text(&cluster, &projection.secret_name, BACKENDS_CONF);
    assert_eq!(
        rendered,
        "[alpha]\n\
         s3_store_access_key = AKIA-TEST\n\
         s3_store_bucket = alpha\n\
         s3_store_bucket_url_format = path\n\
         s3_store_host = https://alpha.s3.example.com\n\
         s3_store_secret_key = s3-secret\n\
         \n\
         [zeta]\n\
         s3_store_access_key = AKIA-TEST\n\
         s3_store_bucket = zeta\n\
         s3_store_bucket_url_format = path\n\
         s3_store_host = https://zeta.s3.example.com\n\
         s3_store_secret_key = s3-secret\n"
    );
}

#[test]
fn optional_s3_fields_render_when_set_and_extra_options_never_override_the_operator_s() {
    let mut with_options = backend("a", true, true);
    with_options["spec"]["s3"]["region"] = json!("eu-de-1");
    with_options["spec"]["s3"]["bucketURLFormat"] = json!("virtual");
    with_options["spec"]["s3"]["createBucketOnPut"] = json!(true);
    with_options["spec"]["s3"]["largeObjectSize"] = json!(100);
    with_options["spec"]["s3"]["largeObjectChunkSize"] = json!(10);
    with_options["spec"]["extraOptions"] =
        json!({"s3_store_bucket": "hijacked", "s3_store_cacert": "/etc/ssl/ca.pem"});
    let cluster = cluster().with(with_options).with(s3_secret("a-s3"));
    let (_, projection) = state(&cluster);
    let rendered = secret_text(&cluster, &projection.secret_name, BACKENDS_CONF);
    for line in [
        "s3_store_region_name = eu-de-1",
        "s3_store_bucket_url_format = virtual",
        "s3_store_create_bucket_on_put = true",
        "s3_store_large_object_size = 100",
        "s3_store_large_object_chunk_size = 10",
        "s3_store_bucket = a\n",
        "s3_store_cacert = /etc/ssl/ca.pem",
    ] {
        assert!(rendered.contains(line), "{line:?} in\n{rendered}");
    }
    assert!(!rendered.contains("hijacked"), "{rendered}");
}

#[test]
fn a_backend_whose_credentials_are_not_ready_waits_while_the_others_are_projected() {
    let cluster = cluster_with_backends(&["a"])
        .with(backend("b", false, false))
        .with(s3_secret("b-s3"));
    let (condition, projection) = state(&cluster);
    assert_eq!(
        condition,
        t(
            "False",
            "WaitingForBackends",
            "Waiting for backends: b (credentials not ready)"
        )
    );
    assert_eq!(projection.enabled_backends, "a:s3");
    assert!(projection.valid);
}

#[test]
fn a_backend_with_a_faulty_secret_is_skipped_with_a_warning_and_the_others_projected() {
    // (the backend's Secret, why it is skipped)
    let table = [
        (None, "Secret openstack/b-s3 not found"),
        (
            Some(secret("b-s3", &[("access-key-id", "AKIA")])),
            "Secret openstack/b-s3 has no key \"secret-access-key\"",
        ),
        (
            Some(secret(
                "b-s3",
                &[
                    ("access-key-id", "AKIA\n[evil]"),
                    ("secret-access-key", "s"),
                ],
            )),
            "[glance_store] option name or value contains a newline or carriage-return character",
        ),
    ];
    for (faulty, why) in table {
        let mut cluster = cluster_with_backends(&["a"]).with(backend("b", true, false));
        if let Some(faulty) = faulty {
            cluster = cluster.with(faulty);
        }
        let (condition, projection) = state(&cluster);
        assert_eq!(
            condition,
            t(
                "False",
                "WaitingForBackends",
                &format!("Waiting for backends: b ({why})")
            ),
        );
        assert_eq!(projection.enabled_backends, "a:s3", "{why}");
        let events = cluster.events();
        assert_eq!(events.len(), 1, "{why}: {events:?}");
        assert_eq!(events[0].1.reason, "GlanceBackendSkipped");
        assert_eq!(events[0].1.note, format!("Skipping backend b: {why}"));
        let rendered = secret_text(&cluster, &projection.secret_name, BACKENDS_CONF);
        assert!(
            !rendered.contains("[b]") && !rendered.contains("evil"),
            "{rendered}"
        );
    }
}

#[test]
fn a_deleting_backend_is_de_projected_at_once() {
    let cluster = cluster_with_backends(&["a", "b"]);
    let (_, before) = state(&cluster);
    cluster.change("GlanceBackend", "b", |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-03T09:00:00Z");
        o["metadata"]["finalizers"] = json!(["hold"]);
    });
    let (condition, after) = state(&cluster);
    assert_eq!(condition.1, "AllBackendsProjected");
    assert_eq!(after.enabled_backends, "a:s3");
    assert_ne!(
        after.secret_name, before.secret_name,
        "a new Secret name rolls the pods"
    );
}

#[test]
fn backends_of_another_glance_are_not_read() {
    let mut other = backend("other", true, true);
    other["spec"]["glanceRef"]["name"] = json!("not-this-one");
    let cluster = cluster_with_backends(&["a"]).with(other);
    let (_, projection) = state(&cluster);
    assert_eq!(projection.enabled_backends, "a:s3");
}

#[test]
fn the_backends_secret_is_the_same_across_passes_and_superseded_ones_are_pruned_to_three() {
    let cluster = cluster_with_backends(&["a"]);
    let (_, first) = state(&cluster);
    cluster.clear_calls();
    let (_, again) = state(&cluster);
    assert_eq!(again.secret_name, first.secret_name);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
    for bucket in ["b1", "b2", "b3", "b4"] {
        cluster.change("GlanceBackend", "a", |o| {
            o["spec"]["s3"]["bucket"] = json!(bucket)
        });
        state(&cluster);
    }
    let names: Vec<String> = cluster
        .names("Secret")
        .into_iter()
        .filter(|n| n.starts_with(&format!("{NAME}-backends-")))
        .collect();
    // Five Secrets were made: the current one and three superseded ones stay.
    assert_eq!(
        names.len(),
        4,
        "the current and three superseded: {names:?}"
    );
}

#[test]
fn without_the_glancebackend_kind_served_nothing_is_attached() {
    let cluster = cluster().not_serving("glancebackends");
    let (condition, projection) = state(&cluster);
    assert_eq!(condition.1, "NoDefaultBackend");
    assert!(!projection.valid);
    assert!(
        cluster
            .get_typed::<k8s_openapi::api::core::v1::Secret>(Some("openstack"), "glance-backends")
            .expect("reads")
            .is_none()
    );
}
