use serde_json::{Value, json};

use super::*;
use crate::blocks::conditions::find;
use crate::error::ApiError;
use crate::testing::{Call, FakeCluster, Op};

fn spec(kind: &str, name: &str) -> SecretStoreRefSpec {
    SecretStoreRefSpec {
        kind: kind.into(),
        name: name.into(),
    }
}

fn store(kind: &str, name: &str, namespace: Option<&str>, ready: &str) -> Value {
    let mut metadata = json!({"name": name});
    if let Some(ns) = namespace {
        metadata["namespace"] = json!(ns);
    }
    json!({"apiVersion": "external-secrets.io/v1", "kind": kind, "metadata": metadata,
        "status": {"conditions": [{"type": "Ready", "status": ready}]}})
}

fn cluster() -> FakeCluster {
    FakeCluster::new()
        .with(store(
            CLUSTER_SECRET_STORE,
            "openbao-cluster-store",
            None,
            "True",
        ))
        .with(store(CLUSTER_SECRET_STORE, "broken", None, "False"))
        .with(store(SECRET_STORE, "tenant", Some("ns"), "True"))
        .with(store(SECRET_STORE, "tenant-broken", Some("ns"), "False"))
}

#[test]
fn effective_store_ref_defaults_an_absent_or_kindless_ref_to_the_shared_cluster_store() {
    let default = spec(CLUSTER_SECRET_STORE, OPENBAO_CLUSTER_STORE);
    let cases = [
        (
            "an absent ref is the shared cluster store",
            None,
            default.clone(),
        ),
        (
            "a ref without kind is the shared cluster store",
            Some(spec("", "mine")),
            default.clone(),
        ),
        (
            "a SecretStore ref is kept",
            Some(spec(SECRET_STORE, "tenant")),
            spec(SECRET_STORE, "tenant"),
        ),
        (
            "a ClusterSecretStore ref is kept",
            Some(spec(CLUSTER_SECRET_STORE, "other")),
            spec(CLUSTER_SECRET_STORE, "other"),
        ),
    ];
    for (case, reference, effective) in cases {
        assert_eq!(effective_store_ref(reference.as_ref()), effective, "{case}");
    }
}

#[test]
fn is_store_ref_ready_dispatches_on_the_kind() {
    let cases = [
        (
            "a ready ClusterSecretStore by name",
            spec(CLUSTER_SECRET_STORE, "openbao-cluster-store"),
            true,
        ),
        (
            "a not ready ClusterSecretStore",
            spec(CLUSTER_SECRET_STORE, "broken"),
            false,
        ),
        (
            "a missing ClusterSecretStore is not ready",
            spec(CLUSTER_SECRET_STORE, "gone"),
            false,
        ),
        (
            "a ready SecretStore in the namespace",
            spec(SECRET_STORE, "tenant"),
            true,
        ),
        (
            "a not ready SecretStore",
            spec(SECRET_STORE, "tenant-broken"),
            false,
        ),
        (
            "a missing SecretStore is not ready",
            spec(SECRET_STORE, "gone"),
            false,
        ),
    ];
    for (case, reference, ready) in cases {
        assert_eq!(
            is_store_ref_ready(&cluster(), &reference, "ns").expect(case),
            ready,
            "{case}"
        );
    }
}

#[test]
fn a_secret_store_is_looked_up_in_the_given_namespace_only() {
    assert!(!is_secret_store_ready(&cluster(), "tenant", "elsewhere").expect("ok"));
}

#[test]
fn an_unknown_store_kind_is_an_error() {
    let err = is_store_ref_ready(&cluster(), &spec("Vault", "x"), "ns").expect_err("unknown");
    assert_eq!(
        err.to_string(),
        "unknown secret store kind \"Vault\" (want SecretStore or ClusterSecretStore)"
    );
}

#[test]
fn a_store_read_failure_is_an_error_naming_the_store() {
    let c = cluster().failing(Op::Get, "broken", ApiError::Unavailable("down".into()));
    let err = is_cluster_secret_store_ready(&c, "broken").expect_err("fails");
    assert_eq!(
        err.to_string(),
        "getting ClusterSecretStore broken: unavailable: down"
    );
}

