use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::http::Method;
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome};

use super::*;
use crate::testing::{
    ALL, CA_BUNDLE, CREDENTIALS, ROLE_ID, Said, World, ca_bundle, cond, openbao, secret,
};

const AVAILABLE: &str = "Secret openstack/vault-credentials carries AppRole credentials with the create, read, update, delete, list capabilities on \"secrets/data/probe\"";

/// (case, the world, CredentialsReady, the Warning event's reason, the requeue)
type Row = (&'static str, World, Said, Option<&'static str>, Duration);

fn waiting(secret: &str, key: &str) -> Said {
    let message = format!("waiting for Secret openstack/{secret} to carry a non-empty \"{key}\"");
    cond("False", "WaitingForCredentials", &message)
}

#[test]
fn the_brownfield_gate_reports_each_failure_with_its_reason_message_event_and_requeue() {
    let thirty = Duration::from_secs(30);
    let bao_failing = |method, prefix, status| {
        let bao = openbao(&ALL, 3600);
        bao.fail(method, prefix, status);
        bao
    };
    let world_with = |bao| {
        World::of(crate::testing::brownfield_store(), bao)
            .with(crate::testing::barbican(None))
            .with(crate::testing::credentials())
            .with(ca_bundle())
    };
    let rows: Vec<Row> = vec![
        (
            "all capabilities granted",
            World::brownfield(&ALL).projected(),
            cond("True", "CredentialsAvailable", AVAILABLE),
            None,
            Duration::from_secs(15 * 60),
        ),
        (
            "root covers everything",
            World::brownfield(&["root"]).projected(),
            cond("True", "CredentialsAvailable", AVAILABLE),
            None,
            Duration::from_secs(15 * 60),
        ),
        (
            "no credentials Secret",
            World::of(crate::testing::brownfield_store(), openbao(&ALL, 3600))
                .with(crate::testing::barbican(None)),
            waiting(CREDENTIALS, "role-id"),
            Some("WaitingForCredentials"),
            thirty,
        ),
        (
            "an empty role-id",
            World::brownfield(&ALL)
                .with(secret(CREDENTIALS, &[("role-id", ""), ("secret-id", "s")])),
            waiting(CREDENTIALS, "role-id"),
            Some("WaitingForCredentials"),
            thirty,
        ),
        (
            "no secret-id",
            World::brownfield(&ALL).with(secret(CREDENTIALS, &[("role-id", ROLE_ID)])),
            waiting(CREDENTIALS, "secret-id"),
            Some("WaitingForCredentials"),
            thirty,
        ),
        (
            "a CA bundle Secret without ca.crt",
            World::brownfield(&ALL).with(secret(CA_BUNDLE, &[("tls.crt", "x")])),
            waiting(CA_BUNDLE, "ca.crt"),
            Some("WaitingForCredentials"),
            thirty,
        ),
        (
            "a secret ID the server rejects",
            World::brownfield(&ALL).with(secret(
                CREDENTIALS,
                &[("role-id", ROLE_ID), ("secret-id", "revoked")],
            )),
            cond(
                "False",
                "InvalidCredentials",
                "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 400",
            ),
            Some("InvalidCredentials"),
            thirty,
        ),
        (
            "a sealed server",
            world_with(bao_failing(Method::Post, "/v1/auth/approle/login", 503)),
            cond(
                "False",
                "OpenBaoUnreachable",
                "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 503",
            ),
            Some("OpenBaoUnreachable"),
            thirty,
        ),
        (
            "no answer",
            world_with(openbao(&ALL, 3600).unreachable()),
            cond(
                "False",
                "OpenBaoUnreachable",
                "logging in to OpenBao with the approle auth method: https://openbao.example.com:8200/v1/auth/approle/login: cannot connect: connection refused",
            ),
            Some("OpenBaoUnreachable"),
            thirty,
        ),
        (
            "the capability read denied",
            world_with(bao_failing(Method::Post, "/v1/sys/capabilities-self", 403)),
            cond(
                "False",
                "InsufficientCapabilities",
                "reading the token capabilities on \"secrets/data/probe\": POST /v1/sys/capabilities-self: HTTP 403",
            ),
            Some("InsufficientCapabilities"),
            thirty,
        ),
        (
            "the capability read failing",
            world_with(bao_failing(Method::Post, "/v1/sys/capabilities-self", 500)),
            cond(
                "False",
                "OpenBaoUnreachable",
                "reading the token capabilities on \"secrets/data/probe\": POST /v1/sys/capabilities-self: HTTP 500",
            ),
            Some("OpenBaoUnreachable"),
            thirty,
        ),
        (
            "a policy without create, update, delete",
            World::brownfield(&["read", "list"]),
            cond(
                "False",
                "InsufficientCapabilities",
                "the AppRole credentials of Secret openstack/vault-credentials lack the create, update, delete capabilities on \"secrets/data/probe\"",
            ),
            Some("InsufficientCapabilities"),
            thirty,
        ),
    ];
    for (case, world, expected, event, requeue) in rows {
        let outcome = world.run().expect(case);
        assert_eq!(outcome, Outcome::requeue(requeue), "{case}");
        assert_eq!(world.said("CredentialsReady"), expected, "{case}");
        let events: Vec<(String, String, String)> = event
            .map(|reason| ("Warning".to_owned(), reason.to_owned(), expected.2.clone()))
            .into_iter()
            .collect();
        assert_eq!(world.events(), events, "{case}");
        assert_eq!(world.condition("ProvisioningReady"), None, "{case}");
        assert_eq!(
            world.bao.live_sessions(),
            0,
            "{case}: the session is revoked"
        );
    }
}

