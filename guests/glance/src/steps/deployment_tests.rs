use super::*;
use crate::conditions::{DEPLOYMENT_READY, GLANCE_API_READY};
use crate::testing::{cluster, pass, pass_condition};

fn ready_pass(cluster: &wasm_operator_sdk::testing::FakeCluster) -> Pass<'_> {
    let mut pass = pass(cluster);
    pass.config_secret = "glance-config-1".into();
    pass.backends_secret = "glance-backends-2".into();
    pass.db_connection_hash = "abc".into();
    pass
}

#[test]
fn without_a_config_to_mount_no_deployment_is_made_and_the_pass_goes_on() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        pass_condition(&pass, DEPLOYMENT_READY),
        (
            "False".into(),
            "WaitingForBackends".into(),
            NO_CONFIG.into()
        )
    );
    assert_eq!(
        pass_condition(&pass, GLANCE_API_READY).1,
        "WaitingForDeployment"
    );
    assert!(cluster.names("Deployment").is_empty());
}

#[test]
fn the_deployment_mounts_config_and_backends_and_loads_both_config_dirs() {
    let cluster = cluster();
    let mut pass = ready_pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), Some(DEPLOYMENT_POLLING));
    let deployment = cluster
        .server("Deployment", "glance")
        .expect("the Deployment");
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(pod["volumes"][0]["name"], "config");
    assert_eq!(pod["volumes"][0]["secret"]["secretName"], "glance-config-1");
    assert_eq!(pod["volumes"][1]["name"], "backends");
    assert_eq!(
        pod["volumes"][1]["secret"]["secretName"],
        "glance-backends-2"
    );
    let container = &pod["containers"][0];
    assert_eq!(
        container["command"],
        serde_json::json!([
            "glance-api",
            "--config-dir",
            CONFIG_DIR,
            "--config-dir",
            BACKENDS_DIR
        ])
    );
    assert_eq!(container["image"], "ghcr.io/c5c3/glance:2025.2");
    assert_eq!(
        deployment["spec"]["template"]["metadata"]["annotations"][CONNECTION_HASH_ANNOTATION],
        "abc"
    );
    let env: Vec<&str> = container["env"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert_eq!(
        env,
        ["OS_DATABASE__CONNECTION", "OS_KEYSTONE_AUTHTOKEN__PASSWORD"]
    );
    assert_eq!(
        pass_condition(&pass, DEPLOYMENT_READY),
        (
            "False".into(),
            "DeploymentNotReady".into(),
            "Deployment glance is rolling out (0/1 ready)".into()
        )
    );
    let service = cluster.server("Service", "glance").expect("the Service");
    assert_eq!(service["spec"]["ports"][0]["port"], 9292);
}

#[test]
fn a_ready_deployment_is_deployment_ready_and_the_api_available_at_its_endpoint() {
    let cluster = cluster();
    let mut pass = ready_pass(&cluster);
    run(&mut pass).expect("runs");
    crate::testing::settle(&cluster);
    let mut pass = ready_pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        pass_condition(&pass, DEPLOYMENT_READY),
        (
            "True".into(),
            "DeploymentReady".into(),
            "Deployment glance is ready".into()
        )
    );
    let endpoint = "http://glance.openstack.svc.cluster.local:9292";
    assert_eq!(
        pass_condition(&pass, GLANCE_API_READY),
        (
            "True".into(),
            "APIAvailable".into(),
            format!("Glance API is served at {endpoint}")
        )
    );
    assert_eq!(pass.glance.status.expect("status").endpoint, endpoint);
}
