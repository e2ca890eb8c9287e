//! The demo's KeystoneIdentityBackend: an LDAP directory serving domain `corp` of the
//! demo's Keystone, its bind credentials synced by External Secrets from the secret
//! backend. Shown through the satellite handshake: the domain is created in the Keystone
//! (DomainReady), the Keystone renders it into its domains Secret and rolls its
//! Deployment, the backend sees its config mounted (ConfigProjected), then Ready; last,
//! the backends as `kubectl get keystoneidentitybackends` prints them.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use kube::api::{Api, DynamicObject};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

use super::keystone::{NAME as KEYSTONE, NAMESPACE, true_conditions};
use super::{create, resource};

/// The backend's name and its domain's.
const NAME: &str = "corp-ldap";
const DOMAIN: &str = "corp";
/// The secret backend's entry of the bind credentials.
const BIND_KEY: &str = "openstack/keystone/corp-ldap-bind";
/// How long the demo waits for the backend to be Ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// The conditions in the order the handshake sets them.
const HANDSHAKE: [&str; 3] = ["DomainReady", "ConfigProjected", "Ready"];

fn identity_backends() -> ApiResource {
    resource(
        "keystone.openstack.c5c3.io/v1alpha1",
        "KeystoneIdentityBackend",
        "keystoneidentitybackends",
    )
}

/// The backend: LDAP, domain `corp` managed by the operator.
fn backend() -> Value {
    json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1",
        "kind": "KeystoneIdentityBackend",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {"keystoneRef": {"name": KEYSTONE}, "type": "LDAP",
            "domain": {"name": DOMAIN, "description": "Corp directory"},
            "ldap": {"url": "ldaps://ldap.corp.example:636",
                     "bindCredentialsSecretRef": {"name": "corp-ldap-bind"},
                     "suffix": "dc=corp,dc=example",
                     "users": {"treeDN": "ou=people,dc=corp,dc=example"},
                     "groups": {"treeDN": "ou=groups,dc=corp,dc=example"}}}})
}

/// Seeds the bind credentials, syncs them with an ExternalSecret, applies the backend.
pub(crate) async fn apply(
    server: &wasm_operator_apiserver::ApiServer,
    client: &kube::Client,
) -> anyhow::Result<()> {
    let entry = [
        ("username", "cn=keystone,dc=corp,dc=example"),
        ("password", "demo-ldap-bind-password"),
    ]
    .iter()
    .map(|(k, v)| ((*k).to_owned(), v.as_bytes().to_vec()))
    .collect();
    server
        .secret_backend_put(BIND_KEY, entry)
        .context("seeding the secret backend")?;
    let data: Vec<Value> = ["username", "password"]
        .iter()
        .map(|k| json!({"secretKey": k, "remoteRef": {"key": BIND_KEY, "property": k}}))
        .collect();
    let external = json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": "corp-ldap-bind", "namespace": NAMESPACE},
        "spec": {"refreshInterval": "1h",
                 "secretStoreRef": {"kind": "ClusterSecretStore", "name": "openbao-cluster-store"},
                 "target": {"name": "corp-ldap-bind"}, "data": data}});
    create(
        client,
        external,
        &resource(
            "external-secrets.io/v1",
            "ExternalSecret",
            "externalsecrets",
        ),
    )
    .await?;
    create(client, backend(), &identity_backends()).await?;
    println!(
        "  applied     KeystoneIdentityBackend {NAMESPACE}/{NAME}: LDAP, domain {DOMAIN} of Keystone {KEYSTONE}"
    );
    Ok(())
}

/// Polls the backend until Ready, printing each handshake condition as it turns True.
pub(crate) async fn wait_ready(client: &kube::Client, started: Instant) -> anyhow::Result<()> {
    let api: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), NAMESPACE, &identity_backends());
    let mut shown: BTreeSet<String> = BTreeSet::new();
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let object = serde_json::to_value(
            api.get(NAME)
                .await
                .with_context(|| format!("reading KeystoneIdentityBackend {NAMESPACE}/{NAME}"))?,
        )?;
        let now_true = true_conditions(&object);
        for type_ in HANDSHAKE {
            let Some(condition) = now_true
                .iter()
                .find(|c| c.starts_with(&format!("{type_}/")))
            else {
                continue;
            };
            if shown.insert(condition.clone()) {
                let (_, reason) = condition.split_once('/').unwrap_or_default();
                println!(
                    "  [{:>5.1} s]  {type_:<22} {reason}",
                    started.elapsed().as_secs_f64()
                );
            }
        }
        if shown.iter().any(|c| c.starts_with("Ready/")) {
            return Ok(());
        }
        if Instant::now() > deadline {
            anyhow::bail!(
                "KeystoneIdentityBackend {NAMESPACE}/{NAME} was not Ready after {READY_TIMEOUT:?}; status: {}",
                object["status"]
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Prints the Keystone's evidence of the projection (the domains Secret its Deployment
/// mounts, and the backend's key in it), then the backends as the API server's Table
/// presents them to `kubectl get`.
pub(crate) async fn print(client: &kube::Client) -> anyhow::Result<()> {
    let deployments: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &resource("apps/v1", "Deployment", "deployments"),
    );
    let deployment = serde_json::to_value(
        deployments
            .get(KEYSTONE)
            .await
            .with_context(|| format!("reading Deployment {NAMESPACE}/{KEYSTONE}"))?,
    )?;
    let mounted = deployment
        .pointer("/spec/template/spec/volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|v| v["name"] == "domains")
        .and_then(|v| v.pointer("/secret/secretName"))
        .and_then(Value::as_str)
        .unwrap_or("(none)");
    println!(
        "\nDeployment {NAMESPACE}/{KEYSTONE} mounts Secret {mounted} as domains: keystone.{DOMAIN}.conf"
    );
    println!("\nkubectl get keystoneidentitybackends -n {NAMESPACE}");
    let table = super::table::get(
        client,
        &format!(
            "/apis/keystone.openstack.c5c3.io/v1alpha1/namespaces/{NAMESPACE}/keystoneidentitybackends"
        ),
    )
    .await?;
    for line in table {
        println!("  {line}");
    }
    Ok(())
}
