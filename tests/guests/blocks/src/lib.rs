//! A test-only reconciler that runs the SDK's building blocks in the real host.
//!
//! The primary is a `tests.wasm-operator.dev/v1` BlockScenario: `spec.scenario` names the
//! block to run, `spec.params` its parameters. A pass runs the block with the scenario as
//! controller owner and writes what it returned (or its error) to `status.outcome`, with
//! `status.observedGeneration`; the status is written only when it changed. Changes of the
//! primary pass only when its generation changes, so the status write does not start
//! another pass; owned Deployments and Jobs start one (readiness, completion).

mod client;
mod config;
mod error;
mod external;
mod satellite;
mod scenario;
mod workloads;

use serde_json::{Map, Value, json};
use wasm_operator_sdk::external::certmanager::Certificate;
use wasm_operator_sdk::external::eso::{ExternalSecret, PushSecret};
use wasm_operator_sdk::external::mariadb::{Database, Grant, User};
use wasm_operator_sdk::k8s_openapi::Resource;
use wasm_operator_sdk::k8s_openapi::api::apps::v1::Deployment;
use wasm_operator_sdk::k8s_openapi::api::batch::v1::{CronJob, Job};
use wasm_operator_sdk::k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use wasm_operator_sdk::{
    Cluster, Description, KindRef, Mapping, ObjectRef, Outcome, Permission, Predicate, ReadFrom,
    ReconcileError, Reconciler, Request, Verb, Watch,
};

pub use error::ScenarioError;
pub use scenario::{Scenario, scenario_kind};

/// The block scenario reconciler.
pub struct Blocks;

fn permission<K: Resource>(verbs: &[Verb]) -> Permission
where
    K::Scope: 'static,
{
    Permission {
        kind: KindRef::of::<K>(),
        verbs: verbs.to_vec(),
    }
}

/// Exactly the verbs the scenarios use: apply is `patch`.
fn permissions() -> Vec<Permission> {
    use Verb::{Create, Delete, Get, List, Patch, UpdateStatus, Watch};
    vec![
        Permission {
            kind: scenario_kind(),
            verbs: vec![Get, List, Watch, UpdateStatus],
        },
        permission::<Deployment>(&[Get, List, Watch, Patch, Delete]),
        permission::<Service>(&[Get, Patch]),
        permission::<Job>(&[Get, List, Watch, Create, Delete]),
        permission::<CronJob>(&[Patch]),
        permission::<ConfigMap>(&[Get, List, Create, Patch, Delete]),
        permission::<Secret>(&[Get, Patch]),
        permission::<Database>(&[Patch]),
        permission::<User>(&[Patch]),
        permission::<Grant>(&[Patch]),
        permission::<Certificate>(&[Patch]),
        permission::<PushSecret>(&[Patch]),
        permission::<ExternalSecret>(&[Get]),
    ]
}

impl Reconciler for Blocks {
    fn describe() -> Description {
        Description {
            name: "blocks".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: wasm_operator_sdk::blocks::apply::FIELD_MANAGER.into(),
            primary: scenario_kind(),
            primary_predicates: vec![Predicate::GenerationChanged],
            watches: vec![
                Watch {
                    kind: KindRef::of::<Deployment>(),
                    mapping: Mapping::Owner,
                    optional: false,
                },
                Watch {
                    kind: KindRef::of::<Job>(),
                    mapping: Mapping::Owner,
                    optional: false,
                },
            ],
            watched_indexes: vec![],
            subresources: vec![wasm_operator_sdk::token::token_permission()],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: permissions(),
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        let r = ObjectRef {
            api_version: scenario::API_VERSION.into(),
            kind: scenario::KIND.into(),
            namespace: request.namespace.clone(),
            name: request.name.clone(),
        };
        let Some(object) = cluster
            .get(&r, ReadFrom::Cache)
            .map_err(wasm_operator_sdk::Error::from)?
        else {
            return Ok(Outcome::done());
        };
        if object.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok(Outcome::done());
        }
        let scenario =
            Scenario::read(&object).map_err(|e| ReconcileError::Permanent(e.to_string()))?;
        let outcome = match run(cluster, &scenario) {
            Ok(outcome) => outcome,
            Err(e) => workloads::outcome([("error", json!(e.to_string()))]),
        };
        write_status(cluster, object, scenario.generation, outcome)?;
        Ok(Outcome::done())
    }
}

/// Runs the block `scenario.block` names.
fn run(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    match s.block.as_str() {
        "object" => config::object(cluster, s),
        "immutable-config" => config::immutable(cluster, s),
        "policy" => config::policy(cluster, s),
        "deployment" => workloads::deployment(cluster, s),
        "service" => workloads::service(cluster, s),
        "job" => workloads::run_job(cluster, s),
        "cron-job" => workloads::cron_job(cluster, s),
        "database" => external::database(cluster, s),
        "database-user" => external::database_user(cluster, s),
        "certificate" => external::certificate(cluster, s),
        "push-secret" => external::push_secret(cluster, s),
        "secret-reads" => external::secret_reads(cluster, s),
        "satellite-observe" => satellite::observe(cluster, s),
        "delete-unchanged" => client::delete_unchanged(cluster, s),
        "token" => client::token(cluster, s),
        other => Err(ScenarioError::Unknown(other.to_owned())),
    }
}

/// Writes `status.outcome` and `status.observedGeneration` unless they already hold these.
fn write_status(
    cluster: &dyn Cluster,
    mut object: Value,
    generation: i64,
    outcome: Map<String, Value>,
) -> Result<(), ReconcileError> {
    let status = json!({"observedGeneration": generation, "outcome": outcome});
    if object.get("status") == Some(&status) {
        return Ok(());
    }
    object["status"] = status;
    cluster
        .update_status(&object)
        .map_err(wasm_operator_sdk::Error::from)?;
    Ok(())
}

wasm_operator_sdk::export_reconciler!(Blocks);
