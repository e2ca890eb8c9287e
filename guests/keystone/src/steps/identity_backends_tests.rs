use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;

use super::*;
use crate::testing::{condition, events, keystone, pass, secret};

fn deployment(volumes: Value, updated: i32) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "ks", "namespace": "ns", "generation": 1},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "ks"}},
            "template": {"spec": {"containers": [{"name": "keystone"}], "volumes": volumes}}},
        "status": {"observedGeneration": 1, "replicas": 3, "updatedReplicas": updated,
            "readyReplicas": 3}})
}

#[test]
fn with_no_backend_the_step_waits_for_a_rolled_out_deployment_without_projections() {
    let domains = json!([{"name": "domains", "secret": {"secretName": "ks-domains-1"}}]);
    let table = [
        (
            None,
            "Waiting for the identity-backend projection to roll out: the Keystone Deployment does not exist yet",
        ),
        (
            Some(deployment(domains, 3)),
            "Waiting for the identity-backend projection to roll out: the domains projection has not reached the Deployment yet",
        ),
        (
            Some(deployment(json!([]), 2)),
            "Waiting for the identity-backend projection to roll out: the Keystone Deployment is still rolling out",
        ),
    ];
    for (existing, message) in table {
        let cluster = match existing {
            Some(d) => FakeCluster::new().with(d),
            None => FakeCluster::new(),
        };
        let mut pass = pass(&cluster, &keystone());
        assert_eq!(run(&mut pass).expect("runs"), None, "never requeues");
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY),
            ("False".into(), "WaitingForRollout".into(), message.into())
        );
    }
    let cluster = FakeCluster::new().with(deployment(json!([]), 3));
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY),
        (
            "True".into(),
            "IdentityBackendsNotRequired".into(),
            "No KeystoneIdentityBackend references this Keystone".into()
        )
    );
}

#[test]
fn a_cluster_without_the_backend_kind_has_no_backends() {
    let cluster = FakeCluster::new()
        .not_serving("keystoneidentitybackends")
        .with(deployment(json!([]), 3));
    let mut pass = pass(&cluster, &keystone());
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY).1,
        "IdentityBackendsNotRequired"
    );
}

/// A ready LDAP backend `name` of domain `domain` binding with Secret `bind`.
fn ldap(name: &str, domain: &str) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "KeystoneIdentityBackend",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "domain": {"name": domain}, "type": "LDAP",
            "ldap": {"url": "ldap://ldap.example.com", "bindCredentialsSecretRef": {"name": "bind"},
                     "suffix": "dc=example,dc=com", "users": {"treeDN": "ou=Users,dc=example,dc=com"}}},
        "status": {"conditions": [{"type": "DomainReady", "status": "True"}]}})
}

/// `backend` with `patch` merged in (RFC 7386).
fn with(mut backend: Value, patch: Value) -> Value {
    fn merge(target: &mut Value, patch: &Value) {
        match (target, patch) {
            (Value::Object(t), Value::Object(p)) => {
                for (k, v) in p {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
            (t, p) => *t = p.clone(),
        }
    }
    merge(&mut backend, &patch);
    backend
}

/// A rolled-out Deployment mounting no projection, the bind and CA Secrets, and `backends`.
fn cluster_with(backends: Vec<Value>) -> FakeCluster {
    let mut cluster = FakeCluster::new()
        .with(deployment(json!([]), 3))
        .with(secret(
            "bind",
            &[("username", "cn=admin"), ("password", "pw")],
        ))
        .with(secret("ldap-ca", &[("ca.crt", "PEM")]));
    for b in backends {
        cluster = cluster.with(b);
    }
    cluster
}

fn domains_volume(secret: &str) -> Value {
    json!([{"name": "domains", "secret": {"secretName": secret}}])
}

fn domains_secrets(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .names("Secret")
        .into_iter()
        .filter(|n| n.starts_with("ks-domains-"))
        .collect()
}

/// Runs the step on a fresh pass over `object`; the pass.
fn run_over<'c>(cluster: &'c FakeCluster, object: &Value) -> Pass<'c> {
    let mut pass = pass(cluster, object);
    assert_eq!(run(&mut pass).expect("runs"), None, "never requeues");
    pass
}

