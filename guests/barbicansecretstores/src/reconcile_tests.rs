use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::testing::Op;
use wasm_operator_sdk::{ApiError, Outcome};

use crate::reconcile::SECRET_POLLING;
use crate::testing::{
    ALL, RENDERED, World, barbican, brownfield_store, ca_bundle, cond, credentials, deployment,
    openbao, projection,
};

const ALL_READY: (&str, &str, &str) = ("True", "AllReady", "All sub-conditions are ready");
const WAITING_PARENT: &str = "parent Barbican openstack/barbican does not exist; the cluster this store's credentials belong on is unknown";

#[test]
fn a_brownfield_store_turns_ready_once_its_barbican_credentials_and_section_are_there() {
    let world = World::of(brownfield_store(), openbao(&ALL, 3600));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "WaitingForParent", WAITING_PARENT)
    );
    assert_eq!(
        world.events(),
        Vec::<(String, String, String)>::new(),
        "no event"
    );

    let world = world.with(barbican(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(30))));
    assert_eq!(world.said("CredentialsReady").1, "WaitingForCredentials");

    let world = world.with(credentials()).with(ca_bundle());
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(30))));
    assert_eq!(world.said("CredentialsReady").1, "CredentialsAvailable");
    assert_eq!(world.said("ConfigProjected").1, "WaitingForProjection");
    assert_eq!(
        world.said("Ready"),
        cond(
            "False",
            "NotAllReady",
            "One or more sub-conditions are not ready"
        )
    );

    let world = world.with(deployment("config")).with(projection(RENDERED));
    assert_eq!(
        world.run(),
        Ok(Outcome::requeue(Duration::from_secs(15 * 60)))
    );
    assert_eq!(
        world.said("Ready"),
        cond(ALL_READY.0, ALL_READY.1, ALL_READY.2)
    );
    let status = world.stored().status.expect("a status");
    assert_eq!(status.observed_generation, 2);
    assert!(
        status
            .conditions
            .iter()
            .all(|c| c.observed_generation == Some(2))
    );
    assert_eq!(world.condition("ProvisioningReady"), None);

    // Converged: the next pass writes nothing.
    let writes = world.writes().len();
    world.run().expect("converged");
    assert_eq!(world.writes().len(), writes, "{:?}", world.writes());
}

#[test]
fn a_managed_store_is_ready_over_credentials_provisioning_and_projection() {
    let world = World::managed(3600).projected();
    world.run().expect("a pass");
    for type_ in [
        "CredentialsReady",
        "ProvisioningReady",
        "ConfigProjected",
        "Ready",
    ] {
        assert_eq!(world.said(type_).0, "True", "{type_}");
    }
    // Ready waits for ProvisioningReady on a managed store.
    let world = World::managed(3600)
        .with(crate::testing::openbao_cluster(false))
        .projected();
    world.run().expect("a pass");
    assert_eq!(world.said("Ready").1, "NotAllReady");
}

#[test]
fn a_missing_barbican_demotes_a_projected_store_and_a_targeted_one_is_unavailable() {
    let world = World::brownfield(&ALL).projected();
    world.run().expect("projected");
    assert_eq!(world.said("ConfigProjected").0, "True");
    let gone = World::of(world.stored_json(), openbao(&ALL, 3600));
    assert_eq!(gone.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        gone.said("CredentialsReady"),
        cond("False", "WaitingForParent", WAITING_PARENT)
    );
    assert_eq!(
        gone.said("ConfigProjected"),
        cond(
            "False",
            "WaitingForProjection",
            "parent Barbican openstack/barbican does not exist; nothing mounts this store's rendered secret-store section"
        )
    );

    let targeted =
        World::of(brownfield_store(), openbao(&ALL, 3600)).with(barbican(Some("remote")));
    assert_eq!(targeted.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(
        targeted.said("CredentialsReady"),
        cond(
            "False",
            "TargetClusterUnavailable",
            "target cluster \"remote\" is not registered"
        )
    );
    assert_eq!(targeted.events(), Vec::<(String, String, String)>::new());
    assert_eq!(targeted.bao.requests(), Vec::<String>::new());
}

#[test]
fn an_unserved_barbican_kind_reads_as_a_missing_parent() {
    let mut world = World::of(brownfield_store(), openbao(&ALL, 3600));
    world.cluster =
        world
            .cluster
            .failing(Op::Get, "barbican", ApiError::NotServed("barbicans".into()));
    assert_eq!(world.run(), Ok(Outcome::requeue(SECRET_POLLING)));
    assert_eq!(world.said("CredentialsReady").1, "WaitingForParent");
}

#[test]
fn a_store_naming_neither_mode_waits_for_credentials() {
    let mut store = brownfield_store();
    store["spec"]["openBao"] = json!({"kvMountpoint": "barbican"});
    let world = World::of(store, openbao(&ALL, 3600)).with(barbican(None));
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(30))));
    let message = "spec.openBao names neither instanceRef nor server; there is no OpenBao server to resolve credentials against";
    assert_eq!(
        world.said("CredentialsReady"),
        cond("False", "WaitingForCredentials", message)
    );
    assert_eq!(
        world.events(),
        [(
            "Warning".to_owned(),
            "WaitingForCredentials".to_owned(),
            message.to_owned()
        )]
    );
}

#[test]
fn a_deleted_or_deleting_store_is_left_alone() {
    let world = World {
        cluster: wasm_operator_sdk::testing::FakeCluster::new(),
        bao: openbao(&ALL, 3600),
        now: crate::testing::now(),
    };
    assert_eq!(world.run(), Ok(Outcome::done()));
    let mut store = brownfield_store();
    store["metadata"]["deletionTimestamp"] = json!("2026-12-03T11:00:00Z");
    store["metadata"]["finalizers"] = json!(["keep"]);
    let world = World::of(store, openbao(&ALL, 3600)).with(barbican(None));
    assert_eq!(world.run(), Ok(Outcome::done()));
    assert_eq!(world.writes(), Vec::<String>::new());
    assert_eq!(world.bao.requests(), Vec::<String>::new());
}

#[test]
fn a_conflicting_status_write_runs_the_pass_again_in_a_second() {
    let mut world = World::brownfield(&ALL);
    world.cluster = world.cluster.failing(
        Op::UpdateStatus,
        "vault",
        ApiError::Conflict("stale".into()),
    );
    assert_eq!(world.run(), Ok(Outcome::requeue(Duration::from_secs(1))));
}
