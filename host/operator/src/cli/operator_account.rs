//! The operator under its own RBAC on an embedded API server: a ServiceAccount bound to
//! exactly what `wasm-operator rbac` prints for its plugins, and a client with its token.
//! `plugin test` scenarios and the end-to-end suites run the operator this way, never as
//! the admin, so a verb a plugin uses but does not declare is a 403 there rather than a
//! surprise in a cluster.

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};
use wasm_operator_apiserver::ApiServer;
use wasm_operator_runtime::Runtime;

use super::run::{RbacOptions, rbac_yaml_of};
use crate::operator::OperatorConfig;
use crate::operator::loader::load_directory;
use crate::webhook::CertSource;

/// The namespace of the operator's ServiceAccount.
pub const NAMESPACE: &str = "wasm-operator-system";
/// The operator's ServiceAccount.
pub const NAME: &str = "wasm-operator";

/// The field manager the admin applies the ServiceAccount and its roles with.
const MANAGER: &str = "wasm-operator-admin";

/// How long the ServiceAccount's token lasts.
const TOKEN_SECONDS: i64 = 86_400;

/// [`grant`]s the operator's ServiceAccount its RBAC for `config` and returns a client of
/// `server` authenticated with a token of that ServiceAccount.
pub async fn operator_client(
    server: &ApiServer,
    runtime: &Runtime,
    config: &OperatorConfig,
) -> anyhow::Result<kube::Client> {
    grant(server, runtime, config).await?;
    let token = token(&server.client()?, NAMESPACE, NAME).await?;
    Ok(server.client_with_token(&token)?)
}

/// Applies, as the admin, the ServiceAccount [`NAMESPACE`]/[`NAME`] and what
/// `wasm-operator rbac --service-account` prints for `config` (its plugins that load, its
/// namespace, Lease, webhook certificate and clusters namespace), creating the namespaces
/// the roles go in. Again after the plugins change, as an administrator would.
pub async fn grant(
    server: &ApiServer,
    runtime: &Runtime,
    config: &OperatorConfig,
) -> anyhow::Result<()> {
    let admin = server.client()?;
    let lease = config
        .leader_election
        .as_ref()
        .map(|l| (l.lease_namespace.as_str(), l.lease_name.as_str()));
    let webhook_secret = match config.webhook.as_ref().map(|w| &w.cert) {
        Some(CertSource::Managed {
            secret_namespace,
            secret_name,
            ..
        }) => Some((secret_namespace.as_str(), secret_name.as_str())),
        _ => None,
    };
    let options = RbacOptions {
        namespace: config.namespace.as_deref(),
        lease,
        webhook_secret,
        clusters_namespace: &config.clusters_namespace,
        resolves_services: !config.cluster_dns,
        service_account: Some((NAMESPACE, NAME)),
    };
    // The roles of the plugins that load: the operator starts over a refused file too
    // (and reports it), where `wasm-operator rbac` refuses to render.
    let loaded = load_directory(runtime, &config.plugins, config.plugins_config.as_deref()).await?;
    let yaml = rbac_yaml_of(&loaded, &options)?;
    let mut rendered = Vec::new();
    for document in yaml.split("---\n").filter(|d| !d.trim().is_empty()) {
        let object: Value =
            serde_yaml_ng::from_str(document).context("wasm-operator rbac printed no object")?;
        rendered.push(object);
    }
    let mut namespaces: Vec<String> = rendered
        .iter()
        .filter_map(|o| o["metadata"]["namespace"].as_str())
        .chain([NAMESPACE])
        .map(str::to_owned)
        .collect();
    namespaces.sort_unstable();
    namespaces.dedup();
    let namespaces = namespaces
        .into_iter()
        .map(|ns| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}));
    let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"namespace": NAMESPACE, "name": NAME}});
    for object in namespaces.chain([account]).chain(rendered) {
        apply(&admin, MANAGER, &object).await?;
    }
    Ok(())
}

/// Server-side applies `object` (a kind the server serves) through `client` as `manager`,
/// forcing conflicts.
pub async fn apply(client: &kube::Client, manager: &str, object: &Value) -> anyhow::Result<()> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    let (api_version, kind) = (text(&object["apiVersion"]), text(&object["kind"]));
    let name = text(&object["metadata"]["name"]);
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let gvk = kube::api::GroupVersionKind::gvk(group, version, &kind);
    let (resource, capabilities) = kube::discovery::pinned_kind(client, &gvk)
        .await
        .with_context(|| format!("discovery of {api_version} {kind}"))?;
    let api: Api<DynamicObject> =
        match (capabilities.scope, object["metadata"]["namespace"].as_str()) {
            (kube::discovery::Scope::Namespaced, Some(ns)) => {
                Api::namespaced_with(client.clone(), ns, &resource)
            }
            _ => Api::all_with(client.clone(), &resource),
        };
    api.patch(
        &name,
        &PatchParams::apply(manager).force(),
        &Patch::Apply(object),
    )
    .await
    .with_context(|| format!("applying {kind} {name}"))?;
    Ok(())
}

/// A day-long token of ServiceAccount `namespace`/`name` for the API server's audience,
/// requested through `admin`.
pub async fn token(admin: &kube::Client, namespace: &str, name: &str) -> anyhow::Result<String> {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::ServiceAccount;
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), namespace);
    let request = TokenRequest {
        spec: Some(TokenRequestSpec {
            expiration_seconds: Some(TOKEN_SECONDS),
            ..TokenRequestSpec::default()
        }),
        ..TokenRequest::default()
    };
    let answer = accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .with_context(|| format!("a token of ServiceAccount {namespace}/{name}"))?;
    answer
        .status
        .and_then(|s| s.token)
        .with_context(|| format!("the TokenRequest of {namespace}/{name} returned no token"))
}