#[test]
fn a_ready_ldap_backend_is_projected_into_a_labelled_hashed_secret_then_reported_once_rolled_out() {
    let tls = json!({"spec": {"ldap": {"tls": {"caBundleSecretRef": {"name": "ldap-ca"}}}}});
    let cluster = cluster_with(vec![with(ldap("corp-ldap", "corp"), tls)]);
    let first = run_over(&cluster, &keystone());
    let name = first.domains_secret_name.clone();
    assert_eq!(domains_secrets(&cluster), std::slice::from_ref(&name));
    let stored = cluster.server("Secret", &name).expect("stored");
    assert_eq!(stored["immutable"], true);
    assert_eq!(
        stored["metadata"]["labels"]["cobaltcore.c5c3.io/config-base"],
        "ks-domains"
    );
    assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    let data = cluster.secret_data(&name);
    assert_eq!(
        data.keys().collect::<Vec<_>>(),
        ["corp-ca.pem", "keystone.corp.conf"]
    );
    assert_eq!(data["corp-ca.pem"], b"PEM");
    let conf = String::from_utf8(data["keystone.corp.conf"].clone()).expect("text");
    assert!(
        conf.starts_with("[identity]\ndriver = ldap\n\n[ldap]\n"),
        "{conf}"
    );
    assert!(conf.contains("tls_cacertfile = /etc/keystone/domains/corp-ca.pem\n"));
    assert!(conf.contains("user = cn=admin\n") && conf.contains("password = pw\n"));
    assert_eq!(
        condition(&first, IDENTITY_BACKENDS_READY),
        (
            "False".into(),
            "WaitingForRollout".into(),
            "Waiting for the identity-backend projection to roll out: the domains projection has \
             not reached the Deployment yet"
                .into()
        )
    );
    assert!(events(&cluster).is_empty());

    // The Deployment mounts the Secret and has rolled out: the projection is reported, and
    // a converged pass writes nothing and records nothing.
    cluster.change("Deployment", "ks", |d| {
        d["spec"]["template"]["spec"]["volumes"] = domains_volume(&name);
    });
    let status = serde_json::to_value(&first.keystone).expect("encodes");
    let second = run_over(&cluster, &status);
    assert_eq!(second.domains_secret_name, name);
    assert_eq!(
        condition(&second, IDENTITY_BACKENDS_READY),
        (
            "True".into(),
            "AllBackendsProjected".into(),
            "All attached identity backends are projected".into()
        )
    );
    cluster.clear_calls();
    let status = serde_json::to_value(&second.keystone).expect("encodes");
    let third = run_over(&cluster, &status);
    assert_eq!(
        condition(&third, IDENTITY_BACKENDS_READY).1,
        "AllBackendsProjected"
    );
    assert_eq!(cluster.write_log(), Vec::<String>::new());
    assert!(events(&cluster).is_empty());
}

#[test]
fn the_config_step_and_the_pods_take_the_projected_domains_secret() {
    let cluster = cluster_with(vec![ldap("corp-ldap", "corp")]);
    let mut pass = run_over(&cluster, &keystone());
    assert!(pass.domains_secret_name.starts_with("ks-domains-"));
    crate::steps::config::run(&mut pass).expect("config renders");
    let config_map = pass.config_map_name.clone().expect("named");
    let stored = cluster.server("ConfigMap", &config_map).expect("stored");
    let conf = stored["data"]["keystone.conf"]
        .as_str()
        .expect("keystone.conf");
    assert!(
        conf.contains("domain_specific_drivers_enabled = true\n"),
        "{conf}"
    );
    assert!(
        conf.contains("domain_config_dir = /etc/keystone/domains\n"),
        "{conf}"
    );
    let (volume, mount) = crate::pod::domains(&pass).expect("mounted");
    assert_eq!(
        volume.secret.and_then(|s| s.secret_name),
        Some(pass.domains_secret_name.clone())
    );
    assert_eq!(mount.mount_path, "/etc/keystone/domains");
}

#[test]
fn a_pending_backend_leaves_its_siblings_projected() {
    let cluster = cluster_with(vec![
        ldap("a", "corp"),
        with(ldap("b", "sales"), json!({"status": {"conditions": []}})),
    ]);
    let pass = run_over(&cluster, &keystone());
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY).2,
        "Waiting for identity backends: b (domain \"sales\" not ready)"
    );
    assert_eq!(
        domains_secrets(&cluster),
        std::slice::from_ref(&pass.domains_secret_name)
    );
    let data = cluster.secret_data(&pass.domains_secret_name);
    assert_eq!(data.keys().collect::<Vec<_>>(), ["keystone.corp.conf"]);
}

#[test]
fn a_deleting_backend_is_de_projected_at_once() {
    let deleting = json!({"metadata": {"deletionTimestamp": "2025-01-01T00:00:00Z",
        "finalizers": ["keystone.openstack.c5c3.io/identitybackend"]}});
    let cluster = cluster_with(vec![ldap("a", "corp"), with(ldap("b", "sales"), deleting)]);
    let pass = run_over(&cluster, &keystone());
    let data = cluster.secret_data(&pass.domains_secret_name);
    assert_eq!(data.keys().collect::<Vec<_>>(), ["keystone.corp.conf"]);
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY).1,
        "WaitingForRollout",
        "nothing pending: the deleting backend is not waited for"
    );
}

