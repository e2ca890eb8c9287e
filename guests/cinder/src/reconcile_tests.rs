use crate::conditions::READY_SET;
use crate::testing::{backend, backup_backend, cluster, condition, converge, reconcile};

#[test]
fn a_cinder_with_a_backend_and_a_backup_converges_to_ready_and_a_converged_pass_writes_nothing() {
    let cluster = cluster()
        .with(backend("fast", true))
        .with(backup_backend("nightly", true));
    converge(&cluster);
    for type_ in READY_SET {
        assert_eq!(
            condition(&cluster, type_).0,
            "True",
            "{type_}: {:?}",
            condition(&cluster, type_)
        );
    }
    assert_eq!(condition(&cluster, "Ready").1, "AllReady");
    let backup = cluster
        .server("Deployment", "cinder-backup")
        .expect("cinder-backup");
    let volume = &backup["spec"]["template"]["spec"]["volumes"][1];
    assert_eq!(volume["name"], "backup");
    assert!(
        volume["secret"]["secretName"]
            .as_str()
            .is_some_and(|s| s.starts_with("cinder-backup-nightly-"))
    );
    cluster.clear_calls();
    assert_eq!(reconcile(&cluster).expect("a pass").requeue_after, None);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn without_satellites_a_cinder_runs_its_api_alone() {
    let cluster = cluster();
    converge(&cluster);
    assert_eq!(condition(&cluster, "BackendsReady").1, "NoBackends");
    assert_eq!(
        condition(&cluster, "BackupServiceReady").1,
        "BackupNotConfigured"
    );
    assert_eq!(condition(&cluster, "Ready").1, "AllReady");
    assert_eq!(cluster.names("Deployment"), ["cinder"]);
}
