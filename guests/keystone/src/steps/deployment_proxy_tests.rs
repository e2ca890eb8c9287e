use k8s_openapi::api::core::v1::KeyToPath;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::federation::Federation;
use crate::testing::run_with_config;

fn item(key: &str, path: &str) -> KeyToPath {
    KeyToPath {
        key: key.into(),
        path: path.into(),
        ..Default::default()
    }
}

/// A projection with `oidc` and `saml` items as IdentityBackends hands it on.
fn federation(oidc: bool, saml: bool) -> Federation {
    Federation {
        secret_name: "ks-federation-0a1b2c3d".into(),
        proxy_image: "ghcr.io/c5c3/keystone-federation-proxy:2025.2".into(),
        metadata_items: if oidc {
            vec![item(
                "oidc-idp.example.com.provider",
                "idp.example.com%2Frealms%2Fcloud.provider",
            )]
        } else {
            Vec::new()
        },
        mellon_items: if saml {
            vec![
                item("saml-sp.key", "sp.key"),
                item("saml-idp.xml", "idp.xml"),
            ]
        } else {
            Vec::new()
        },
        egress_ports: vec![443],
        ..Default::default()
    }
}

/// Runs the step with `projection` and returns the applied Deployment and Service.
fn applied_with(projection: Option<Federation>) -> (Value, Value) {
    let cluster = FakeCluster::new();
    run_with_config(&cluster, json!({}), |pass| {
        pass.federation = projection;
        run(pass)
    })
    .0
    .expect("runs");
    let get = |kind: &str| {
        cluster
            .server(kind, "ks")
            .unwrap_or_else(|| panic!("no {kind} ks"))
    };
    (get("Deployment"), get("Service"))
}

