//! The KeystoneIdentityBackend controller (facts §3.2) end to end against Debian's real
//! Keystone: keystoneidentitybackends.wasm and keystone.wasm run side by side, the
//! Keystone's Service `ks` is routed to the real Keystone (as kube-proxy would route it),
//! and the domains, identity providers, mappings, protocols, groups and grants the
//! plugin makes are read back from that Keystone's own API.
//!
//! One real Keystone serves every test of this file (each test's own API server and
//! domain names keep them apart); it is set up once, in about 30 s, while the first
//! harness starts.

use std::sync::OnceLock;

use serde_json::{Value, json};
use wasm_operator_apiserver::HOLD_ROLLOUT;
use wasm_operator_e2e::real_keystone::RealKeystone;
use wasm_operator_e2e::{current_condition, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::ObjectRef;

use crate::federation::{ISSUER, discovery_server, idp_service, with_proxy_image};
use crate::harness::{ACTORS, GROUP_VERSION, Harness, WAIT, keystone, secret};

/// The password of the real Keystone's `admin`, which the Keystone CR's `ks-admin` holds.
const ADMIN_PASSWORD: &str = "admin-pw";
const KIND: &str = "KeystoneIdentityBackend";

static REAL: OnceLock<RealKeystone> = OnceLock::new();

/// The binary's real Keystone, set up on first use.
async fn real_keystone() -> &'static RealKeystone {
    tokio::task::spawn_blocking(|| REAL.get_or_init(|| RealKeystone::start(ADMIN_PASSWORD)))
        .await
        .expect("the real Keystone starts")
}

/// The EndpointSlice routing Service `ks`'s port `keystone` to the real Keystone.
fn routed_to(real: &RealKeystone) -> Value {
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "ks-real", "namespace": "ns",
                     "labels": {"kubernetes.io/service-name": "ks"}},
        "addressType": "IPv4",
        "ports": [{"name": "keystone", "port": real.port(), "protocol": "TCP"}],
        "endpoints": [{"addresses": ["127.0.0.1"], "conditions": {"ready": true}}]})
}

/// A harness running both plugins, namespace `ns` seeded, `ks` routed to the real
/// Keystone.
async fn start() -> (Harness, &'static RealKeystone) {
    let (h, real) = tokio::join!(
        Harness::start_with_identity_backends(&ACTORS),
        real_keystone()
    );
    h.seed("ns", &[]).await;
    h.cluster.create(routed_to(real)).await;
    (h, real)
}

fn backend_ref(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: GROUP_VERSION.into(),
        kind: KIND.into(),
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

/// An LDAP backend `name` of Keystone `ks` for domain `domain` (`domain_extra` merged into
/// spec.domain).
fn ldap_backend(name: &str, domain: &str, domain_extra: Value) -> Value {
    let mut domain_spec = json!({"name": domain});
    if let (Some(spec), Some(extra)) = (domain_spec.as_object_mut(), domain_extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"apiVersion": GROUP_VERSION, "kind": KIND,
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "LDAP", "domain": domain_spec,
            "ldap": {"url": "ldaps://ldap.corp.example:636",
                     "bindCredentialsSecretRef": {"name": "corp-bind"},
                     "suffix": "dc=corp,dc=example",
                     "users": {"treeDN": "ou=people,dc=corp,dc=example"}}}})
}

/// The real Keystone's domain named `name`, if any.
fn domain_named(real: &RealKeystone, name: &str) -> Option<Value> {
    let (status, body) = real.admin("GET", &format!("/domains?name={name}"), None);
    assert_eq!(status, 200, "GET /domains?name={name}: {body}");
    body["domains"].as_array().and_then(|d| d.first().cloned())
}

/// Creates domain `name` in the real Keystone, as an administrator would have; its id.
fn create_domain(real: &RealKeystone, name: &str) -> String {
    let (status, body) = real.admin(
        "POST",
        "/domains",
        Some(&json!({"domain": {"name": name, "enabled": true}})),
    );
    assert_eq!(status, 201, "POST /domains {name}: {body}");
    body["domain"]["id"]
        .as_str()
        .map(str::to_owned)
        .expect("the domain's id")
}

fn message(object: &Value, type_: &str) -> Value {
    current_condition(object, type_)
        .map(|c| c["message"].clone())
        .unwrap_or_default()
}

impl Harness {
    /// Waits until condition `type_` of backend `name` has `reason`; the backend then.
    async fn backend_condition(&self, name: &str, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(GROUP_VERSION, KIND, "ns", name, type_, reason, WAIT)
            .await
    }

