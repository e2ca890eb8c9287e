use super::*;
use crate::conditions::{BARBICAN_API_READY, DEPLOYMENT_READY};
use crate::pass::Projection;
use crate::testing::{cluster, cluster_with_store, converge, pass, pass_condition, settle};

fn ready_pass<'c>(
    cluster: &'c wasm_operator_sdk::testing::FakeCluster,
    ca: Option<&str>,
) -> Pass<'c> {
    let mut pass = pass(cluster);
    pass.config_secret = "barbican-config-1".into();
    pass.db_connection_hash = "abc".into();
    pass.projection = Projection {
        valid: true,
        credentials_secret: "vault-creds".into(),
        secret_id_digest: "def".into(),
        ca_secret: ca.map(str::to_owned),
        ..Projection::default()
    };
    pass
}

#[test]
fn an_invalid_projection_makes_no_deployment_and_says_so() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        pass_condition(&pass, DEPLOYMENT_READY),
        (
            "False".into(),
            "WaitingForSecretStores".into(),
            NO_PROJECTION.into()
        )
    );
    assert_eq!(
        pass_condition(&pass, BARBICAN_API_READY).1,
        "WaitingForDeployment"
    );
    assert!(cluster.names("Deployment").is_empty());
}

#[test]
fn the_deployment_mounts_the_config_and_ca_and_reads_the_secret_id_from_the_environment() {
    let cluster = cluster();
    let mut pass = ready_pass(&cluster, Some("vault-ca"));
    assert_eq!(run(&mut pass).expect("runs"), Some(DEPLOYMENT_POLLING));
    let deployment = cluster
        .server("Deployment", "barbican")
        .expect("the Deployment");
    let template = &deployment["spec"]["template"];
    let pod = &template["spec"];
    assert_eq!(
        pod["volumes"][0]["secret"]["secretName"],
        "barbican-config-1"
    );
    assert_eq!(pod["volumes"][1]["name"], CA_VOLUME);
    assert_eq!(pod["volumes"][1]["secret"]["secretName"], "vault-ca");
    assert_eq!(pod["volumes"][1]["secret"]["defaultMode"], 0o444);
    assert_eq!(pod["volumes"][1]["secret"]["items"][0]["key"], "ca.crt");
    let container = &pod["containers"][0];
    assert_eq!(container["volumeMounts"][1]["mountPath"], CA_DIR);
    let env = &container["env"][2];
    assert_eq!(env["name"], "OS_VAULT_PLUGIN__APPROLE_SECRET_ID");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], "vault-creds");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["key"], "secret-id");
    assert_eq!(
        template["metadata"]["annotations"][CREDENTIALS_HASH_ANNOTATION],
        "def"
    );
    let service = cluster.server("Service", "barbican").expect("the Service");
    assert_eq!(service["spec"]["ports"][0]["port"], 9311);
}

#[test]
fn without_a_ca_bundle_nothing_is_mounted_for_it() {
    let cluster = cluster();
    let mut pass = ready_pass(&cluster, None);
    run(&mut pass).expect("runs");
    let deployment = cluster
        .server("Deployment", "barbican")
        .expect("the Deployment");
    let volumes = deployment["spec"]["template"]["spec"]["volumes"]
        .as_array()
        .map(Vec::len);
    assert_eq!(volumes, Some(1));
}

#[test]
fn a_projection_turning_invalid_leaves_the_running_deployment_and_its_api() {
    let cluster = cluster_with_store("vault");
    converge(&cluster);
    settle(&cluster);
    let before = cluster
        .server("Deployment", "barbican")
        .expect("the Deployment");
    cluster.change("BarbicanSecretStore", "vault", |o| {
        o["status"]["conditions"][0]["status"] = serde_json::json!("False");
    });
    let mut pass = pass(&cluster);
    crate::steps::secret_stores::run(&mut pass).expect("stores");
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        pass_condition(&pass, DEPLOYMENT_READY).1,
        "WaitingForSecretStores"
    );
    assert_eq!(pass_condition(&pass, BARBICAN_API_READY).1, "APIAvailable");
    let after = cluster
        .server("Deployment", "barbican")
        .expect("the Deployment");
    assert_eq!(after["spec"], before["spec"], "the running config stays");
}
