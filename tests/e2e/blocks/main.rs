//! The SDK's building blocks end to end: the blocks-reconciler test guest runs every
//! Ensure*/Run*/Prune function in the real host against the embedded API server, one
//! BlockScenario per case, and reports what the block returned in the scenario's status.
//!
//! "Makes no write" is asserted with the API server's request counters and the objects'
//! resourceVersions: a converged pass sends the block's server-side apply (one PATCH, as
//! CobaltCore's EnsureObject does) and the server stores nothing — no create, update,
//! merge patch or delete request reaches the kind, and every object keeps its
//! resourceVersion.

mod client;
mod config;
mod external;
mod workloads;

use std::time::Duration;

use serde_json::{Value, json};
use wasm_operator::controller::{Backoff, ControllerConfig};
use wasm_operator::operator::{OperatorConfig, RunningOperator};
use wasm_operator_apiserver::Counts;
use wasm_operator_e2e::{Cluster, cluster_with, eventually, yaml_objects};
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_sdk::{ObjectRef, Patch};

pub const WAIT: Duration = Duration::from_secs(30);
pub const SCENARIOS: &str = "tests.wasm-operator.dev/v1";

pub fn setup() -> Caller {
    Caller {
        plugin: "test".into(),
        field_manager: "test".into(),
    }
}

/// The BlockScenario CRD.
fn scenario_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "blockscenarios.tests.wasm-operator.dev"},
        "spec": {
            "group": "tests.wasm-operator.dev",
            "scope": "Namespaced",
            "names": {"plural": "blockscenarios", "singular": "blockscenario", "kind": "BlockScenario"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "scenario": {"type": "string"},
                        "round": {"type": "integer"},
                        "params": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                }}},
            }],
        },
    })
}

/// The CRDs of mariadb-operator, External Secrets and cert-manager.
fn external_crds() -> Vec<Value> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../crds/external");
    ["mariadb-operator", "external-secrets", "cert-manager"]
        .iter()
        .flat_map(|name| {
            let text = std::fs::read_to_string(format!("{dir}/{name}.yaml")).expect("a CRD file");
            yaml_objects(&text)
        })
        .collect()
}

/// An object reference in namespace `ns`.
pub fn in_ns(api_version: &str, kind: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some("ns".into()),
        name: name.into(),
    }
}

pub struct Harness {
    pub cluster: Cluster,
    _operator: RunningOperator,
    _plugins: tempfile::TempDir,
}

impl Harness {
    /// The operator running only blocks-reconciler, with the scenario and external CRDs
    /// installed.
    pub async fn start() -> Self {
        wasm_operator_e2e::init_logs();
        let cluster = cluster_with(&[]).await;
        for crd in std::iter::once(scenario_crd()).chain(external_crds()) {
            cluster
                .backend
                .create(&setup(), crd)
                .await
                .expect("a CRD is created");
        }
        let plugins = tempfile::tempdir().expect("plugins");
        std::fs::copy(
            wasm_operator::cli::test_plugin_dir().join("blocks-reconciler.wasm"),
            plugins.path().join("blocks.wasm"),
        )
        .expect("the blocks reconciler is copied");
        let cache = wasm_operator_e2e::shared_cache();
        let mut config = OperatorConfig::new(plugins.path());
        config.controller = ControllerConfig {
            backoff: Backoff {
                base: Duration::from_millis(50),
                max: Duration::from_secs(1),
            },
            ..ControllerConfig::default()
        };
        let operator = cluster.start_operator(cache, config).await;
        Self {
            cluster,
            _operator: operator,
            _plugins: plugins,
        }
    }

    pub async fn create(&self, object: Value) -> Value {
        self.cluster
            .backend
            .create(&setup(), object)
            .await
            .expect("created")
    }

    /// Creates BlockScenario `name` running `block` with `params`.
    pub async fn scenario(&self, name: &str, block: &str, params: Value) -> Value {
        self.create(json!({"apiVersion": SCENARIOS, "kind": "BlockScenario",
            "metadata": {"name": name, "namespace": "ns"},
            "spec": {"scenario": block, "round": 0, "params": params}}))
            .await
    }

    /// Merge-patches `spec` of BlockScenario `name` (a new generation, so a new pass) and
    /// returns the generation.
    pub async fn patch_spec(&self, name: &str, spec: Value) -> i64 {
        let patched = self
            .cluster
            .backend
            .patch(
                &setup(),
                &in_ns(SCENARIOS, "BlockScenario", name),
                &Patch::Merge(json!({ "spec": spec })),
                None,
            )
            .await
            .expect("the scenario is patched");
        patched["metadata"]["generation"]
            .as_i64()
            .expect("a generation")
    }

