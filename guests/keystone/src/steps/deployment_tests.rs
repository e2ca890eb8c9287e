use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{
    CONNECTION_HASH, condition, keystone_with, pass, pass_with_config, run_with_config,
};

fn applied(cluster: &FakeCluster, kind: &str) -> Value {
    cluster
        .server(kind, "ks")
        .unwrap_or_else(|| panic!("no {kind} ks"))
}

/// The Deployment as its controller reports it: `ready` of 3 replicas ready, all updated.
fn report(cluster: &FakeCluster, ready: i32, updated: i32) {
    cluster.change("Deployment", "ks", |d| {
        d["metadata"]["generation"] = json!(1);
        d["status"] = json!({"observedGeneration": 1, "replicas": 3, "updatedReplicas": updated,
            "readyReplicas": ready, "availableReplicas": ready,
            "conditions": [{"type": "Available", "status": if ready > 0 { "True" } else { "False" }}]});
    });
}

#[test]
fn the_uwsgi_command_follows_the_uwsgi_block() {
    let tail = |p: &str, t: &str| {
        vec![
            "--log-master".to_owned(),
            "--log-format".into(),
            LOG_FORMAT.into(),
            "--wsgi-file".into(),
            "/var/lib/openstack/bin/keystone-wsgi-public".into(),
            "--master".into(),
            "--lazy-apps".into(),
            "--need-app".into(),
            "--processes".into(),
            p.into(),
            "--threads".into(),
            t.into(),
            "--pyargv=--config-dir=/etc/keystone/keystone.conf.d/".into(),
        ]
    };
    let head = |extra: &[&str]| {
        let mut h: Vec<String> = ["uwsgi", "--http", ":5000"].map(String::from).to_vec();
        h.extend(extra.iter().map(|s| (*s).to_owned()));
        h
    };
    let table: Vec<(Option<UwsgiSpec>, Vec<String>)> = vec![
        (None, [head(&["--http-keepalive"]), tail("2", "1")].concat()),
        (
            Some(UwsgiSpec {
                processes: 4,
                threads: 2,
                http_keep_alive: Some(true),
                http_keep_alive_timeout: Some(5),
                harakiri: Some(20),
            }),
            [
                head(&["--http-keepalive", "--http-keepalive-timeout", "5"]),
                tail("4", "2"),
                vec!["--harakiri".into(), "20".into()],
            ]
            .concat(),
        ),
        (
            Some(UwsgiSpec {
                http_keep_alive: Some(false),
                ..Default::default()
            }),
            [head(&[]), tail("2", "1")].concat(),
        ),
    ];
    for (spec, expected) in table {
        assert_eq!(uwsgi_command(spec.as_ref(), false), expected, "{spec:?}");
    }
}

#[test]
fn the_deployment_runs_the_api_with_the_facts_pod_shape() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), run).0.expect("runs");
    let d = applied(&cluster, "Deployment");
    assert_eq!(
        d["metadata"]["labels"]["app.kubernetes.io/component"],
        "api"
    );
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(
        d["spec"]["selector"]["matchLabels"],
        json!({"app.kubernetes.io/instance": "ks", "app.kubernetes.io/name": "keystone"})
    );
    assert_eq!(
        d["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}})
    );
    let pod = &d["spec"]["template"]["spec"];
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert_eq!(pod["securityContext"], json!({"fsGroup": 42424}));
    let keys: Vec<&str> = pod["topologySpreadConstraints"]
        .as_array()
        .expect("default spread")
        .iter()
        .filter_map(|c| c["topologyKey"].as_str())
        .collect();
    assert_eq!(
        keys,
        ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
    );
    let volumes: Vec<(&str, Value)> = pod["volumes"]
        .as_array()
        .expect("volumes")
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap_or_default(),
                v["secret"]["defaultMode"].clone(),
            )
        })
        .collect();
    assert_eq!(
        volumes,
        [
            ("config", Value::Null),
            ("fernet-keys", json!(0o400)),
            ("credential-keys", json!(0o400)),
        ]
    );
    let c = &pod["containers"][0];
    assert_eq!(c["name"], "keystone");
    assert_eq!(c["image"], "ghcr.io/c5c3/keystone:2025.2");
    assert_eq!(
        c["ports"],
        json!([{"name": "keystone", "containerPort": 5000, "protocol": "TCP"}])
    );
    assert_eq!(
        c["lifecycle"]["preStop"]["exec"]["command"],
        json!(["sleep", "5"])
    );
    assert_eq!(c["livenessProbe"]["tcpSocket"]["port"], 5000);
    assert_eq!(c["startupProbe"]["httpGet"]["path"], "/v3");
    assert_eq!(c["readinessProbe"]["timeoutSeconds"], 25);
    assert_eq!(c["env"][0]["name"], "OS_DATABASE__CONNECTION");
    assert_eq!(c["securityContext"]["runAsUser"], 42424);
    // Static credentials: no rollout annotation.
    assert!(d["spec"]["template"]["metadata"]["annotations"].is_null());
}

