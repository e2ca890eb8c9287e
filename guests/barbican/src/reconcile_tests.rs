use serde_json::json;

use crate::conditions::READY_SET;
use crate::testing::{cluster, cluster_with_store, condition, converge, reconcile, stored};

#[test]
fn a_barbican_with_a_default_store_converges_to_ready_and_a_converged_pass_writes_nothing() {
    let cluster = cluster_with_store("vault");
    converge(&cluster);
    for type_ in READY_SET {
        assert_eq!(
            condition(&cluster, type_).0,
            "True",
            "{type_}: {:?}",
            condition(&cluster, type_)
        );
    }
    assert_eq!(
        condition(&cluster, "Ready"),
        (
            "True".into(),
            "AllReady".into(),
            "All sub-conditions are ready".into()
        )
    );
    let status = stored(&cluster).status.expect("status");
    assert_eq!(status.projected_secret_stores, ["vault"]);
    assert_eq!(
        status.service.endpoint,
        "http://barbican.openstack.svc.cluster.local:9311"
    );
    cluster.clear_calls();
    assert_eq!(reconcile(&cluster).expect("a pass").requeue_after, None);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_re_minted_secret_id_rolls_the_pods() {
    let cluster = cluster_with_store("vault");
    converge(&cluster);
    let annotation = || {
        cluster.server("Deployment", "barbican").expect("the Deployment")["spec"]["template"]
            ["metadata"]["annotations"]["barbican.c5c3.io/secret-store-credentials-hash"]
            .clone()
    };
    let before = annotation();
    cluster.put(crate::testing::secret(
        "vault-creds",
        &[("role-id", "role-1234"), ("secret-id", "re-minted")],
    ));
    converge(&cluster);
    assert_ne!(annotation(), before);
}

#[test]
fn a_barbican_naming_a_target_cluster_is_refused_on_secrets_ready() {
    let cluster = cluster();
    cluster.change("Barbican", "barbican", |o| {
        o["spec"]["targetClusterRef"] = json!({"name": "remote"});
    });
    let outcome = reconcile(&cluster).expect("a pass");
    assert_eq!(
        outcome.requeue_after,
        Some(std::time::Duration::from_secs(15))
    );
    assert_eq!(
        condition(&cluster, "SecretsReady").1,
        "TargetClusterUnavailable"
    );
    assert!(cluster.names("Deployment").is_empty());
}
