//! Deployment (facts §4): the cinder-api Deployment `{name}`, its Service `{name}` on
//! 8776, and the API's readiness.
//!
//! | Case | DeploymentReady | CinderAPIReady | Pass |
//! |---|---|---|---|
//! | applied, not every replica ready | False `DeploymentNotReady` "Deployment {name} is rolling out (r/d ready)" | False `WaitingForDeployment` | 10 s |
//! | applied and ready | True `DeploymentReady` "Deployment {name} is ready" | True `APIAvailable` "Cinder API is served at {endpoint}" | goes on; status.endpoint set |
//!
//! DECISION: CinderAPIReady follows the Deployment's readiness (no health probe of the API
//! yet: there is no Cinder to answer one here); the README lists it as minimal.

use k8s_openapi::api::core::v1::Service;
use wasm_operator_sdk::blocks::deployment::{
    ensure_deployment, ensure_service, is_deployment_ready,
};
use wasm_operator_sdk::blocks::service::api;

use crate::conditions::{CINDER_API_READY, DEPLOYMENT_READY};
use crate::error::Error;
use crate::pass::{DEPLOYMENT_POLLING, Pass, StepResult};
use crate::steps::config::API_PORT;
use crate::workload::{Workload, labels};

/// `http://{name}.{ns}.svc.cluster.local:8776`.
pub(crate) fn endpoint(pass: &Pass<'_>) -> String {
    api::endpoint(&pass.service(), API_PORT)
}

/// The Service `{name}` in front of the API.
fn service(pass: &Pass<'_>) -> Service {
    api::api_service(
        &pass.service(),
        &labels(pass.name(), "api"),
        "cinder-api",
        API_PORT,
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let deployment = Workload {
        name: pass.name().to_owned(),
        component: "api".into(),
        command: vec!["cinder-api".into()],
        volumes: vec![],
        mounts: vec![],
        replicas: pass.cinder.spec.replicas.unwrap_or(1),
        recreate: false,
        pass,
    }
    .deployment();
    let applied = ensure_deployment(pass.cluster, &pass.owner, &deployment).map_err(|source| {
        Error::Workload {
            what: "Deployment",
            source,
        }
    })?;
    ensure_service(pass.cluster, &pass.owner, &service(pass)).map_err(|source| {
        Error::Workload {
            what: "Service",
            source,
        }
    })?;
    if !is_deployment_ready(&applied) {
        let ready = applied
            .status
            .as_ref()
            .and_then(|s| s.ready_replicas)
            .unwrap_or(0);
        let desired = applied.spec.replicas.unwrap_or(1);
        let message = format!(
            "Deployment {} is rolling out ({ready}/{desired} ready)",
            pass.name()
        );
        pass.condition(DEPLOYMENT_READY, false, "DeploymentNotReady", &message);
        pass.condition(
            CINDER_API_READY,
            false,
            "WaitingForDeployment",
            "Cinder API waits for its Deployment",
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    let message = format!("Deployment {} is ready", pass.name());
    pass.condition(DEPLOYMENT_READY, true, "DeploymentReady", &message);
    let endpoint = endpoint(pass);
    pass.condition(
        CINDER_API_READY,
        true,
        "APIAvailable",
        &format!("Cinder API is served at {endpoint}"),
    );
    pass.status_mut().service.endpoint = endpoint;
    Ok(None)
}