#[test]
fn the_gate_passes_a_ready_store_without_touching_the_conditions() {
    let mut conditions = Vec::new();
    let ready = gate_store_ready(
        &cluster(),
        &spec(SECRET_STORE, "tenant"),
        "ns",
        true,
        &mut conditions,
        3,
        "SecretsReady",
    )
    .expect("ok");
    assert!(ready);
    assert!(conditions.is_empty());
}

#[test]
fn the_gate_sets_secret_store_not_ready_naming_kind_and_name() {
    let cases = [
        (
            spec(CLUSTER_SECRET_STORE, "broken"),
            "ClusterSecretStore \"broken\" is not ready; upstream secret backend unreachable",
        ),
        (
            spec(SECRET_STORE, "tenant-broken"),
            "SecretStore \"tenant-broken\" is not ready; upstream secret backend unreachable",
        ),
    ];
    for (reference, message) in cases {
        let mut conditions = Vec::new();
        let ready = gate_store_ready(
            &cluster(),
            &reference,
            "ns",
            false,
            &mut conditions,
            3,
            "SecretsReady",
        )
        .expect("ok");
        assert!(!ready);
        let c = find(&conditions, "SecretsReady").expect("set");
        assert_eq!(
            (c.status.as_str(), c.reason.as_str(), c.message.as_str()),
            ("False", REASON_SECRET_STORE_NOT_READY, message)
        );
        assert_eq!(c.observed_generation, Some(3));
    }
}

#[test]
fn a_namespace_scoped_gate_refuses_a_cluster_secret_store_without_any_call() {
    let c = FakeCluster::new();
    let mut conditions = Vec::new();
    let ready = gate_store_ready(
        &c,
        &spec(CLUSTER_SECRET_STORE, "openbao-cluster-store"),
        "tenant-ns",
        true,
        &mut conditions,
        1,
        "SecretsReady",
    )
    .expect("ok");
    assert!(!ready);
    assert!(c.calls().is_empty(), "{:?}", c.calls());
    let cond = find(&conditions, "SecretsReady").expect("set");
    assert_eq!(cond.reason, REASON_CLUSTER_SECRET_STORE_UNSUPPORTED);
    assert_eq!(
        cond.message,
        "ClusterSecretStore \"openbao-cluster-store\" cannot be read by a namespace-scoped \
         operator; set spec.secretStoreRef to a SecretStore in namespace \"tenant-ns\""
    );
}

#[test]
fn a_namespace_scoped_gate_resolves_an_absent_ref_to_the_refused_cluster_store() {
    let c = FakeCluster::new();
    let mut conditions = Vec::new();
    let ready =
        gate_store_ready(&c, &spec("", ""), "ns", true, &mut conditions, 1, "S").expect("ok");
    assert!(!ready);
    assert!(!c.calls().iter().any(|call| matches!(call, Call::Get(..))));
}

#[test]
fn the_eso_store_refs_carry_kind_and_name() {
    let reference = spec(SECRET_STORE, "tenant");
    let es = eso_secret_store_ref(&reference);
    assert_eq!(
        (es.name.as_str(), es.kind.as_deref()),
        ("tenant", Some(SECRET_STORE))
    );
    let ps = push_secret_store_refs(&reference);
    assert_eq!(ps.len(), 1);
    assert_eq!(
        (ps[0].name.as_deref(), ps[0].kind.as_deref()),
        (Some("tenant"), Some(SECRET_STORE))
    );
}

#[test]
fn store_watches_declare_cluster_stores_unless_namespace_scoped_then_secret_stores() {
    let mapping = Mapping::FieldIndex("spec.secretStoreRef".into());
    let kinds = |ws: Vec<Watch>| ws.into_iter().map(|w| w.kind.kind).collect::<Vec<_>>();
    assert_eq!(
        kinds(store_watches(false, mapping.clone())),
        [CLUSTER_SECRET_STORE, SECRET_STORE]
    );
    assert_eq!(kinds(store_watches(true, mapping.clone())), [SECRET_STORE]);
    assert!(
        store_watches(false, mapping.clone())
            .iter()
            .all(|w| w.mapping == mapping)
    );
    let permissions = store_permissions(false);
    assert_eq!(permissions.len(), 2);
    assert!(
        permissions
            .iter()
            .all(|p| p.verbs == [Verb::Get, Verb::List, Verb::Watch])
    );
}