#[test]
fn a_projection_waits_for_the_deployment_to_mount_it_and_roll_out() {
    let cluster = cluster_with(vec![ldap("a", "corp")]);
    let name = run_over(&cluster, &keystone()).domains_secret_name;
    let federation = json!([{"name": "domains", "secret": {"secretName": name}},
        {"name": "federation-proxy-config", "secret": {"secretName": "ks-federation-1"}}]);
    let cases = [
        (
            "no Deployment",
            None,
            "the Keystone Deployment does not exist yet",
        ),
        (
            "another domains Secret mounted",
            Some(deployment(domains_volume("ks-domains-old"), 3)),
            "the domains projection has not reached the Deployment yet",
        ),
        (
            "a federation projection still mounted",
            Some(deployment(federation, 3)),
            "the federation projection has not reached the Deployment yet",
        ),
        (
            "still rolling out",
            Some(deployment(domains_volume(&name), 2)),
            "the Keystone Deployment is still rolling out",
        ),
    ];
    for (case, existing, why) in cases {
        let mut cluster = FakeCluster::new()
            .with(secret(
                "bind",
                &[("username", "cn=admin"), ("password", "pw")],
            ))
            .with(ldap("a", "corp"));
        if let Some(d) = existing {
            cluster = cluster.with(d);
        }
        let pass = run_over(&cluster, &keystone());
        assert_eq!(pass.domains_secret_name, name, "{case}");
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY),
            (
                "False".into(),
                "WaitingForRollout".into(),
                format!("Waiting for the identity-backend projection to roll out: {why}")
            ),
            "{case}"
        );
    }
}

#[path = "identity_backends_fault_tests.rs"]
mod faults;

/// A ready OIDC backend `name` of issuer `issuer`.
fn oidc(name: &str, issuer: &str) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "KeystoneIdentityBackend",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "domain": {"name": name}, "type": "OIDC",
            "oidc": {"issuer": issuer, "clientID": "keystone",
                     "clientSecretRef": {"name": "oidc-client"},
                     "endpoints": {"authorizationEndpoint": format!("{issuer}/auth"),
                                   "tokenEndpoint": format!("{issuer}/token"),
                                   "jwksURI": format!("{issuer}/jwks")}}},
        "status": {"conditions": [{"type": "DomainReady", "status": "True"}]}})
}

/// A ready SAML backend `name` with inline IdP metadata.
fn saml(name: &str) -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "KeystoneIdentityBackend",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "domain": {"name": name}, "type": "SAML",
            "saml": {"idpEntityID": "https://idp.example.com/saml",
                     "idpMetadata": {"inline": "<EntityDescriptor xmlns=\"urn:oasis:names:tc:SAML:2.0:metadata\" entityID=\"https://idp.example.com/saml\"/>"}}},
        "status": {"conditions": [{"type": "DomainReady", "status": "True"}]}})
}

/// The Keystone with the federation sidecar's image set.
fn federated_keystone() -> Value {
    crate::testing::keystone_with(json!({"federation": {"proxyImage": {
        "repository": "ghcr.io/c5c3/federation-proxy", "tag": "1"}}}))
}

#[test]
fn federation_backends_wait_for_the_proxy_image_with_one_warning_per_message() {
    let cluster = cluster_with(vec![
        oidc("a-oidc", "https://idp.example.com"),
        saml("b-saml"),
    ]);
    let pass = run_over(&cluster, &keystone());
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY),
        (
            "False".into(),
            "WaitingForBackends".into(),
            "Waiting for identity backends: a-oidc (spec.federation.proxyImage not set); \
             b-saml (spec.federation.proxyImage not set)"
                .into()
        )
    );
    let warnings: Vec<_> = events(&cluster)
        .into_iter()
        .filter(|e| e.1 == "FederationProxyImageMissing")
        .collect();
    assert_eq!(warnings.len(), 1, "one warning for the pass: {warnings:?}");
    assert!(pass.federation.is_none(), "nothing projected");
    assert!(
        cluster
            .names("Secret")
            .iter()
            .all(|n| !n.starts_with("ks-federation-")),
        "no federation Secret"
    );
}