#[test]
fn the_login_and_the_capability_read_go_to_the_server_in_its_namespace_trusting_its_ca() {
    let world = World::brownfield(&ALL);
    world.run().expect("a pass");
    assert_eq!(
        world.bao.requests(),
        [
            "POST /v1/auth/approle/login",
            "POST /v1/sys/capabilities-self",
            "POST /v1/auth/token/revoke-self"
        ]
    );
    let sent = world.bao.sent();
    assert!(
        sent.iter()
            .all(|s| s.url.starts_with("https://openbao.example.com:8200/v1/"))
    );
    assert!(
        sent.iter()
            .all(|s| s.namespace.as_deref() == Some("tenant-a"))
    );
    assert_eq!(
        sent[0].body,
        Some(json!({"role_id": ROLE_ID, "secret_id": "secret-a"}))
    );
    assert_eq!(world.bao.trusted(), ["openstack/vault-ca ca.crt"]);
    // Nothing is written but the status: a brownfield server is only validated.
    assert_eq!(
        world.writes(),
        ["update-status BarbicanSecretStore openstack/vault"]
    );
}

#[test]
fn a_server_without_a_ca_bundle_or_namespace_is_reached_with_the_platform_roots_only() {
    let store = crate::testing::brownfield_store();
    let store = {
        let mut s = store;
        s["spec"]["openBao"]["server"]
            .as_object_mut()
            .expect("server")
            .remove("caBundleSecretRef");
        s["spec"]["openBao"]
            .as_object_mut()
            .expect("openBao")
            .remove("namespace");
        s
    };
    let world = World::of(store, openbao(&ALL, 3600))
        .with(crate::testing::barbican(None))
        .with(crate::testing::credentials());
    world.run().expect("a pass");
    assert_eq!(world.said("CredentialsReady").1, "CredentialsAvailable");
    assert_eq!(world.bao.trusted(), Vec::<String>::new());
    assert!(world.bao.sent().iter().all(|s| s.namespace.is_none()));
}

#[test]
fn a_provisioning_condition_left_from_a_managed_spec_is_removed() {
    let mut store = crate::testing::brownfield_store();
    store["status"] = json!({"conditions": [{"type": "ProvisioningReady", "status": "True",
        "reason": "Provisioned", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
    let world = World::of(store, openbao(&ALL, 3600))
        .with(crate::testing::barbican(None))
        .with(crate::testing::credentials())
        .with(ca_bundle())
        .projected();
    world.run().expect("a pass");
    assert_eq!(world.condition("ProvisioningReady"), None);
    assert_eq!(
        world.said("Ready"),
        cond("True", "AllReady", "All sub-conditions are ready")
    );
}

#[test]
fn a_failed_read_of_the_credentials_fails_the_pass_naming_the_secret() {
    let mut world = World::brownfield(&ALL);
    world.cluster =
        world
            .cluster
            .failing(Op::Get, CREDENTIALS, ApiError::Unavailable("etcd".into()));
    let error = world.run().expect_err("fails");
    assert_eq!(
        error.to_string(),
        "reading key \"role-id\" of Secret openstack/vault-credentials: getting Secret openstack/vault-credentials: unavailable: etcd"
    );
    assert_eq!(world.bao.requests(), Vec::<String>::new());
}

#[test]
fn missing_capabilities_are_listed_in_the_order_the_plugin_needs_them() {
    let owned = |c: &[&str]| c.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    // (granted, missing)
    let table: [(&[&str], &[&str]); 5] = [
        (&ALL, &[]),
        (&["root"], &[]),
        (&["list", "read"], &["create", "update", "delete"]),
        (&["deny"], &ALL),
        (&[], &ALL),
    ];
    for (granted, missing) in table {
        assert_eq!(
            missing_capabilities(&owned(granted)),
            missing,
            "{granted:?}"
        );
    }
}
