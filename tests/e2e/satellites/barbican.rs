//! Barbican and its BarbicanSecretStores (facts §3.6, §4): barbican.wasm and
//! barbicansecretstores.wasm through the handshake, the store managed on an
//! OpenBaoCluster the OpenBao actor runs — provisioned through a TokenRequest and the
//! Kubernetes login, its AppRole secret ID minted — then rendered as
//! `[secretstore:<store>]` into the config the Barbican Deployment mounts.

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_e2e::{current_condition, eventually};
use wasm_operator_runtime::backend::ClusterBackend as _;
use wasm_operator_sdk::DeleteOptions;

use crate::harness::{Harness, WAIT, in_ns, secret};

pub(crate) const GROUP_VERSION: &str = "barbican.openstack.c5c3.io/v1alpha1";
pub(crate) const NS: &str = "ns";

pub(crate) async fn start() -> Harness {
    let h = Harness::start(
        &["barbican", "barbicansecretstores"],
        &[
            "barbican.openstack.c5c3.io_barbicans.yaml",
            "barbican.openstack.c5c3.io_barbicansecretstores.yaml",
        ],
        false,
    )
    .await;
    for object in [
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
            "metadata": {"name": "maria", "namespace": NS}, "spec": {"replicas": 1}}),
        secret(
            NS,
            "barbican-db",
            json!({"username": "barbican", "password": "db-pw"}),
        ),
        secret(NS, "barbican-service", json!({"password": "svc-pw"})),
    ] {
        h.cluster.create(object).await;
    }
    h
}

pub(crate) fn barbican() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "Barbican",
        "metadata": {"name": "barbican", "namespace": NS},
        "spec": {
            "openStackRelease": "2025.2",
            "image": {"repository": "ghcr.io/c5c3/barbican", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "barbican",
                         "secretRef": {"name": "barbican-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "keystoneEndpoint": "http://keystone.ns.svc:5000/v3",
            "serviceUser": {"secretRef": {"name": "barbican-service"}}}})
}

/// The OpenBaoCluster `bao` CobaltCore's ControlPlane writes for a dedicated store.
pub(crate) fn openbao_cluster() -> Value {
    json!({"apiVersion": "openbao.org/v1alpha1", "kind": "OpenBaoCluster",
        "metadata": {"name": "bao", "namespace": NS},
        "spec": {"profile": "Development", "version": "2.6.1", "replicas": 1,
                 "tls": {"enabled": true, "mode": "External"}, "unseal": {"type": "static"},
                 "deletionPolicy": "DeletePVCs", "storage": {"size": "1Gi"},
                 "selfInit": {"enabled": true, "requests": [{"name": "barbican_kv",
                     "operation": "create", "path": "sys/mounts/barbican",
                     "secretEngine": {"type": "kv", "options": {"version": "2"}}}]}}})
}

/// The managed store `vault` on `bao`, the Barbican's default.
pub(crate) fn managed_store() -> Value {
    store("vault")
}

/// The managed store `name` on `bao`, marked the Barbican's default.
fn store(name: &str) -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "BarbicanSecretStore",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"barbicanRef": {"name": "barbican"}, "type": "OpenBao", "isDefault": true,
                 "openBao": {"instanceRef": {"name": "bao"}, "kvMountpoint": "barbican"}}})
}

impl Harness {
    pub(crate) async fn store_condition(&self, name: &str, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(
                GROUP_VERSION,
                "BarbicanSecretStore",
                NS,
                name,
                type_,
                reason,
                WAIT,
            )
            .await
    }

    pub(crate) async fn barbican_condition(&self, type_: &str, reason: &str) -> Value {
        self.cluster
            .condition_reached(
                GROUP_VERSION,
                "Barbican",
                NS,
                "barbican",
                type_,
                reason,
                WAIT,
            )
            .await
    }

    /// The barbican.conf the Barbican Deployment mounts once `until` holds for it.
    async fn mounted_conf_until(&self, what: &str, until: impl Fn(&str) -> bool) -> String {
        eventually(what, WAIT, || async {
            let deployment = self
                .cluster
                .get("apps/v1", "Deployment", NS, "barbican")
                .await?;
            let name = deployment
                .pointer("/spec/template/spec/volumes/0/secret/secretName")?
                .as_str()?
                .to_owned();
            let secret = self.cluster.get("v1", "Secret", NS, &name).await?;
            let conf = decoded(&secret, "barbican.conf");
            until(&conf).then_some(conf)
        })
        .await
    }
}