#[test]
fn autoscaling_leaves_replicas_to_the_hpa_and_an_empty_spread_disables_the_default() {
    let cluster = FakeCluster::new();
    let spec = json!({"autoscaling": {"maxReplicas": 5, "targetCPUUtilization": 80},
        "deployment": {"topologySpreadConstraints": []},
        "database": {"credentialsMode": "Dynamic"}});
    run_with_config(&cluster, spec, run).0.expect("runs");
    let d = applied(&cluster, "Deployment");
    assert!(d["spec"]["replicas"].is_null(), "{}", d["spec"]);
    assert!(d["spec"]["template"]["spec"]["topologySpreadConstraints"].is_null());
    assert_eq!(
        d["spec"]["template"]["metadata"]["annotations"],
        json!({"keystone.c5c3.io/db-connection-hash": CONNECTION_HASH})
    );
}

#[test]
fn the_disruption_budget_keeps_one_pod_unless_only_one_runs() {
    let table = [
        (json!({}), json!({"minAvailable": 1})),
        (
            json!({"deployment": {"replicas": 1}}),
            json!({"maxUnavailable": 1}),
        ),
        (
            json!({"autoscaling": {"minReplicas": 1, "maxReplicas": 4, "targetCPUUtilization": 50}}),
            json!({"maxUnavailable": 1}),
        ),
    ];
    for (spec, expected) in table {
        let cluster = FakeCluster::new();
        run_with_config(&cluster, spec.clone(), run)
            .0
            .expect("runs");
        let pdb = applied(&cluster, "PodDisruptionBudget");
        let budget: serde_json::Map<String, Value> = ["minAvailable", "maxUnavailable"]
            .iter()
            .filter_map(|k| pdb["spec"].get(*k).map(|v| ((*k).to_owned(), v.clone())))
            .collect();
        assert_eq!(Value::Object(budget), expected, "{spec}");
        assert_eq!(
            pdb["spec"]["selector"]["matchExpressions"],
            json!([{"key": "batch.kubernetes.io/job-name", "operator": "DoesNotExist"}])
        );
    }
}

#[test]
fn the_api_waits_for_its_deployment_then_is_ready_at_its_endpoint() {
    let cluster = FakeCluster::new();
    let (result, pass) = run_with_config(&cluster, json!({}), run);
    assert_eq!(result.expect("runs"), Some(DEPLOYMENT_POLLING));
    assert_eq!(
        condition(&pass, DEPLOYMENT_READY),
        (
            "False".into(),
            "WaitingForDeployment".into(),
            "Keystone API deployment is not yet available".into()
        )
    );
    report(&cluster, 3, 3);
    let (result, pass) = run_with_config(&cluster, json!({}), run);
    assert_eq!(result.expect("runs"), None);
    assert_eq!(
        condition(&pass, DEPLOYMENT_READY),
        (
            "True".into(),
            "DeploymentReady".into(),
            "Keystone API deployment is available".into()
        )
    );
    assert_eq!(
        pass.keystone.status.as_ref().map(|s| s.endpoint.as_str()),
        Some("http://ks.ns.svc.cluster.local:5000/v3")
    );
}

