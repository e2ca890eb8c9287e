use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator_sdk::Outcome;
use wasm_operator_sdk::http::Method;

use super::*;
use crate::testing::{MINTED, NOW, ROLE_ID, World, at, cond, now, secret, secret_annotated};

const ACCEPTED: &str =
    "Secret openstack/vault-approle carries AppRole credentials the server accepts";

/// The minted Secret holding `secret_id`, stamped `age` seconds ago with `ttl`.
fn held(secret_id: &str, age: i64, ttl: &str) -> Value {
    secret_annotated(
        MINTED,
        &[("role-id", ROLE_ID), ("secret-id", secret_id)],
        json!({MINTED_AT_ANNOTATION: at(-age).to_string(), TTL_ANNOTATION: ttl}),
    )
}

/// The secret ID the minted Secret holds, and its stamps.
fn minted(world: &World) -> (String, String, String) {
    let secret = world.minted().expect("the Secret is written");
    let annotations = secret.metadata.annotations.clone().unwrap_or_default();
    (
        value(&secret, SECRET_ID_KEY),
        annotations
            .get(MINTED_AT_ANNOTATION)
            .cloned()
            .unwrap_or_default(),
        annotations.get(TTL_ANNOTATION).cloned().unwrap_or_default(),
    )
}

#[test]
fn a_managed_store_without_credentials_gets_a_minted_secret_owned_by_it_and_turns_ready() {
    let world = World::managed(3600).projected();
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(2400))));
    let secret = world.minted().expect("written");
    assert_eq!(value(&secret, ROLE_ID_KEY), ROLE_ID);
    assert_eq!(
        minted(&world),
        ("secret-0001".to_owned(), NOW.to_owned(), "3600".to_owned())
    );
    let owner = &secret.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.uid.as_str()),
        ("BarbicanSecretStore", "vault", "store-uid")
    );
    assert_eq!(owner.controller, Some(true));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("True", "CredentialsAvailable", ACCEPTED)
    );
    assert_eq!(
        world.said("Ready"),
        cond("True", "AllReady", "All sub-conditions are ready")
    );
    assert_eq!(world.events(), Vec::<(String, String, String)>::new());
    // The new pair was checked with a login, and every session handed back.
    let logins = world
        .bao
        .sent()
        .into_iter()
        .filter(|s| s.path == "/v1/auth/approle/login");
    let bodies: Vec<_> = logins.filter_map(|s| s.body).collect();
    assert_eq!(
        bodies,
        [json!({"role_id": ROLE_ID, "secret_id": "secret-0001"})]
    );
    assert_eq!(world.bao.live_sessions(), 0);
}

#[test]
fn a_converged_store_mints_nothing_and_writes_nothing_and_comes_back_at_the_two_thirds_point() {
    let mut world = World::managed(3600).projected();
    world.run().expect("the first pass");
    let writes = world.writes().len();
    world.now = at(60);
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(2340))));
    assert_eq!(world.bao.minted(), 1);
    // The TokenRequest of the provisioner's check stores nothing; nothing else is written.
    let log = world.writes();
    assert_eq!(
        log[writes..],
        ["create ServiceAccount openstack/bao-provisioner token"],
        "{log:?}"
    );
}

#[test]
fn the_secret_is_minted_when_absent_unstamped_incomplete_due_or_rejected_long_enough() {
    // (case, the Secret held, a secret ID the server accepts, minted again, the requeue)
    let rows: Vec<(&str, Value, bool, bool, u64)> = vec![
        ("fresh", held("held", 60, "3600"), true, false, 2340),
        (
            "exactly at 2/3",
            held("held", 2400, "3600"),
            true,
            false,
            30,
        ),
        (
            "past 2/3 (proactive)",
            held("held", 2401, "3600"),
            true,
            true,
            2400,
        ),
        ("never expires", held("held", 90_000, "0"), true, false, 900),
        (
            "no stamp",
            secret(MINTED, &[("role-id", ROLE_ID), ("secret-id", "held")]),
            true,
            true,
            2400,
        ),
        (
            "an unreadable stamp",
            {
                let mut s = held("held", 60, "3600");
                s["metadata"]["annotations"][MINTED_AT_ANNOTATION] = json!("yesterday");
                s
            },
            true,
            true,
            2400,
        ),
        ("an empty secret-id", held("", 60, "3600"), true, true, 2400),
        (
            "rejected, 10 min old (reactive)",
            held("held", 600, "3600"),
            false,
            true,
            2400,
        ),
    ];
    for (case, secret, accepted, reminted, requeue) in rows {
        let mut bao = crate::testing::openbao(&crate::testing::ALL, 3600);
        if accepted {
            bao = bao.with_secret_id("barbican", "held");
        }
        let world = World::of(crate::testing::managed_store(), bao)
            .with(crate::testing::barbican(None))
            .with(crate::testing::openbao_cluster(true))
            .with(secret_annotated(
                "bao-tls-ca",
                &[("ca.crt", "pem")],
                json!({}),
            ))
            .with(crate::testing::provisioner_account())
            .with(secret)
            .projected();
        assert_eq!(
            world.run(),
            Ok(Outcome::requeue(Duration::from_secs(requeue))),
            "{case}"
        );
        assert_eq!(world.bao.minted(), u32::from(reminted), "{case}");
        if reminted {
            assert_eq!(minted(&world).0, "secret-0001", "{case}");
            assert_eq!(minted(&world).1, NOW, "{case}");
        }
        assert_eq!(
            world.said("CredentialsReady"),
            cond("True", "CredentialsAvailable", ACCEPTED),
            "{case}"
        );
    }
}

