//! Scenario 10, the embedded API server's CEL validation rules: server-side applies per
//! second of Keystones under the shipped Keystone CRD (its 13 `x-kubernetes-validations`
//! rules evaluated on every write) and under the same CRD without its rules (served as
//! another group), in alternating rounds on one server. Issue 23 asks CEL to cost no more
//! than 10%.

use std::time::Duration;

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use serde_json::{Value, json};
use tokio::time::Instant;
use wasm_operator::cli::operator_account;
use wasm_operator_apiserver::{ApiServer, ServerConfig};

use super::BenchOptions;
use super::report::Section;

/// The shipped Keystone CRD.
const KEYSTONE_CRD: &str = include_str!("../../../crds/keystone.openstack.c5c3.io_keystones.yaml");
/// The group of the rule-free copy.
const PLAIN_GROUP: &str = "plain.keystone.openstack.c5c3.io";

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "cel",
        "10. API server CEL validation rules: server-side applies per second",
        &[
            "measure",
            "Keystone CRD without rules",
            "Keystone CRD with its rules",
            "with ÷ without",
        ],
    );
    let server = ApiServer::start(ServerConfig::default()).await?;
    let admin = server.client()?;
    let ruled: Value = serde_yaml_ng::from_str(KEYSTONE_CRD)?;
    let rules = count_rules(&ruled);
    let plain = without_rules(ruled.clone());
    for crd in [&ruled, &plain] {
        operator_account::apply(&admin, "bench-setup", crd).await?;
    }
    let with_rules = resource(&ruled);
    let without = resource(&plain);
    // The first apply waits for discovery to serve the kinds.
    for api in [&with_rules, &without] {
        let deadline = Instant::now() + Duration::from_secs(30);
        while let Err(e) = apply(&admin, api, "warm-up", 0).await {
            if Instant::now() > deadline {
                anyhow::bail!("{} is not served: {e}", api.api_version);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let rounds = options.samples(10);
    let per_round = if options.quick { 50 } else { 300 };
    super::alternating_rates(
        &mut section,
        format!("applies per second (median of {rounds} rounds of {per_round})"),
        rounds,
        |round| applies_per_second(&admin, &without, round, per_round),
        |round| applies_per_second(&admin, &with_rules, round, per_round),
    )
    .await?;
    section.note(format!(
        "Each apply changes a Keystone's spec (a distinct one of 50), so every rule of the \
         {rules} is evaluated, the transition rules against the stored object. Target \
         (issue 23): with rules at least 0.90 of the rate without."
    ));
    server.stop();
    Ok(section)
}

fn count_rules(crd: &Value) -> usize {
    crd.to_string().matches("\"rule\":").count()
}

/// The CRD with every `x-kubernetes-validations` removed, served as [`PLAIN_GROUP`].
fn without_rules(mut crd: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.remove("x-kubernetes-validations");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut crd);
    let plural = crd["spec"]["names"]["plural"]
        .as_str()
        .unwrap_or("keystones")
        .to_owned();
    crd["spec"]["group"] = json!(PLAIN_GROUP);
    crd["metadata"] = json!({"name": format!("{plural}.{PLAIN_GROUP}")});
    crd
}

/// The kind a CRD serves, at its storage version.
fn resource(crd: &Value) -> ApiResource {
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let version = crd["spec"]["versions"][0]["name"]
        .as_str()
        .unwrap_or_default();
    ApiResource {
        group: group.to_owned(),
        version: version.to_owned(),
        api_version: format!("{group}/{version}"),
        kind: crd["spec"]["names"]["kind"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        plural: crd["spec"]["names"]["plural"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Applies Keystone `name` with a spec that varies with `i`.
async fn apply(
    client: &kube::Client,
    resource: &ApiResource,
    name: &str,
    i: usize,
) -> Result<(), kube::Error> {
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", resource);
    let level = ["DEBUG", "INFO", "WARNING"][i % 3];
    let object = json!({
        "apiVersion": resource.api_version, "kind": resource.kind,
        "metadata": {"name": name},
        "spec": {
            "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
            "logging": {"perLoggerLevels": {"keystone": level, "sqlalchemy.engine": "WARNING"}},
            "database": {"clusterRef": {"name": "maria"}, "database": "keystone", "secretRef": {"name": "keystone-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "bootstrap": {"adminPasswordSecretRef": {"name": "keystone-admin"}},
            "trustFlush": {"schedule": format!("{} * * * *", i % 60)},
        },
    });
    api.patch(name, &PatchParams::apply("bench"), &Patch::Apply(&object))
        .await
        .map(|_| ())
}

/// `per_round` applies of 50 distinct Keystones of `resource`, per second.
async fn applies_per_second(
    client: &kube::Client,
    resource: &ApiResource,
    round: usize,
    per_round: usize,
) -> anyhow::Result<f64> {
    let started = Instant::now();
    for i in 0..per_round {
        let name = format!("keystone-{}", i % 50);
        apply(client, resource, &name, round * per_round + i).await?;
    }
    let elapsed = started.elapsed().max(Duration::from_micros(1));
    Ok(per_round as f64 / elapsed.as_secs_f64())
}
