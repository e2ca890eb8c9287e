use k8s_openapi::api::core::v1::{
    ConfigMapVolumeSource, EmptyDirVolumeSource, PodSpec, SecretVolumeSource, Volume,
};
use serde_json::{Value, json};

use super::*;
use crate::testing::{FakeCluster, Op};

fn secret_volume(name: &str, secret: &str) -> Volume {
    Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource {
            secret_name: Some(secret.into()),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn config_map_volume(name: &str) -> Volume {
    Volume {
        name: name.into(),
        config_map: Some(ConfigMapVolumeSource {
            name: "cm".into(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn empty_dir_volume(name: &str) -> Volume {
    Volume {
        name: name.into(),
        empty_dir: Some(EmptyDirVolumeSource::default()),
        ..Default::default()
    }
}

fn pod(volumes: Vec<Volume>) -> PodSpec {
    PodSpec {
        volumes: Some(volumes),
        ..Default::default()
    }
}

#[test]
fn secret_name_for_volume_follows_its_behavior_list() {
    let cases: Vec<(&str, Option<PodSpec>, Option<&str>)> = vec![
        ("no spec yields nothing", None, None),
        (
            "a volume name absent from the volumes yields nothing",
            Some(pod(vec![secret_volume("other", "s")])),
            None,
        ),
        (
            "a Secret volume of that name yields its Secret",
            Some(pod(vec![
                secret_volume("other", "x"),
                secret_volume("config", "s"),
            ])),
            Some("s"),
        ),
        (
            "a ConfigMap volume of that name yields nothing and the walk stops there",
            Some(pod(vec![
                config_map_volume("config"),
                secret_volume("config", "s"),
            ])),
            None,
        ),
        (
            "an emptyDir volume of that name yields nothing and the walk stops there",
            Some(pod(vec![
                empty_dir_volume("config"),
                secret_volume("config", "s"),
            ])),
            None,
        ),
        (
            "the first of two Secret volumes of that name wins",
            Some(pod(vec![
                secret_volume("config", "first"),
                secret_volume("config", "second"),
            ])),
            Some("first"),
        ),
    ];
    for (case, spec, expected) in cases {
        assert_eq!(
            secret_name_for_volume(spec.as_ref(), "config"),
            expected,
            "{case}"
        );
    }
}

#[test]
fn section_present_matches_whole_lines_only() {
    let cases: &[(&str, &str, bool)] = &[
        ("a header at the start of the data", "[name]\nk = v\n", true),
        (
            "a header after a newline",
            "[DEFAULT]\n[name]\nk = v\n",
            true,
        ),
        ("a header at the end of the data", "k = v\n[name]", true),
        (
            "a header ended by CR LF",
            "[DEFAULT]\r\n[name]\r\nk = v\r\n",
            true,
        ),
        ("a longer section is no match", "[name2]\nk = v\n", false),
        (
            "a header inside an option value is no match",
            "k = [name]\n",
            false,
        ),
        ("a header followed by text is no match", "[name] x\n", false),
        (
            "a rejected hit does not stop a later whole-line match",
            "k = [name]\n[name2]\n[name]\n",
            true,
        ),
        ("absent header", "[other]\n", false),
        ("empty data", "", false),
    ];
    for (case, rendered, present) in cases {
        assert_eq!(
            section_present(rendered.as_bytes(), "[name]"),
            *present,
            "{case}"
        );
    }
}

fn deployment(volumes: Value) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "glance", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "glance"}},
            "template": {"spec": {"containers": [{"name": "api"}], "volumes": volumes}}}})
}

fn secret(name: &str, data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns"}, "data": data})
}

/// base64 of "[DEFAULT]\n[store]\nk = v\n".
const RENDERED: &str = "W0RFRkFVTFRdCltzdG9yZV0KayA9IHYK";

fn params(cluster: &FakeCluster) -> ObserveParams<'_> {
    ObserveParams {
        children: cluster,
        deployment_namespace: "ns",
        deployment_name: "glance",
        volume_name: "backends",
        data_key: "backends.conf",
        section_header: "[store]",
    }
}

#[test]
fn section_projected_reads_the_chain_and_treats_every_not_found_as_not_projected() {
    let mounted = json!([{"name": "backends", "secret": {"secretName": "glance-backends-1"}}]);
    let cases = [
        ("a missing Deployment", FakeCluster::new(), false),
        (
            "a Deployment without the volume",
            FakeCluster::new().with(deployment(json!([]))),
            false,
        ),
        (
            "a volume that is not Secret-backed",
            FakeCluster::new().with(deployment(json!([{"name": "backends", "emptyDir": {}}]))),
            false,
        ),
        (
            "a missing Secret",
            FakeCluster::new().with(deployment(mounted.clone())),
            false,
        ),
        (
            "an absent data key",
            FakeCluster::new()
                .with(deployment(mounted.clone()))
                .with(secret("glance-backends-1", json!({"other": RENDERED}))),
            false,
        ),
        (
            "a data key without the section",
            FakeCluster::new()
                .with(deployment(mounted.clone()))
                .with(secret(
                    "glance-backends-1",
                    json!({"backends.conf": "W0RFRkFVTFRdCg=="}),
                )),
            false,
        ),
        (
            "the section in the mounted Secret",
            FakeCluster::new()
                .with(deployment(mounted.clone()))
                .with(secret(
                    "glance-backends-1",
                    json!({"backends.conf": RENDERED}),
                )),
            true,
        ),
    ];
    for (case, cluster, projected) in cases {
        assert_eq!(
            section_projected(&params(&cluster)).expect(case),
            projected,
            "{case}"
        );
    }
}

#[test]
fn a_failed_read_that_is_not_not_found_is_wrapped() {
    let cluster = FakeCluster::new().failing(Op::Get, "glance", ApiError::Forbidden("no".into()));
    let err = section_projected(&params(&cluster)).expect_err("fails");
    assert_eq!(
        err.to_string(),
        "fetching Deployment ns/glance: forbidden: no"
    );
    let cluster = FakeCluster::new()
        .with(deployment(
            json!([{"name": "backends", "secret": {"secretName": "s"}}]),
        ))
        .failing(Op::Get, "s", ApiError::Unavailable("down".into()));
    let err = section_projected(&params(&cluster)).expect_err("fails");
    assert_eq!(
        err.to_string(),
        "fetching projection Secret ns/s: unavailable: down"
    );
}

#[test]
fn a_not_found_error_from_the_api_also_reads_as_not_projected() {
    let cluster =
        FakeCluster::new().failing(Op::Get, "glance", ApiError::NotFound("namespace".into()));
    assert!(!section_projected(&params(&cluster)).expect("not found is not an error"));
}