    /// The Secret the Deployment `ks` mounts as volume `domains`.
    async fn domains_secret(&self) -> Option<Value> {
        let deployment = self
            .cluster
            .get("apps/v1", "Deployment", "ns", "ks")
            .await?;
        let name = deployment
            .pointer("/spec/template/spec/volumes")?
            .as_array()?
            .iter()
            .find(|v| v["name"] == "domains")?
            .pointer("/secret/secretName")?
            .as_str()?
            .to_owned();
        self.cluster.get("v1", "Secret", "ns", &name).await
    }

    /// The messages of the events of `reason` in `ns`.
    async fn event_messages(&self, reason: &str) -> Vec<String> {
        self.cluster
            .events_with_reason("ns", reason)
            .await
            .iter()
            .filter_map(|e| e["note"].as_str().map(str::to_owned))
            .collect()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ldap_backend_gets_its_domain_in_the_real_keystone_and_deleting_it_disables_and_deletes_the_domain()
 {
    let (h, real) = start().await;
    let legacy = create_domain(real, "legacy-ldap");
    let shared = create_domain(real, "shared-ldap");
    h.cluster
        .create(secret(
            "ns",
            "corp-bind",
            json!({"username": "cn=keystone,dc=corp,dc=example", "password": "bind-pw"}),
        ))
        .await;
    // GitOps order: the backends before their Keystone.
    let managed = json!({"description": "Corp LDAP", "deletionPolicy": "Delete"});
    h.cluster
        .create(ldap_backend("corp", "corp-ldap", managed))
        .await;
    let waiting = h
        .backend_condition("corp", "DomainReady", "KeystoneNotFound")
        .await;
    assert_eq!(
        message(&waiting, "DomainReady"),
        "Keystone ks not found in namespace ns"
    );
    h.cluster
        .create(ldap_backend("taken", "legacy-ldap", json!({})))
        .await;
    h.cluster
        .create(ldap_backend(
            "adopted",
            "shared-ldap",
            json!({"mode": "Adopt"}),
        ))
        .await;
    h.cluster.create(keystone(json!({}))).await;

    // Manage: the domain is created in the real Keystone, projected, rolled out.
    let corp = h.backend_condition("corp", "Ready", "AllReady").await;
    let domain = domain_named(real, "corp-ldap").expect("domain corp-ldap in the real Keystone");
    let id = domain["id"].as_str().expect("its id").to_owned();
    assert_eq!(corp["status"]["domainID"], id.as_str());
    assert_eq!(domain["enabled"], true);
    assert_eq!(domain["description"], "Corp LDAP");
    assert_eq!(
        message(&corp, "DomainReady"),
        format!("domain \"corp-ldap\" provisioned (id {id})")
    );
    assert_eq!(
        message(&corp, "ConfigProjected"),
        "domain config is mounted in the Keystone Deployment"
    );
    assert_eq!(
        h.event_messages("DomainCreated").await,
        [format!("Created domain \"corp-ldap\" (id {id})")]
    );

    // Manage on a domain somebody else made: refused, the domain left alone.
    let taken = h
        .backend_condition("taken", "DomainReady", "DomainAlreadyExists")
        .await;
    assert_eq!(
        message(&taken, "DomainReady"),
        format!(
            "domain \"legacy-ldap\" already exists (id {legacy}) but was not created by this \
             backend; use domain.mode Adopt to attach to it"
        )
    );
    // Adopt: the existing domain is attached, never changed.
    let adopted = h
        .backend_condition("adopted", "DomainReady", "DomainAdopted")
        .await;
    assert_eq!(
        message(&adopted, "DomainReady"),
        format!("domain \"shared-ldap\" adopted (id {shared})")
    );
    assert_eq!(adopted["status"]["domainID"], shared.as_str());

    // Delete: de-projected first, then disabled and deleted in the real Keystone.
    h.cluster
        .backend
        .delete(
            &backend_ref("corp"),
            &wasm_operator_sdk::DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    eventually("the backend gone", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, KIND, "ns", "corp")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    assert_eq!(
        domain_named(real, "corp-ldap"),
        None,
        "the domain is deleted"
    );
    assert_eq!(
        h.event_messages("DomainDisabled").await,
        ["Disabled domain \"corp-ldap\" before deletion"]
    );
    assert_eq!(
        h.event_messages("DomainDeleted").await,
        [format!("Deleted domain \"corp-ldap\" (id {id})")]
    );
    let mounted = h
        .domains_secret()
        .await
        .expect("the Deployment mounts a domains Secret");
    assert!(
        mounted["data"].get("keystone.corp-ldap.conf").is_none(),
        "the deleted backend's config left the Deployment first: {mounted}"
    );
    // The domains nobody asked to delete are still there.
    for name in ["legacy-ldap", "shared-ldap"] {
        assert!(domain_named(real, name).is_some(), "{name} stays");
    }
}

/// An OIDC backend of domain `corp-oidc` whose users land in group `corp-users`, which
/// gets `member` on the domain and `reader` on project `admin` of `Default`.
fn oidc_backend() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": KIND,
        "metadata": {"name": "corp-oidc", "namespace": "ns"},
        "spec": {"keystoneRef": {"name": "ks"}, "type": "OIDC",
            "domain": {"name": "corp-oidc", "description": "Corp SSO"},
            "oidc": {"issuer": ISSUER, "clientID": "keystone",
                     "clientSecretRef": {"name": "corp-oidc-client"}},
            "mappings": [{"remote": [{"type": "OIDC-preferred_username"}],
                          "local": [{"user": {"name": "{0}"}},
                                    {"group": {"name": "corp-users",
                                               "domain": {"name": "corp-oidc"}}}]}],
            "groups": [{"name": "corp-users", "roleAssignments": [
                {"role": "member", "domain": true},
                {"role": "reader", "project": {"name": "admin", "domainName": "Default"}}]}]}})
}

