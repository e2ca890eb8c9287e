use serde_json::json;

use super::*;
use crate::conditions::VOLUME_SERVICES_READY;
use crate::testing::{backend, cluster, condition, converge, reconcile, settle};

#[test]
fn each_backend_runs_its_own_cinder_volume_mounting_its_secret() {
    let cluster = cluster()
        .with(backend("fast", true))
        .with(backend("slow", true));
    converge(&cluster);
    let deployment = cluster
        .server("Deployment", "cinder-volume-fast")
        .expect("the fast backend's Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    let backend_volume = &pod["volumes"][1];
    assert_eq!(backend_volume["name"], "backend");
    let secret = backend_volume["secret"]["secretName"]
        .as_str()
        .expect("a Secret");
    assert!(secret.starts_with("cinder-backend-fast-"), "{secret}");
    assert_eq!(
        backend_volume["secret"]["items"],
        json!([{"key": "backend.conf", "path": "backend.conf"},
               {"key": "shares", "path": "fast.shares"}])
    );
    assert_eq!(deployment["spec"]["strategy"]["type"], "Recreate");
    assert_eq!(deployment["spec"]["replicas"], 1);
    assert!(cluster.server("Deployment", "cinder-volume-slow").is_some());
    assert_eq!(
        condition(&cluster, VOLUME_SERVICES_READY),
        (
            "True".into(),
            "AllVolumeServicesReady".into(),
            "All 2 volume services are ready".into()
        )
    );
    let status = crate::testing::stored(&cluster).status.expect("status");
    assert_eq!(status.volume_services[0].host, "cinder@fast");
}

#[test]
fn a_deleted_backend_is_stopped_removed_from_cinder_and_released() {
    let mut held = backend("fast", true);
    held["metadata"]["finalizers"] = json!([SERVICE_REMOVE_FINALIZER]);
    let cluster = cluster().with(held);
    converge(&cluster);
    assert!(cluster.server("Deployment", "cinder-volume-fast").is_some());
    cluster.change("CinderBackend", "fast", |o| {
        o["metadata"]["deletionTimestamp"] = json!("2026-12-03T09:00:00Z");
    });
    reconcile(&cluster).expect("a pass");
    assert!(
        cluster.server("Deployment", "cinder-volume-fast").is_none(),
        "the service stops first"
    );
    let job = cluster
        .server("Job", "cinder-fast-service-remove")
        .expect("the removal Job");
    let script = job["spec"]["template"]["spec"]["containers"][0]["command"][2]
        .as_str()
        .expect("a script")
        .to_owned();
    assert_eq!(
        script,
        "cinder-manage service remove cinder-volume cinder@fast; rc=$?; [ $rc -eq 0 ] || [ $rc -eq 2 ]"
    );
    assert_eq!(
        condition(&cluster, VOLUME_SERVICES_READY).1,
        "WaitingForVolumeServices"
    );
    settle(&cluster);
    reconcile(&cluster).expect("a pass");
    let released = cluster.server("CinderBackend", "fast");
    let finalizers = released.map(|b| b["metadata"]["finalizers"].clone());
    assert!(
        finalizers.as_ref().is_none_or(|f| *f == json!([])),
        "the finalizer is released: {finalizers:?}"
    );
}
