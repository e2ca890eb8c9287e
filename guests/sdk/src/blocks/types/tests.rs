use serde_json::json;

use super::*;

#[test]
fn an_image_is_referenced_by_digest_when_pinned_else_by_tag() {
    let mut image = ImageSpec {
        repository: "ghcr.io/c5c3/keystone".into(),
        tag: "2025.2".into(),
        digest: String::new(),
    };
    assert_eq!(image.reference(), "ghcr.io/c5c3/keystone:2025.2");
    image.digest = format!("sha256:{}", "a".repeat(64));
    assert_eq!(
        image.reference(),
        format!("ghcr.io/c5c3/keystone@sha256:{}", "a".repeat(64))
    );
    assert_eq!(image.at_tag("2026.1"), "ghcr.io/c5c3/keystone:2026.1");
}

#[test]
fn cache_servers_resolve_from_the_list_else_from_the_cluster() {
    let table = [
        (
            json!({"backend": "b", "servers": ["a:1", "b:2"]}),
            "a:1,b:2",
            vec![1, 2],
        ),
        (
            json!({"backend": "b", "clusterRef": {"name": "mc"}}),
            "mc:11211",
            vec![11211],
        ),
        (json!({"backend": "b"}), "", vec![]),
        (
            json!({"backend": "b", "servers": ["a", "b:11211", "[::1]:7", "c:7"]}),
            "a,b:11211,[::1]:7,c:7",
            vec![11211, 7],
        ),
    ];
    for (spec, servers, ports) in table {
        let cache: CacheSpec = serde_json::from_value(spec.clone()).expect("a cache block");
        assert_eq!(cache.resolved_servers(), servers, "{spec}");
        assert_eq!(cache.ports(), ports, "{spec}");
    }
}

#[test]
fn a_database_address_is_the_clusters_service_or_the_host_with_3306_by_default() {
    let managed: DatabaseSpec = serde_json::from_value(json!({"clusterRef": {"name": "maria"},
        "database": "keystone", "secretRef": {"name": "db"}}))
    .expect("managed");
    assert_eq!(managed.address("ns"), "maria.ns.svc:3306");
    assert!(managed.is_managed() && !managed.is_dynamic() && !managed.tls_enabled());
    let brownfield: DatabaseSpec = serde_json::from_value(json!({"host": "db.example",
        "port": 3307, "database": "keystone", "secretRef": {"name": "db"},
        "tls": {"mode": "disabled", "caBundleSecretRef": {"name": "ca"},
                "clientCertSecretRef": {"name": "c"}}}))
    .expect("brownfield");
    assert_eq!(brownfield.address("ns"), "db.example:3307");
    assert!(!brownfield.tls_enabled());
}

#[test]
fn unset_fields_stay_unset_when_a_block_is_written_back() {
    let written = json!({"replicas": 2, "priorityClassName": "high"});
    let deployment: DeploymentSpec = serde_json::from_value(written.clone()).expect("decodes");
    assert_eq!(serde_json::to_value(&deployment).expect("encodes"), written);
    assert_eq!(deployment.effective_grace_seconds(), 30);
    assert_eq!(deployment.effective_pre_stop_seconds(), 5);
    assert_eq!(DeploymentSpec::default().effective_replicas(), 3);
    let uwsgi = UwsgiSpec::effective(None);
    assert_eq!(
        (uwsgi.processes, uwsgi.threads, uwsgi.http_keep_alive),
        (2, 1, Some(true))
    );
}

#[test]
fn a_gateway_path_is_slash_prefixed() {
    let mut gateway = GatewaySpec::default();
    assert_eq!(gateway.effective_path(), "/");
    gateway.path = "identity".into();
    assert_eq!(gateway.effective_path(), "/identity");
    gateway.path = "/v3".into();
    assert_eq!(gateway.effective_path(), "/v3");
}

#[test]
fn userinfo_escapes_what_go_s_url_user_password_escapes() {
    let table = [
        ("plain-Pass_1.~", "plain-Pass_1.~"),
        ("a$&+,;=b", "a$&+,;=b"),
        ("p:w@d/x?y#z", "p%3Aw%40d%2Fx%3Fy%23z"),
        ("sp ace%", "sp%20ace%25"),
        ("ü", "%C3%BC"),
    ];
    for (text, want) in table {
        assert_eq!(super::escape_userinfo(text), want, "{text}");
    }
}
