//! Step 4 end to end (facts §2.6): an LDAP KeystoneIdentityBackend naming the Keystone is
//! rendered into the immutable domains Secret, which the config and the Deployment take.
//! The KeystoneIdentityBackend's own CRD and controller come with the satellites (issue
//! 21); here a minimal CRD serves the kind and the test sets the backend's DomainReady as
//! its controller would.

use serde_json::{Value, json};
use wasm_operator_e2e::eventually;

use crate::harness::{GROUP_VERSION, Harness, WAIT, keystone, secret};

/// A CRD serving KeystoneIdentityBackends with any content (status without a subresource,
/// so the test writes it with the object).
pub(crate) fn identity_backend_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "keystoneidentitybackends.keystone.openstack.c5c3.io"},
        "spec": {"group": "keystone.openstack.c5c3.io", "scope": "Namespaced",
            "names": {"kind": "KeystoneIdentityBackend", "plural": "keystoneidentitybackends",
                      "singular": "keystoneidentitybackend",
                      "listKind": "KeystoneIdentityBackendList"},
            "versions": [{"name": "v1alpha1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}})
}

fn ldap_backend() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "KeystoneIdentityBackend",
        "metadata": {"name": "corp", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "LDAP",
            "domain": {"name": "corp"},
            "ldap": {"url": "ldaps://ldap.corp.example:636",
                     "bindCredentialsSecretRef": {"name": "corp-bind"},
                     "suffix": "dc=corp,dc=example",
                     "users": {"treeDN": "ou=people,dc=corp,dc=example"}}},
        "status": {"conditions": [{"type": "DomainReady", "status": "True",
            "reason": "DomainProvisioned", "message": "domain corp provisioned",
            "lastTransitionTime": "2026-12-03T08:00:00Z"}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ldap_backend_is_rendered_into_the_domains_secret_the_config_and_deployment_take() {
    let h = Harness::start().await;
    h.cluster.create(identity_backend_crd()).await;
    h.cluster
        .create(secret(
            "ns",
            "corp-bind",
            json!({"username": "cn=keystone,dc=corp,dc=example", "password": "bind-pw"}),
        ))
        .await;
    // The kind is served a moment after its CRD is created.
    eventually("the backend is created", WAIT, || async {
        h.cluster.create_if_served(ldap_backend()).await
    })
    .await;
    h.cluster.create(keystone(json!({}))).await;

    let object = h
        .condition("IdentityBackendsReady", "AllBackendsProjected")
        .await;
    assert_eq!(
        wasm_operator_e2e::current_condition(&object, "IdentityBackendsReady")
            .map(|c| c["message"].clone()),
        Some(json!("All attached identity backends are projected"))
    );
    let deployment = h
        .cluster
        .get("apps/v1", "Deployment", "ns", "ks")
        .await
        .expect("the Deployment");
    let domains = deployment
        .pointer("/spec/template/spec/volumes")
        .and_then(Value::as_array)
        .and_then(|v| v.iter().find(|v| v["name"] == "domains"))
        .and_then(|v| v["secret"]["secretName"].as_str())
        .map(str::to_owned)
        .expect("the Deployment mounts the domains Secret");
    assert!(domains.starts_with("ks-domains-"), "{domains}");
    let projected = h
        .cluster
        .get("v1", "Secret", "ns", &domains)
        .await
        .expect("the domains Secret");
    assert_eq!(projected["immutable"], true);
    assert_eq!(
        projected["metadata"]["labels"]["cobaltcore.c5c3.io/config-base"],
        "ks-domains"
    );
    let file = projected["data"]["keystone.corp.conf"]
        .as_str()
        .and_then(|b| base64::Engine::decode(&base64::engine::general_purpose::STANDARD, b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .expect("keystone.corp.conf");
    for line in [
        "driver = ldap",
        "url = ldaps://ldap.corp.example:636",
        "user = cn=keystone,dc=corp,dc=example",
        "user_tree_dn = ou=people,dc=corp,dc=example",
    ] {
        assert!(file.contains(line), "{line} in\n{file}");
    }
    let config = h.config_volume().await.expect("a config ConfigMap");
    let config = h
        .cluster
        .get("v1", "ConfigMap", "ns", &config)
        .await
        .expect("the config ConfigMap");
    let keystone_conf = config["data"]["keystone.conf"].as_str().unwrap_or_default();
    assert!(
        keystone_conf.contains("domain_specific_drivers_enabled = true")
            && keystone_conf.contains("domain_config_dir = /etc/keystone/domains"),
        "{keystone_conf}"
    );
}
