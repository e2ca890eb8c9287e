//! What the step tests share: a Keystone, a pass over it, and reading its conditions.

use serde_json::{Value, json};
use wasm_operator_sdk::Owner;
use wasm_operator_sdk::blocks::conditions::find;
use wasm_operator_sdk::testing::FakeCluster;

use crate::pass::{Pass, StepResult};
use crate::types::Keystone;

/// A Keystone `ks` in `ns` with a managed database and cache, generation 2.
pub(crate) fn keystone() -> Value {
    json!({
        "apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "metadata": {"name": "ks", "namespace": "ns", "uid": "ks-uid", "generation": 2},
        "spec": {
            "image": {"repository": "ghcr.io/c5c3/keystone", "tag": "2025.2"},
            "database": {"clusterRef": {"name": "maria"}, "database": "keystone",
                         "secretRef": {"name": "ks-db"}},
            "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
            "bootstrap": {"adminPasswordSecretRef": {"name": "ks-admin"}},
        },
    })
}

/// `keystone()` with `patch` merged into its spec (RFC 7386).
pub(crate) fn keystone_with(patch: Value) -> Value {
    let mut object = keystone();
    merge(&mut object["spec"], &patch);
    object
}

fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

/// A pass over `object` on `cluster`.
pub(crate) fn pass<'c>(cluster: &'c FakeCluster, object: &Value) -> Pass<'c> {
    let keystone: Keystone = serde_json::from_value(object.clone()).expect("a Keystone");
    let owner = Owner::of(&keystone).expect("named, with a uid");
    Pass::new(cluster, keystone, owner)
}

/// The config ConfigMap the Config step names in step tests.
pub(crate) const CONFIG_MAP: &str = "ks-config-abcd1234";
/// The connection hash DBConnectionSecret hands on in step tests.
pub(crate) const CONNECTION_HASH: &str = "f00d";

/// A pass over `object` as the steps after Config and DBConnectionSecret find it: the
/// config ConfigMap [`CONFIG_MAP`] named, the connection hash [`CONNECTION_HASH`] set.
pub(crate) fn pass_with_config<'c>(cluster: &'c FakeCluster, object: &Value) -> Pass<'c> {
    let mut pass = pass(cluster, object);
    pass.config_map_name = Some(CONFIG_MAP.into());
    pass.db_connection_hash = Some(CONNECTION_HASH.into());
    pass
}

/// Runs `step` over `keystone_with(spec)` as [`pass_with_config`] sets it up: the step's
/// result and the pass after it.
pub(crate) fn run_with_config<'c>(
    cluster: &'c FakeCluster,
    spec: Value,
    step: impl FnOnce(&mut Pass<'c>) -> StepResult,
) -> (StepResult, Pass<'c>) {
    let mut pass = pass_with_config(cluster, &keystone_with(spec));
    let result = step(&mut pass);
    (result, pass)
}

/// `object` as the Keystone `ks` made it: controlled by it.
pub(crate) fn owned(mut object: Value) -> Value {
    object["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "keystone.openstack.c5c3.io/v1alpha1", "kind": "Keystone",
        "name": "ks", "uid": "ks-uid", "controller": true, "blockOwnerDeletion": true}]);
    object
}

/// `(status, reason, message)` of the condition `type_`.
pub(crate) fn condition(pass: &Pass<'_>, type_: &str) -> (String, String, String) {
    let c = find(pass.conditions(), type_).unwrap_or_else(|| panic!("no {type_} condition"));
    (c.status.clone(), c.reason.clone(), c.message.clone())
}

/// A Secret `ns/name` holding `pairs` (as the API server stores it: base64 `data`).
pub(crate) fn secret(name: &str, pairs: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = pairs
        .iter()
        .map(|(k, v)| {
            let bytes = k8s_openapi::ByteString(v.as_bytes().to_vec());
            (
                (*k).to_owned(),
                serde_json::to_value(bytes).expect("base64"),
            )
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
        "metadata": {"name": name, "namespace": "ns"}, "data": data})
}

/// A `k8s.mariadb.com/v1alpha1` object of `kind` named `name` in `ns` whose `Ready`
/// condition is `ready` (`"True"`, `"False"`).
pub(crate) fn mariadb_object(kind: &str, name: &str, ready: &str) -> Value {
    json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": kind,
        "metadata": {"name": name, "namespace": "ns"},
        "status": {"conditions": [{"type": "Ready", "status": ready}]}})
}

/// Ends Job `name` with condition `type_` (`Complete`, `Failed`), as the job controller
/// does.
pub(crate) fn finish_job(cluster: &FakeCluster, name: &str, type_: &str) {
    cluster.change("Job", name, |job| {
        job["status"] = json!({"conditions": [{"type": type_, "status": "True"}]});
    });
}

/// The names of the Jobs created, in order.
pub(crate) fn jobs_created(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .calls()
        .into_iter()
        .filter_map(|call| match call {
            wasm_operator_sdk::testing::Call::Create(r) if r.kind == "Job" => Some(r.name),
            _ => None,
        })
        .collect()
}

/// The `(type, reason, note)` of the events recorded, in order.
pub(crate) fn events(cluster: &FakeCluster) -> Vec<(String, String, String)> {
    cluster
        .events()
        .into_iter()
        .map(|(_, e)| (format!("{:?}", e.event_type), e.reason, e.note))
        .collect()
}

/// A health-check probe to which the Keystone API always answers 200: what whole-pass
/// tests use where the wasm host's HTTP egress is not available.
pub(crate) struct HealthyApi;

impl crate::steps::health_check::Probe for HealthyApi {
    fn get(
        &self,
        url: &str,
        _timeout: std::time::Duration,
    ) -> Result<wasm_operator_sdk::http::Response, wasm_operator_sdk::http::HttpError> {
        Ok(wasm_operator_sdk::http::Response {
            status: 200,
            headers: Vec::new(),
            body: br#"{"version": {"id": "v3.14", "status": "stable"}}"#.to_vec(),
            url: url.to_owned(),
        })
    }
}