    /// Changes nothing but `spec.round`: a pass with the same desired state.
    pub async fn rerun(&self, name: &str) -> i64 {
        let current = self.object(&in_ns(SCENARIOS, "BlockScenario", name)).await;
        let round = current
            .and_then(|c| c.pointer("/spec/round").and_then(Value::as_i64))
            .unwrap_or(0);
        self.patch_spec(name, json!({"round": round + 1})).await
    }

    /// The outcome of the first pass at `generation` or later that satisfies `accept`.
    pub async fn outcome(
        &self,
        name: &str,
        generation: i64,
        accept: impl Fn(&Value) -> bool,
    ) -> Value {
        let r = in_ns(SCENARIOS, "BlockScenario", name);
        eventually(
            &format!("the outcome of {name} at generation {generation}"),
            WAIT,
            || async {
                let object = self.object(&r).await?;
                let observed = object.pointer("/status/observedGeneration")?.as_i64()?;
                let outcome = object.pointer("/status/outcome")?.clone();
                (observed >= generation && accept(&outcome)).then_some(outcome)
            },
        )
        .await
    }

    /// The outcome of the first pass of generation 1 (any outcome).
    pub async fn first_outcome(&self, name: &str) -> Value {
        self.outcome(name, 1, |_| true).await
    }

    pub async fn object(&self, r: &ObjectRef) -> Option<Value> {
        self.cluster
            .backend
            .get(r, wasm_operator_sdk::ReadFrom::Server)
            .await
            .expect("get")
    }

    pub async fn must(&self, r: &ObjectRef) -> Value {
        self.object(r).await.unwrap_or_else(|| panic!("{r} exists"))
    }

    /// Replaces the status of `r` with `status`, as its own controller would: read, write
    /// under the resourceVersion read, and read again when a writer came in between.
    pub async fn set_status(&self, r: &ObjectRef, status: Value) {
        for _ in 0..20 {
            let mut object = self.must(r).await;
            object["status"] = status.clone();
            match self.cluster.backend.update_status(&setup(), object).await {
                Ok(_) => return,
                Err(wasm_operator_sdk::ApiError::Conflict(_)) => continue,
                Err(other) => panic!("the status of {r} is not written: {other}"),
            }
        }
        panic!("the status of {r} conflicted 20 times in a row");
    }

    /// Waits until no request reaches the server for 400 ms (trailing passes done).
    pub async fn settle(&self) {
        let mut last = self.cluster.counts();
        let mut quiet_since = tokio::time::Instant::now();
        let deadline = quiet_since + WAIT;
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            let now = self.cluster.counts();
            if now != last {
                last = now;
                quiet_since = tokio::time::Instant::now();
            } else if quiet_since.elapsed() >= Duration::from_millis(400) {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the cluster never settled"
            );
        }
    }

    /// Runs one more pass of scenario `name` with an unchanged desired state and asserts
    /// that it wrote none of `objects` (each with its resource's plural): the block sent no
    /// apply (the cache held what it applied) or one that changed nothing, no other write
    /// request reached their resources, and each kept its resourceVersion. Returns the
    /// counts of the pass.
    pub async fn assert_converged_pass_writes_nothing(
        &self,
        name: &str,
        objects: &[(&str, ObjectRef)],
    ) -> Counts {
        self.settle().await;
        let mut versions = Vec::new();
        for (_, r) in objects {
            versions.push(self.must(r).await["metadata"]["resourceVersion"].clone());
        }
        let before = self.cluster.counts();
        let generation = self.rerun(name).await;
        self.outcome(name, generation, |_| true).await;
        self.settle().await;
        let since = self.cluster.counts().since(&before);
        for ((plural, r), version) in objects.iter().zip(versions) {
            assert_eq!(
                since.stored(plural),
                0,
                "a converged pass stored a change of {plural}: {since:?}"
            );
            for verb in ["create", "update", "patch", "delete", "deletecollection"] {
                assert_eq!(
                    since.get(verb, plural),
                    0,
                    "a {verb} of {plural}: {since:?}"
                );
            }
            let after = self.must(r).await;
            assert_eq!(
                after["metadata"]["resourceVersion"], version,
                "{r} was rewritten by a converged pass"
            );
        }
        since
    }
}

/// The condition list `[{type, status: "True"}]` with the fields kube sets.
pub fn true_condition(type_: &str) -> Value {
    json!([{"type": type_, "status": "True", "reason": "Test", "message": "set by the test",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}])
}