fn pod(deployment: &Value) -> &Value {
    &deployment["spec"]["template"]["spec"]
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .map(|l| l.iter().filter_map(|v| v["name"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn federation_puts_uwsgi_behind_the_proxy_on_localhost() {
    let command = uwsgi_command(None, true);
    assert_eq!(
        command[..5],
        [
            "uwsgi",
            "--http",
            "127.0.0.1:5000",
            "--buffer-size",
            "65535"
        ]
    );
    // Everything after the bind is the command without federation.
    assert_eq!(command[5..], uwsgi_command(None, false)[3..]);

    let (deployment, _) = applied_with(Some(federation(true, false)));
    let keystone = &pod(&deployment)["containers"][0];
    assert_eq!(keystone["name"], "keystone");
    assert_eq!(keystone["command"], json!(command));
    assert_eq!(
        keystone["livenessProbe"],
        json!({"exec": {"command": ["/bin/sh", "-c",
            "python3 -c \"import socket; socket.create_connection(('127.0.0.1', 5000), 5).close()\""]},
            "initialDelaySeconds": 15, "periodSeconds": 20, "timeoutSeconds": 8})
    );
    assert_eq!(
        keystone["startupProbe"],
        json!({"exec": {"command": ["/bin/sh", "-c",
            "python3 -c \"import urllib.request; urllib.request.urlopen('http://127.0.0.1:5000/v3', timeout=5)\""]},
            "failureThreshold": 30, "periodSeconds": 10, "timeoutSeconds": 8})
    );
    // The database readiness probe and the port do not change.
    assert_eq!(keystone["readinessProbe"]["timeoutSeconds"], 25);
    assert_eq!(
        keystone["ports"],
        json!([{"name": "keystone", "containerPort": 5000, "protocol": "TCP"}])
    );
    // The keystone container mounts none of the federation volumes.
    assert_eq!(
        names(&keystone["volumeMounts"]),
        ["config", "fernet-keys", "credential-keys"]
    );
}

#[test]
fn federation_adds_the_proxy_sidecar_with_its_volumes() {
    let (deployment, _) = applied_with(Some(federation(true, true)));
    let pod = pod(&deployment);
    assert_eq!(names(&pod["containers"]), ["keystone", "federation-proxy"]);
    assert_eq!(
        pod["containers"][1],
        json!({
            "name": "federation-proxy",
            "image": "ghcr.io/c5c3/keystone-federation-proxy:2025.2",
            "command": ["apache2", "-DFOREGROUND", "-f",
                "/etc/keystone-federation-proxy/httpd-base.conf"],
            "ports": [{"name": "proxy", "containerPort": 5050, "protocol": "TCP"}],
            "resources": {"requests": {"cpu": "25m", "memory": "64Mi"},
                "limits": {"memory": "256Mi"}},
            "securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": true,
                "runAsGroup": 42424, "runAsNonRoot": true, "runAsUser": 42424,
                "seccompProfile": {"type": "RuntimeDefault"}},
            "startupProbe": {"tcpSocket": {"port": 5050}, "failureThreshold": 30,
                "periodSeconds": 2},
            "livenessProbe": {"tcpSocket": {"port": 5050}, "initialDelaySeconds": 15,
                "periodSeconds": 20},
            "readinessProbe": {"httpGet": {"path": "/v3", "port": 5050},
                "initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 5},
            "volumeMounts": [
                {"name": "federation-proxy-config",
                    "mountPath": "/etc/keystone-federation-proxy/conf.d", "readOnly": true},
                {"name": "federation-metadata",
                    "mountPath": "/etc/keystone-federation-proxy/metadata", "readOnly": true},
                {"name": "federation-mellon",
                    "mountPath": "/etc/keystone-federation-proxy/mellon", "readOnly": true},
                {"name": "federation-proxy-tmp", "mountPath": "/tmp"},
            ],
        })
    );
    let volumes = pod["volumes"].as_array().expect("volumes");
    assert_eq!(
        names(&pod["volumes"]),
        [
            "config",
            "fernet-keys",
            "credential-keys",
            "federation-proxy-config",
            "federation-metadata",
            "federation-mellon",
            "federation-proxy-tmp",
        ]
    );
    let secret = |items: Value| json!({"secretName": "ks-federation-0a1b2c3d", "defaultMode": 0o400, "items": items});
    assert_eq!(
        volumes[3]["secret"],
        secret(json!([{"key": "proxy.conf", "path": "proxy.conf"}]))
    );
    assert_eq!(
        volumes[4]["secret"],
        secret(json!([{"key": "oidc-idp.example.com.provider",
            "path": "idp.example.com%2Frealms%2Fcloud.provider"}]))
    );
    assert_eq!(
        volumes[5]["secret"],
        secret(json!([{"key": "saml-sp.key", "path": "sp.key"},
            {"key": "saml-idp.xml", "path": "idp.xml"}]))
    );
    assert_eq!(
        volumes[6],
        json!({"name": "federation-proxy-tmp", "emptyDir": {}})
    );
}

#[test]
fn a_federation_volume_without_items_is_left_out_so_no_secret_key_leaks_into_it() {
    let table = [
        (
            "OIDC only",
            federation(true, false),
            vec![
                "federation-proxy-config",
                "federation-metadata",
                "federation-proxy-tmp",
            ],
        ),
        (
            "SAML only",
            federation(false, true),
            vec![
                "federation-proxy-config",
                "federation-mellon",
                "federation-proxy-tmp",
            ],
        ),
    ];
    for (case, projection, expected) in table {
        let (deployment, _) = applied_with(Some(projection));
        let pod = pod(&deployment);
        assert_eq!(names(&pod["volumes"])[3..], expected, "{case}");
        assert_eq!(
            names(&pod["containers"][1]["volumeMounts"]),
            expected,
            "{case}"
        );
    }
}

#[test]
fn the_service_targets_the_proxy_port_with_federation() {
    let (_, service) = applied_with(Some(federation(true, false)));
    assert_eq!(
        service["spec"]["ports"],
        json!([{"name": "keystone", "port": 5000, "protocol": "TCP", "targetPort": 5050}])
    );
}

#[test]
fn without_federation_the_pod_and_the_service_stay_as_they_were() {
    let (deployment, service) = applied_with(None);
    let pod = pod(&deployment);
    assert_eq!(names(&pod["containers"]), ["keystone"]);
    assert_eq!(
        names(&pod["volumes"]),
        ["config", "fernet-keys", "credential-keys"]
    );
    let keystone = &pod["containers"][0];
    assert_eq!(keystone["command"], json!(uwsgi_command(None, false)));
    assert_eq!(keystone["command"][2], ":5000");
    assert_eq!(
        keystone["livenessProbe"],
        json!({"tcpSocket": {"port": 5000}, "initialDelaySeconds": 15, "periodSeconds": 20})
    );
    assert_eq!(
        keystone["startupProbe"],
        json!({"httpGet": {"path": "/v3", "port": 5000}, "failureThreshold": 30,
            "periodSeconds": 10, "timeoutSeconds": 8})
    );
    assert_eq!(service["spec"]["ports"][0]["targetPort"], 5000);
}