fn message(object: &Value, type_: &str) -> Value {
    current_condition(object, type_)
        .map(|c| c["message"].clone())
        .unwrap_or_default()
}

pub(crate) fn decoded(secret: &Value, key: &str) -> String {
    secret["data"][key]
        .as_str()
        .and_then(|b| base64::engine::general_purpose::STANDARD.decode(b).ok())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|| panic!("data key {key} in {secret}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_managed_store_is_provisioned_on_its_openbao_cluster_and_projected_into_barbican_conf() {
    let h = start().await;
    // GitOps order: the store before its Barbican and its OpenBaoCluster.
    h.cluster.create(managed_store()).await;
    let waiting = h
        .cluster
        .condition_reached(
            GROUP_VERSION,
            "BarbicanSecretStore",
            NS,
            "vault",
            "CredentialsReady",
            "WaitingForParent",
            WAIT,
        )
        .await;
    assert!(
        message(&waiting, "CredentialsReady")
            .as_str()
            .is_some_and(|m| m.starts_with("parent Barbican ns/barbican does not exist")),
        "{}",
        message(&waiting, "CredentialsReady")
    );
    h.cluster.create(openbao_cluster()).await;
    h.cluster.create(barbican()).await;

    let store = h
        .cluster
        .condition_reached(
            GROUP_VERSION,
            "BarbicanSecretStore",
            NS,
            "vault",
            "Ready",
            "AllReady",
            WAIT,
        )
        .await;
    assert_eq!(
        current_condition(&store, "ProvisioningReady").map(|c| c["reason"].clone()),
        Some(json!("Provisioned"))
    );
    let barbican = h
        .cluster
        .condition_reached(
            GROUP_VERSION,
            "Barbican",
            NS,
            "barbican",
            "SecretStoresReady",
            "AllStoresProjected",
            WAIT,
        )
        .await;
    assert_eq!(
        barbican["status"]["projectedSecretStores"],
        json!(["vault"])
    );
    assert_eq!(
        barbican["status"]["projectedSecretStoreHosts"],
        json!(["https://bao.ns.svc:8200"])
    );

    // What the Deployment mounts: the store's sections, the CA, the secret ID by env.
    let deployment = eventually("the Barbican Deployment", WAIT, || async {
        h.cluster.get("apps/v1", "Deployment", NS, "barbican").await
    })
    .await;
    let pod = &deployment["spec"]["template"]["spec"];
    let config = pod["volumes"][0]["secret"]["secretName"]
        .as_str()
        .expect("the config Secret")
        .to_owned();
    let config = h
        .cluster
        .get("v1", "Secret", NS, &config)
        .await
        .expect("the config Secret");
    let conf = decoded(&config, "barbican.conf");
    for line in [
        "[secretstore:vault]\nglobal_default = True\nsecret_store_plugin = vault_plugin\n",
        "vault_url = https://bao.ns.svc:8200\n",
        "ssl_ca_crt_file = /etc/barbican-secret-store-ca/ca.crt\n",
        "kv_mountpoint = barbican\n",
    ] {
        assert!(conf.contains(line), "{line:?} in\n{conf}");
    }
    let approle = h
        .cluster
        .get("v1", "Secret", NS, "vault-approle")
        .await
        .expect("the minted credentials");
    let secret_id = decoded(&approle, "secret-id");
    assert!(
        !conf.contains(&secret_id),
        "the secret ID is never rendered"
    );
    assert!(conf.contains(&format!(
        "approle_role_id = {}",
        decoded(&approle, "role-id")
    )));
    assert_eq!(pod["volumes"][1]["secret"]["secretName"], "bao-tls-ca");
    let env = pod["containers"][0]["env"]
        .as_array()
        .and_then(|e| {
            e.iter()
                .find(|v| v["name"] == "OS_VAULT_PLUGIN__APPROLE_SECRET_ID")
        })
        .cloned()
        .expect("the secret ID from the environment");
    assert_eq!(env["valueFrom"]["secretKeyRef"]["name"], "vault-approle");
    assert!(
        deployment["spec"]["template"]["metadata"]["annotations"]
            ["barbican.c5c3.io/secret-store-credentials-hash"]
            .as_str()
            .is_some_and(|h| h.len() == 64)
    );
    assert_eq!(
        message(&store, "ConfigProjected")
            .as_str()
            .map(str::is_empty),
        Some(false)
    );

    // A converged pass of either plugin writes nothing but the managed store's
    // TokenRequest (every pass checks the instance as the provisioner, as CobaltCore's
    // does; a TokenRequest stores nothing).
    let persistent = |writes: std::collections::BTreeMap<String, u64>| {
        writes
            .into_iter()
            // The TokenRequest: a create on the ServiceAccount's `token` subresource.
            .filter(|(labels, _)| !labels.starts_with("verb=\"create\",kind=\"ServiceAccount\""))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let writes = persistent(h.writes());
    h.touch_deployment("barbican", &["barbican", "barbicansecretstores"])
        .await;
    assert_eq!(persistent(h.writes()), writes, "a converged pass wrote");
}

/// Two stores named `vault2` and `vault`: a second default is named on the Barbican while
/// the running config stays; `[secretstore:vault2]` is never taken for `vault`'s section;
/// a deleting store leaves barbican.conf while its object is still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_default_store_is_named_on_the_barbican_name2_is_not_name_and_a_deleting_store_leaves_at_once()
 {
    let h = start().await;
    let mut held = store("vault2");
    held["metadata"]["finalizers"] = json!(["test.example.com/hold"]);
    h.cluster.create(held).await;
    h.cluster.create(openbao_cluster()).await;
    h.cluster.create(barbican()).await;
    h.store_condition("vault2", "Ready", "AllReady").await;
    h.mounted_conf_until("[secretstore:vault2] mounted", |c| {
        c.contains("[secretstore:vault2]\n")
    })
    .await;

    // A second store marked isDefault: both are credential-ready, so the Barbican names
    // them; the running config keeps serving `vault2`.
    h.cluster.create(store("vault")).await;
    h.store_condition("vault", "CredentialsReady", "CredentialsAvailable")
        .await;
    let barbican = h
        .barbican_condition("SecretStoresReady", "NoDefaultSecretStore")
        .await;
    assert_eq!(
        message(&barbican, "SecretStoresReady"),
        "2 attached, credential-ready secret stores are marked isDefault (vault, vault2); \
         exactly one is required"
    );
    // `[secretstore:vault2]` is no `[secretstore:vault]`: `vault` is not projected.
    let vault = h
        .store_condition("vault", "ConfigProjected", "WaitingForProjection")
        .await;
    assert_eq!(
        current_condition(&vault, "Ready").map(|c| c["reason"].clone()),
        Some(json!("NotAllReady"))
    );
    let conf = h
        .mounted_conf_until("the running config", |c| c.contains("[secretstore:vault2]"))
        .await;
    assert!(!conf.contains("[secretstore:vault]"), "{conf}");

    // Deleting `vault2`: de-projected while its object is still there, held by its
    // finalizer; `vault` is the one default left and is projected.
    h.cluster
        .backend
        .delete(
            &in_ns(GROUP_VERSION, "BarbicanSecretStore", "vault2"),
            &DeleteOptions::default(),
        )
        .await
        .expect("deleted");
    let conf = h
        .mounted_conf_until("only [secretstore:vault] mounted", |c| {
            c.contains("[secretstore:vault]\n") && !c.contains("[secretstore:vault2]")
        })
        .await;
    assert!(
        conf.contains("[secretstore:vault]\nglobal_default = True\n"),
        "{conf}"
    );
    h.store_condition("vault", "Ready", "AllReady").await;
    let barbican = h
        .barbican_condition("SecretStoresReady", "AllStoresProjected")
        .await;
    assert_eq!(
        barbican["status"]["projectedSecretStores"],
        json!(["vault"])
    );
    assert!(
        h.cluster
            .get(GROUP_VERSION, "BarbicanSecretStore", NS, "vault2")
            .await
            .is_some(),
        "the store is still there, held by its finalizer"
    );
}

/// What an operator of OpenBao grants Barbican on the KV mount.
const READ_WRITE: &str =
    r#"path "barbican/data/*" { capabilities = ["create", "read", "update", "delete", "list"] }"#;

/// A store on a server provisioned outside the operator — the OpenBaoCluster `bao`'s
/// server, reached as `https://bao.ns.svc:8200` with its CA, an AppRole its operator
/// made — is validated by a login and a capability read, nothing written, and projected;
/// when its capabilities shrink its gate closes and the Barbican says it has no default.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_brownfield_store_is_validated_read_only_projected_and_its_gate_closes_when_its_capabilities_shrink()
 {
    let h = start().await;
    h.cluster.create(openbao_cluster()).await;
    let bao = eventually("the OpenBaoCluster's server", WAIT, || async {
        h.cluster.server.openbao_cluster(NS, "bao")
    })
    .await;
    bao.set_policy("barbican-rw", READ_WRITE)
        .expect("the policy parses");
    let role_id = bao.set_approle("legacy", &["barbican-rw"], 0);
    let secret_id = bao.mint_secret_id("legacy").expect("a secret-id");
    h.cluster
        .create(secret(
            NS,
            "legacy-approle",
            json!({"role-id": role_id, "secret-id": secret_id}),
        ))
        .await;
    h.cluster
        .create(
            json!({"apiVersion": GROUP_VERSION, "kind": "BarbicanSecretStore",
            "metadata": {"name": "legacy", "namespace": NS},
            "spec": {"barbicanRef": {"name": "barbican"}, "type": "OpenBao", "isDefault": true,
                     "openBao": {"kvMountpoint": "barbican", "server": {
                         "url": "https://bao.ns.svc:8200",
                         "caBundleSecretRef": {"name": "bao-tls-ca"},
                         "credentialsSecretRef": {"name": "legacy-approle"}}}}}),
        )
        .await;
    h.cluster.create(barbican()).await;

    let store = h.store_condition("legacy", "Ready", "AllReady").await;
    assert_eq!(
        message(&store, "CredentialsReady"),
        "Secret ns/legacy-approle carries AppRole credentials with the create, read, update, \
         delete, list capabilities on \"barbican/data/probe\""
    );
    assert_eq!(
        current_condition(&store, "ProvisioningReady"),
        None,
        "nothing provisions a brownfield server"
    );
    let conf = h
        .mounted_conf_until("[secretstore:legacy] mounted", |c| {
            c.contains("[secretstore:legacy]\n")
        })
        .await;
    for line in [
        "vault_url = https://bao.ns.svc:8200\n".to_owned(),
        format!("approle_role_id = {role_id}\n"),
        "kv_mountpoint = barbican\n".to_owned(),
    ] {
        assert!(conf.contains(&line), "{line:?} in\n{conf}");
    }
    assert!(
        !conf.contains(&secret_id),
        "the secret ID is never rendered"
    );
    assert_eq!(bao.kv_get("barbican", "probe"), None, "nothing is written");

    // The AppRole loses delete and list: the next pass (an annotation wakes it) closes the
    // store's gate, and the Barbican, left without a credential-ready default, says so.
    bao.set_policy(
        "barbican-rw",
        r#"path "barbican/data/*" { capabilities = ["create", "read", "update"] }"#,
    )
    .expect("the policy parses");
    h.cluster
        .merge_patch(
            &in_ns(GROUP_VERSION, "BarbicanSecretStore", "legacy"),
            json!({"metadata": {"annotations": {"example.com/recheck": "1"}}}),
        )
        .await;
    let store = h
        .store_condition("legacy", "CredentialsReady", "InsufficientCapabilities")
        .await;
    assert_eq!(
        message(&store, "CredentialsReady"),
        "the AppRole credentials of Secret ns/legacy-approle lack the delete, list \
         capabilities on \"barbican/data/probe\""
    );
    let barbican = h
        .barbican_condition("SecretStoresReady", "NoDefaultSecretStore")
        .await;
    assert_eq!(
        message(&barbican, "SecretStoresReady"),
        "No attached, credential-ready secret store is marked isDefault; exactly one is required"
    );
    assert_eq!(
        h.cluster
            .events_with_reason(NS, "InsufficientCapabilities")
            .await
            .len(),
        1
    );
}