#[test]
fn a_rejection_within_ten_minutes_of_the_mint_is_reported_not_reminted() {
    let world = World::managed(3600).with(held("revoked", 240, "3600"));
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(30))));
    let message = "the server rejects the AppRole credentials of Secret openstack/vault-approle, which were minted 4m0s ago; a fresh secret ID is minted at most once every 10m0s, so the rejection is reported rather than re-minted: logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 400";
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "InvalidCredentials", message)
    );
    assert_eq!(
        world.events(),
        [(
            "Warning".to_owned(),
            "InvalidCredentials".to_owned(),
            message.to_owned()
        )]
    );
    assert_eq!(world.bao.minted(), 0);
    assert_eq!(world.said("ProvisioningReady").1, "Provisioned");
}

/// (case, the Secret held, the failure injected, the reason, the message)
type FailureRow = (
    &'static str,
    Option<Value>,
    (Method, &'static str, u16),
    &'static str,
    &'static str,
);

#[test]
fn a_secret_id_revoked_behind_the_operator_is_reported_then_reminted_after_ten_minutes() {
    let mut world = World::managed(3600).projected();
    world.run().expect("minted");
    world.bao.revoke_secret_id("barbican", "secret-0001");
    world.now = at(300);
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(30))));
    assert_eq!(world.said("CredentialsReady").1, "InvalidCredentials");
    assert_eq!(world.said("Ready").1, "NotAllReady");
    assert_eq!(world.bao.minted(), 1);
    world.now = at(600);
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(2400))));
    assert_eq!(world.bao.minted(), 2);
    assert_eq!(minted(&world).0, "secret-0002");
    assert_eq!(minted(&world).1, at(600).to_string());
    assert_eq!(
        world.said("CredentialsReady"),
        cond("True", "CredentialsAvailable", ACCEPTED)
    );
}

#[test]
fn failures_of_the_probe_and_the_mint_are_reported_with_their_reasons() {
    // (case, the Secret held, the failure injected, CredentialsReady reason and message)
    let rows: Vec<FailureRow> = vec![
        (
            "the probe fails",
            Some(held("secret-a", 60, "3600")),
            (Method::Post, "/v1/auth/approle/login", 503),
            "OpenBaoUnreachable",
            "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 503",
        ),
        (
            "minting is denied",
            None,
            (
                Method::Post,
                "/v1/auth/approle/role/barbican/secret-id",
                403,
            ),
            "ProvisioningDenied",
            "generating a secret ID for AppRole \"barbican\": POST /v1/auth/approle/role/barbican/secret-id: HTTP 403",
        ),
        (
            "minting fails",
            None,
            (
                Method::Post,
                "/v1/auth/approle/role/barbican/secret-id",
                500,
            ),
            "OpenBaoUnreachable",
            "generating a secret ID for AppRole \"barbican\": POST /v1/auth/approle/role/barbican/secret-id: HTTP 500",
        ),
        (
            "the minted pair is denied",
            None,
            (Method::Post, "/v1/auth/approle/login", 403),
            "InvalidCredentials",
            "logging in to OpenBao with the approle auth method: POST /v1/auth/approle/login: HTTP 403",
        ),
    ];
    for (case, secret, (method, prefix, status), reason, message) in rows {
        let mut world = World::managed(3600);
        if let Some(secret) = secret {
            world = world.with(secret);
        }
        world.bao.fail(method, prefix, status);
        assert_eq!(
            world.run(),
            Ok(Outcome::requeue(Duration::from_secs(30))),
            "{case}"
        );
        assert_eq!(
            world.said("CredentialsReady"),
            cond("False", reason, message),
            "{case}"
        );
        assert_eq!(
            world.events(),
            [("Warning".to_owned(), reason.to_owned(), message.to_owned())],
            "{case}"
        );
        assert_eq!(world.said("ProvisioningReady").1, "Provisioned", "{case}");
    }
}

#[test]
fn the_requeue_is_the_two_thirds_point_floored_at_30_s_and_15_min_without_a_ttl() {
    let hour = Duration::from_secs(3600);
    // (minted seconds before now, ttl, requeue)
    let table = [
        (0, hour, 2400),
        (2000, hour, 400),
        (2390, hour, 30),
        (5000, hour, 30),
        (0, Duration::from_secs(30), 30),
        (0, Duration::ZERO, 900),
        (-120, hour, 2400),
    ];
    for (age, ttl, requeue) in table {
        assert_eq!(
            remint_requeue(at(-age), ttl, now()),
            Duration::from_secs(requeue),
            "{age} {ttl:?}"
        );
    }
}

#[test]
fn durations_read_as_go_prints_them() {
    let table = [
        (0, "0s"),
        (45, "45s"),
        (240, "4m0s"),
        (600, "10m0s"),
        (3725, "1h2m5s"),
    ];
    for (seconds, text) in table {
        assert_eq!(go_duration(Duration::from_secs(seconds)), text);
    }
}