/// The id of the real Keystone's `kind` (`roles`, `groups`, `projects`) named `name`
/// (with a `&`-query `extra`).
fn id_of(real: &RealKeystone, kind: &str, name: &str, extra: &str) -> String {
    let (status, body) = real.admin("GET", &format!("/{kind}?name={name}{extra}"), None);
    assert_eq!(status, 200, "GET /{kind}?name={name}: {body}");
    body[kind][0]["id"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{kind} {name} in {body}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oidc_backend_registers_its_identity_provider_mapping_protocol_and_grants_in_the_real_keystone()
 {
    let (h, real) = start().await;
    let (port, _) = discovery_server().await;
    for object in idp_service(port) {
        h.cluster.create(object).await;
    }
    h.cluster
        .create(secret(
            "ns",
            "corp-oidc-client",
            json!({"clientSecret": "oidc-client-secret"}),
        ))
        .await;
    h.cluster.create(oidc_backend()).await;
    h.cluster.create(keystone(with_proxy_image())).await;

    let backend = h.backend_condition("corp-oidc", "Ready", "AllReady").await;
    let domain_id = backend["status"]["domainID"]
        .as_str()
        .expect("status.domainID")
        .to_owned();
    assert_eq!(
        message(&backend, "FederationObjectsReady"),
        "identity provider \"corp-oidc\" and protocol \"openid\" provisioned"
    );
    assert_eq!(
        message(&backend, "MappingsReady"),
        "mapping \"corp-oidc-mapping\", 1 group(s), and role assignments applied"
    );

    // What the real Keystone now holds.
    let (status, idp) = real.admin("GET", "/OS-FEDERATION/identity_providers/corp-oidc", None);
    assert_eq!(status, 200, "{idp}");
    let idp = &idp["identity_provider"];
    assert_eq!(idp["domain_id"], domain_id.as_str());
    assert_eq!(idp["remote_ids"], json!([ISSUER]));
    assert_eq!(idp["enabled"], true);
    assert_eq!(idp["description"], "Corp SSO");
    let (status, mapping) = real.admin("GET", "/OS-FEDERATION/mappings/corp-oidc-mapping", None);
    assert_eq!(status, 200, "{mapping}");
    assert_eq!(
        mapping["mapping"]["rules"],
        json!([{"remote": [{"type": "OIDC-preferred_username"}],
                "local": [{"user": {"name": "{0}"}},
                          {"group": {"name": "corp-users", "domain": {"name": "corp-oidc"}}}]}])
    );
    let (status, protocol) = real.admin(
        "GET",
        "/OS-FEDERATION/identity_providers/corp-oidc/protocols/openid",
        None,
    );
    assert_eq!(status, 200, "{protocol}");
    assert_eq!(protocol["protocol"]["mapping_id"], "corp-oidc-mapping");
    let group = id_of(
        real,
        "groups",
        "corp-users",
        &format!("&domain_id={domain_id}"),
    );
    let member = id_of(real, "roles", "member", "");
    let reader = id_of(real, "roles", "reader", "");
    let admin_project = id_of(real, "projects", "admin", "");
    for grant in [
        format!("/domains/{domain_id}/groups/{group}/roles/{member}"),
        format!("/projects/{admin_project}/groups/{group}/roles/{reader}"),
    ] {
        let (status, body) = real.admin("HEAD", &grant, None);
        assert_eq!(status, 204, "grant {grant}: {body}");
    }
    assert_eq!(
        h.event_messages("IdentityProviderCreated").await,
        [format!(
            "Created identity provider \"corp-oidc\" (remote ID {ISSUER})"
        )]
    );

    // A converged pass of either plugin writes nothing.
    h.condition("Ready", "AllReady").await;
    let writes = h.plugin_writes();
    h.cluster
        .touch_deployment(
            &h.operator,
            "ns",
            "ks",
            &["keystone", "keystoneidentitybackends"],
        )
        .await;
    assert_eq!(h.plugin_writes(), writes, "a converged pass wrote");

    // A changed config under a held rollout: mounted in the pod template, not yet running.
    let deployment = ObjectRef {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        namespace: Some("ns".into()),
        name: "ks".into(),
    };
    h.cluster
        .merge_patch(
            &deployment,
            json!({"metadata": {"annotations": {HOLD_ROLLOUT: "true"}}}),
        )
        .await;
    h.cluster
        .merge_patch(
            &backend_ref("corp-oidc"),
            json!({"spec": {"oidc": {"clientID": "keystone-2"}}}),
        )
        .await;
    let rolling = h
        .backend_condition("corp-oidc", "ConfigProjected", "WaitingForRollout")
        .await;
    assert_eq!(
        message(&rolling, "ConfigProjected"),
        "the Keystone Deployment has not finished rolling out this backend's config"
    );
    h.cluster
        .merge_patch(
            &deployment,
            json!({"metadata": {"annotations": {HOLD_ROLLOUT: null}}}),
        )
        .await;
    h.backend_condition("corp-oidc", "ConfigProjected", "ConfigProjected")
        .await;

    // Deleting (deletionPolicy Retain): the federation objects go, the domain stays.
    h.cluster
        .backend
        .delete(
            &backend_ref("corp-oidc"),
            &wasm_operator_sdk::DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    eventually("the backend gone", WAIT, || async {
        h.cluster
            .get(GROUP_VERSION, KIND, "ns", "corp-oidc")
            .await
            .is_none()
            .then_some(())
    })
    .await;
    let (status, _) = real.admin("GET", "/OS-FEDERATION/identity_providers/corp-oidc", None);
    assert_eq!(status, 404, "the identity provider is deleted");
    let (status, _) = real.admin("GET", "/OS-FEDERATION/mappings/corp-oidc-mapping", None);
    assert_eq!(status, 404, "the mapping is deleted");
    assert_eq!(
        h.event_messages("FederationObjectsDeleted").await,
        [
            "Deleted protocol \"openid\", mapping \"corp-oidc-mapping\", and identity provider \"corp-oidc\""
        ]
    );
    assert!(
        domain_named(real, "corp-oidc").is_some(),
        "deletionPolicy Retain keeps the domain"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backend_of_a_keystone_on_a_target_cluster_provisions_through_the_targets_service_and_is_projected_there()
 {
    use crate::targets::{registration, target_cluster_with, targeted};
    let (h, real) = tokio::join!(
        Harness::start_with_identity_backends(&ACTORS),
        real_keystone()
    );
    // The clusters namespace is there: the operator's RBAC has a Role in it.
    let target = target_cluster_with(&ACTORS).await;
    // The Keystone's Service on the target routes to the real Keystone; the management
    // cluster has no route to it.
    target.create(routed_to(real)).await;
    h.cluster.create(registration("edge", &target)).await;
    // The backend and its bind Secret stay on the management cluster.
    h.cluster
        .create(secret(
            "ns",
            "corp-bind",
            json!({"username": "cn=keystone,dc=corp,dc=example", "password": "bind-pw"}),
        ))
        .await;
    h.cluster
        .create(ldap_backend("edge", "edge-ldap", json!({})))
        .await;
    h.cluster.create(targeted("edge")).await;

    let ready = h.backend_condition("edge", "Ready", "AllReady").await;
    let domain = domain_named(real, "edge-ldap").expect("domain edge-ldap in the real Keystone");
    assert_eq!(ready["status"]["domainID"], domain["id"]);
    assert_eq!(
        message(&ready, "ConfigProjected"),
        "domain config is mounted in the Keystone Deployment"
    );
    // The projection is on the target: its Deployment mounts the domains Secret there.
    let deployment = target
        .get("apps/v1", "Deployment", "ns", "ks")
        .await
        .expect("the Keystone Deployment on the target");
    let mounted = deployment
        .pointer("/spec/template/spec/volumes")
        .and_then(Value::as_array)
        .and_then(|v| v.iter().find(|v| v["name"] == "domains"))
        .and_then(|v| v.pointer("/secret/secretName"))
        .and_then(Value::as_str)
        .expect("the domains volume")
        .to_owned();
    let projected = target
        .get("v1", "Secret", "ns", &mounted)
        .await
        .expect("the domains Secret on the target");
    assert!(
        projected["data"]
            .as_object()
            .is_some_and(|d| d.contains_key("keystone.edge-ldap.conf")),
        "{:?}",
        projected["data"]
            .as_object()
            .map(|d| d.keys().collect::<Vec<_>>())
    );
    assert!(
        h.cluster
            .get("apps/v1", "Deployment", "ns", "ks")
            .await
            .is_none(),
        "nothing of the Keystone's on the management cluster"
    );
}