#[test]
fn colliding_federation_backends_are_all_left_pending() {
    let table = [
        (
            "two SAML backends",
            vec![saml("a-saml"), saml("b-saml")],
            "Waiting for identity backends: a-saml (more than one SAML backend attached: a-saml, \
             b-saml); b-saml (more than one SAML backend attached: a-saml, b-saml)",
        ),
        (
            "two issuers with one metadata file name",
            vec![
                oidc("a-oidc", "https://idp.example.com/realm"),
                oidc("b-oidc", "https://idp.example.com/realm/"),
            ],
            "Waiting for identity backends: a-oidc (issuer \"https://idp.example.com/realm\" \
             collides with a-oidc, b-oidc at the mod_auth_openidc metadata filename); b-oidc \
             (issuer \"https://idp.example.com/realm/\" collides with a-oidc, b-oidc at the \
             mod_auth_openidc metadata filename)",
        ),
    ];
    for (case, backends, message) in table {
        let cluster = cluster_with(backends);
        let pass = run_over(&cluster, &federated_keystone());
        assert_eq!(
            condition(&pass, IDENTITY_BACKENDS_READY),
            ("False".into(), "WaitingForBackends".into(), message.into()),
            "{case}"
        );
        assert!(pass.federation.is_none(), "{case}: nothing projected");
    }
}

#[test]
fn a_deleting_saml_backend_does_not_collide_and_the_export_goes_with_the_last_saml_backend() {
    let deleting = with(
        saml("a-saml"),
        json!({"metadata": {"deletionTimestamp": "2026-12-03T08:00:00Z", "finalizers": ["x"]}}),
    );
    let export = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "ks-saml-sp-metadata", "namespace": "ns",
            "ownerReferences": [{"apiVersion": "keystone.openstack.c5c3.io/v1alpha1",
                "kind": "Keystone", "name": "ks", "uid": "ks-uid", "controller": true}]},
        "data": {}});
    let cluster = cluster_with(vec![deleting, ldap("c-ldap", "corp")]).with(export);
    let pass = run_over(&cluster, &federated_keystone());
    assert_eq!(
        condition(&pass, IDENTITY_BACKENDS_READY).1,
        "WaitingForRollout"
    );
    assert!(pass.federation.is_none());
    assert!(
        cluster.server("Secret", "ks-saml-sp-metadata").is_none(),
        "the export is deleted once no SAML backend is attached"
    );
}

#[test]
fn a_fetched_discovery_document_is_reused_while_the_backend_stays_at_its_version() {
    use crate::steps::identity_backends::metadata::testing::Idp;
    use wasm_operator_sdk::{Cluster as _, ObjectRef, Patch};

    let issuer = "https://idp.example.com";
    let url = "https://idp.example.com/.well-known/openid-configuration";
    let mut backend = oidc("a-oidc", issuer);
    backend["metadata"]["uid"] = json!("uid-a");
    backend["metadata"]["generation"] = json!(1);
    backend["spec"]["oidc"]["endpoints"] = Value::Null;
    let cluster = cluster_with(vec![backend])
        .tracking_generation("KeystoneIdentityBackend")
        .with(secret("oidc-client", &[("clientSecret", "s3cret")]));
    let idp = Idp::default().answering(
        url,
        200,
        json!({"issuer": issuer, "authorization_endpoint": format!("{issuer}/auth"),
               "token_endpoint": format!("{issuer}/token"), "jwks_uri": format!("{issuer}/jwks")})
        .to_string()
        .as_bytes(),
    );
    let run_once = || {
        let mut pass = pass(&cluster, &federated_keystone());
        pass.probe = &idp;
        assert_eq!(run(&mut pass).expect("runs"), None);
        pass.federation.clone().expect("federation is projected")
    };

    let first = run_once();
    assert_eq!(idp.asked(), [url], "the first pass fetches");
    let stored = cluster
        .server("Secret", &first.secret_name)
        .expect("the federation Secret");
    assert_eq!(
        stored["metadata"]["annotations"]["keystone.openstack.c5c3.io/metadata-sources"],
        r#"{"a-oidc":"uid-a/1"}"#
    );

    let writes = cluster.writes().len();
    assert_eq!(run_once(), first, "the same projection");
    assert_eq!(
        idp.asked().len(),
        1,
        "no second request at the same version"
    );
    assert_eq!(
        cluster.writes().len(),
        writes,
        "a converged pass writes nothing"
    );

    let reference = ObjectRef {
        api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
        kind: "KeystoneIdentityBackend".into(),
        namespace: Some("ns".into()),
        name: "a-oidc".into(),
    };
    cluster
        .patch(
            &reference,
            &Patch::Merge(json!({"spec": {"oidc": {"scopes": ["openid"]}}})),
            None,
        )
        .expect("the backend changes");
    let _ = run_once();
    assert_eq!(
        idp.asked().len(),
        2,
        "a new version of the backend fetches again"
    );
}
