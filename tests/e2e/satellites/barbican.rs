//! Barbican and its BarbicanSecretStores (facts §3.6, §4): barbican.wasm and
//! barbicansecretstores.wasm through the handshake, the store managed on an
//! OpenBaoCluster the OpenBao actor runs — provisioned through a TokenRequest and the
//! Kubernetes login, its AppRole secret ID minted — then rendered as
//! `[secretstore:<store>]` into the config the Barbican Deployment mounts.

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_e2e::{current_condition, eventually};

use crate::harness::{Harness, WAIT, secret};

const GROUP_VERSION: &str = "barbican.openstack.c5c3.io/v1alpha1";
const NS: &str = "ns";

async fn start() -> Harness {
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

fn barbican() -> Value {
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
fn openbao_cluster() -> Value {
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
fn managed_store() -> Value {
    json!({"apiVersion": GROUP_VERSION, "kind": "BarbicanSecretStore",
        "metadata": {"name": "vault", "namespace": NS},
        "spec": {"barbicanRef": {"name": "barbican"}, "type": "OpenBao", "isDefault": true,
                 "openBao": {"instanceRef": {"name": "bao"}, "kvMountpoint": "barbican"}}})
}

fn message(object: &Value, type_: &str) -> Value {
    current_condition(object, type_)
        .map(|c| c["message"].clone())
        .unwrap_or_default()
}

fn decoded(secret: &Value, key: &str) -> String {
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