#[test]
fn the_endpoint_is_the_gateways_when_one_is_set() {
    let gateway = json!({"parentRef": {"name": "gw"}, "hostname": "id.example.com"});
    let table = [
        (
            json!({"gateway": gateway.clone()}),
            "https://id.example.com/v3",
        ),
        (
            json!({"gateway": gateway, "bootstrap": {"publicEndpoint": "https://id.example.com/identity/v3"}}),
            "https://id.example.com/identity/v3",
        ),
        (json!({}), "http://ks.ns.svc.cluster.local:5000/v3"),
    ];
    for (spec, expected) in table {
        let cluster = FakeCluster::new();
        let pass = pass(&cluster, &keystone_with(spec.clone()));
        assert_eq!(endpoint(&pass), expected, "{spec}");
    }
}

#[test]
fn the_service_selects_the_api_component_once_the_template_converged_and_stays_so() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), run).0.expect("runs");
    let selector = |cluster: &FakeCluster| applied(cluster, "Service")["spec"]["selector"].clone();
    assert!(
        selector(&cluster)
            .get("app.kubernetes.io/component")
            .is_none()
    );
    report(&cluster, 3, 3);
    run_with_config(&cluster, json!({}), run).0.expect("runs");
    assert_eq!(selector(&cluster)["app.kubernetes.io/component"], "api");
    // A new rollout begins: the template is no longer converged, the latch holds.
    report(&cluster, 3, 1);
    run_with_config(&cluster, json!({}), run).0.expect("runs");
    assert_eq!(selector(&cluster)["app.kubernetes.io/component"], "api");
    let service = applied(&cluster, "Service");
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "keystone", "port": 5000, "protocol": "TCP", "targetPort": 5000}])
    );
}

#[test]
fn an_upgrade_rolling_out_waits_for_every_replica_then_contracts() {
    let cluster = FakeCluster::new();
    fn with_phase(cluster: &FakeCluster) -> (StepResult, Pass<'_>) {
        let mut object = keystone_with(json!({}));
        object["status"] = json!({"upgradePhase": "RollingUpdate", "installedRelease": "2025.1",
            "targetRelease": "2025.2"});
        let mut pass = pass_with_config(cluster, &object);
        let result = run(&mut pass);
        (result, pass)
    }
    with_phase(&cluster).0.expect("runs");
    report(&cluster, 3, 2);
    let (result, pass) = with_phase(&cluster);
    assert_eq!(result.expect("runs"), Some(DEPLOYMENT_POLLING));
    assert_eq!(
        condition(&pass, DEPLOYMENT_READY).2,
        "Waiting for the upgraded image to finish rolling out before contracting the database schema"
    );
    report(&cluster, 3, 3);
    let (result, pass) = with_phase(&cluster);
    assert_eq!(result.expect("runs"), Some(NEXT_PASS));
    assert_eq!(
        pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase),
        Some(UpgradePhase::Contracting)
    );
    assert!(
        cluster
            .event_reasons()
            .contains(&"DeploymentRolloutComplete".to_owned())
    );
    assert_eq!(condition(&pass, DEPLOYMENT_READY).1, "DeploymentReady");
}

#[test]
fn the_deployment_step_before_the_config_step_ran_is_a_step_order_error() {
    let cluster = FakeCluster::new();
    let mut pass = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut pass).expect_err("no ConfigMap name");
    assert!(
        matches!(
            error,
            Error::StepOrder {
                step: "deployment",
                value: "the config ConfigMap's name"
            }
        ),
        "{error:?}"
    );
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn the_deployment_step_reads_the_deployment_only_through_ensure_deployment() {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), run).0.expect("runs");
    report(&cluster, 3, 3);
    cluster.clear_calls();
    let (result, pass) = run_with_config(&cluster, json!({}), run);
    assert_eq!(result.expect("runs"), None);
    assert_eq!(condition(&pass, DEPLOYMENT_READY).1, "DeploymentReady");
    let deployment = wasm_operator_sdk::ObjectRef::of::<Deployment>(Some("ns"), "ks");
    let reads: Vec<_> = cluster
        .calls()
        .into_iter()
        .filter(|c| matches!(c, wasm_operator_sdk::testing::Call::Get(r, _) if *r == deployment))
        .collect();
    // ensure_deployment's own two: the recreate plan's and the converged-apply check's.
    assert_eq!(reads.len(), 2, "{reads:?}");
}
