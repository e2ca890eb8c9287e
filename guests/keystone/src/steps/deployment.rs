//! Step 9 — Deployment (facts §2.16): the API Deployment, its Service and its
//! PodDisruptionBudget, all `{name}`, and `status.endpoint` once the API is available.
//!
//! | Case | DeploymentReady | Pass |
//! |---|---|---|
//! | not ready (readyReplicas < desired, or not Available) | False `WaitingForDeployment` | 10 s |
//! | upgrade phase RollingUpdate, not fully rolled out | False `WaitingForDeployment` | 10 s |
//! | upgrade phase RollingUpdate, rolled out | True; phase → Contracting, event `DeploymentRolloutComplete` | again now |
//! | ready | True `DeploymentReady`; endpoint set | goes on |
//!
//! The Service selects name and instance until the pod template has converged (or the
//! live Service already selects the `api` component), then also `component=api`: once
//! narrowed it stays narrowed, read past the cache.
//!
//! | `pass.federation` | uWSGI | Service targetPort | pod |
//! |---|---|---|---|
//! | none | `--http :5000` | 5000 | `keystone` only |
//! | projected | `--http 127.0.0.1:5000 --buffer-size 65535` | 5050 | `keystone` with exec probes, and the `federation-proxy` sidecar ([`proxy`]) |
//!
//! The Service's port stays 5000 either way: the endpoint, the HTTPRoute and the health
//! check keep it, and with federation every request passes the proxy.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, ExecAction, Lifecycle, LifecycleHandler, PodSpec, PodTemplateSpec,
    Probe, Service, ServicePort, ServiceSpec, TopologySpreadConstraint,
};
use k8s_openapi::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use wasm_operator_sdk::blocks::apply::ensure_object;
use wasm_operator_sdk::blocks::deployment::{
    ensure_deployment, ensure_service, is_deployment_ready,
};
use wasm_operator_sdk::blocks::types::{CREDENTIALS_MODE_DYNAMIC, UpgradePhase, UwsgiSpec};
use wasm_operator_sdk::{ClusterExt, ReadFrom};

use crate::conditions::DEPLOYMENT_READY;
use crate::error::Error;
use crate::federation::PROXY_PORT;
use crate::labels::{common_labels, component_labels, selector_labels};
use crate::pass::{DEPLOYMENT_POLLING, NEXT_PASS, Pass, StepResult};
use crate::pod::{self, CONFIG_DIR};

#[path = "deployment_proxy.rs"]
mod proxy;

/// The API port.
pub(crate) const API_PORT: i32 = 5000;
/// The pod-template annotation that rolls the pods when a Dynamic credential changes.
pub(crate) const DB_CONNECTION_HASH_ANNOTATION: &str = "keystone.c5c3.io/db-connection-hash";
/// The component label value of the API pods.
const COMPONENT_API: &str = "api";
/// uWSGI's request log line.
const LOG_FORMAT: &str =
    "%(method) %(uri) => generated %(rsize) bytes in %(msecs) msecs (%(proto) %(status))";
/// The readiness probe: a TCP connect to the database named in the connection string.
const DB_READINESS_SCRIPT: &str = "python3 -c \"import os,socket; from urllib.parse import urlparse; raw=os.environ.get('OS_DATABASE__CONNECTION',''); u=urlparse('//'+raw.split('://',1)[-1]); socket.create_connection((u.hostname, u.port or 3306), 20).close()\"";

/// uWSGI's request buffer behind the proxy: the IdP's claim headers and the session
/// cookie outgrow the 4096-byte default.
const PROXIED_BUFFER_SIZE: &str = "65535";

/// The uWSGI command line of the API container; `behind_proxy` (federation) binds it to
/// 127.0.0.1, where only the sidecar reaches it, with a larger request buffer.
pub(crate) fn uwsgi_command(spec: Option<&UwsgiSpec>, behind_proxy: bool) -> Vec<String> {
    let uwsgi = UwsgiSpec::effective(spec);
    let mut command: Vec<String> = vec!["uwsgi".into(), "--http".into()];
    if behind_proxy {
        command.extend([
            format!("127.0.0.1:{API_PORT}"),
            "--buffer-size".into(),
            PROXIED_BUFFER_SIZE.into(),
        ]);
    } else {
        command.push(format!(":{API_PORT}"));
    }
    if uwsgi.http_keep_alive == Some(true) {
        command.push("--http-keepalive".into());
        if let Some(timeout) = uwsgi.http_keep_alive_timeout {
            command.extend(["--http-keepalive-timeout".into(), timeout.to_string()]);
        }
    }
    command.extend(
        [
            "--log-master",
            "--log-format",
            LOG_FORMAT,
            "--wsgi-file",
            "/var/lib/openstack/bin/keystone-wsgi-public",
            "--master",
            "--lazy-apps",
            "--need-app",
            "--processes",
        ]
        .map(String::from),
    );
    command.push(uwsgi.processes.to_string());
    command.push("--threads".into());
    command.push(uwsgi.threads.to_string());
    command.push(format!("--pyargv=--config-dir={CONFIG_DIR}"));
    if let Some(harakiri) = uwsgi.harakiri {
        command.extend(["--harakiri".into(), harakiri.to_string()]);
    }
    command
}

/// The spread when `topologySpreadConstraints` is unset: across zones and hosts.
fn default_spread(name: &str) -> Vec<TopologySpreadConstraint> {
    ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]
        .map(|key| TopologySpreadConstraint {
            max_skew: 1,
            topology_key: key.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(LabelSelector {
                match_labels: Some(selector_labels(name)),
                ..Default::default()
            }),
            ..Default::default()
        })
        .to_vec()
}

/// The API Deployment of this pass.
pub(crate) fn deployment(pass: &Pass<'_>, config_map: &str) -> Deployment {
    let spec = &pass.keystone.spec;
    let name = pass.name();
    // config, fernet-keys, credential-keys, then db-tls and domains when they apply.
    let (volumes, mounts) = pod::key_volumes(pass, config_map, "/");
    let annotations = (spec.database.credentials_mode == CREDENTIALS_MODE_DYNAMIC)
        .then(|| pass.db_connection_hash.clone())
        .flatten()
        .map(|hash| BTreeMap::from([(DB_CONNECTION_HASH_ANNOTATION.to_owned(), hash)]));
    let container = Container {
        name: "keystone".into(),
        image: Some(spec.image.reference()),
        command: Some(uwsgi_command(
            spec.uwsgi.as_ref(),
            pass.federation.is_some(),
        )),
        env: Some(vec![pod::db_connection_env(name)]),
        ports: Some(vec![ContainerPort {
            name: Some("keystone".into()),
            container_port: API_PORT,
            protocol: Some("TCP".into()),
            ..Default::default()
        }]),
        resources: spec.deployment.resources.clone(),
        security_context: Some(pod::restricted()),
        lifecycle: Some(Lifecycle {
            pre_stop: Some(LifecycleHandler {
                exec: Some(ExecAction {
                    command: Some(vec![
                        "sleep".into(),
                        spec.deployment.effective_pre_stop_seconds().to_string(),
                    ]),
                }),
                ..Default::default()
            }),
            ..Default::default()
        }),
        liveness_probe: Some(proxy::liveness(pass.federation.is_some())),
        readiness_probe: Some(Probe {
            exec: Some(ExecAction {
                command: Some(vec![
                    "/bin/sh".into(),
                    "-c".into(),
                    DB_READINESS_SCRIPT.into(),
                ]),
            }),
            initial_delay_seconds: Some(10),
            period_seconds: Some(30),
            timeout_seconds: Some(25),
            failure_threshold: Some(3),
            ..Default::default()
        }),
        startup_probe: Some(proxy::startup(pass.federation.is_some())),
        volume_mounts: Some(mounts),
        ..Default::default()
    };
    let strategy = spec
        .deployment
        .strategy
        .clone()
        .unwrap_or_else(|| DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_unavailable: Some(IntOrString::Int(0)),
                max_surge: Some(IntOrString::Int(1)),
            }),
        });
    let mut pod = PodSpec {
        containers: vec![container],
        volumes: Some(volumes),
        termination_grace_period_seconds: Some(spec.deployment.effective_grace_seconds()),
        topology_spread_constraints: match &spec.deployment.topology_spread_constraints {
            None => Some(default_spread(name)),
            Some(c) if c.is_empty() => None,
            Some(c) => Some(c.clone()),
        },
        priority_class_name: spec.deployment.priority_class_name.clone(),
        security_context: Some(pod::pod_security()),
        ..Default::default()
    };
    if let Some(federation) = &pass.federation {
        proxy::attach(&mut pod, federation);
    }
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(component_labels(name, COMPONENT_API)),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: spec
                .autoscaling
                .is_none()
                .then(|| spec.deployment.effective_replicas()),
            selector: LabelSelector {
                match_labels: Some(selector_labels(name)),
                ..Default::default()
            },
            strategy: Some(strategy),
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(component_labels(name, COMPONENT_API)),
                    annotations,
                    ..Default::default()
                }),
                spec: Some(pod),
            },
            ..Default::default()
        },
        status: None,
    }
}

/// The Service in front of the API, on port 5000 to the API's port, or to the proxy's
/// when federation is projected; `narrow` adds `component=api` to its selector.
pub(crate) fn service(pass: &Pass<'_>, narrow: bool) -> Service {
    let name = pass.name();
    let target_port = if pass.federation.is_some() {
        PROXY_PORT
    } else {
        API_PORT
    };
    let selector = if narrow {
        let mut labels = selector_labels(name);
        labels.insert("app.kubernetes.io/component".into(), COMPONENT_API.into());
        labels
    } else {
        selector_labels(name)
    };
    Service {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(selector),
            ports: Some(vec![ServicePort {
                name: Some("keystone".into()),
                port: API_PORT,
                protocol: Some("TCP".into()),
                target_port: Some(IntOrString::Int(target_port)),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

/// The PodDisruptionBudget: one pod may go when only one runs, else one must stay.
pub(crate) fn pod_disruption_budget(pass: &Pass<'_>) -> PodDisruptionBudget {
    let name = pass.name();
    let spec = &pass.keystone.spec;
    let replicas = spec
        .autoscaling
        .as_ref()
        .and_then(|a| a.min_replicas)
        .unwrap_or_else(|| spec.deployment.effective_replicas());
    let (min_available, max_unavailable) = if replicas > 1 {
        (Some(IntOrString::Int(1)), None)
    } else {
        (None, Some(IntOrString::Int(1)))
    };
    PodDisruptionBudget {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            ..Default::default()
        },
        spec: Some(PodDisruptionBudgetSpec {
            selector: Some(LabelSelector {
                match_labels: Some(selector_labels(name)),
                match_expressions: Some(vec![LabelSelectorRequirement {
                    key: "batch.kubernetes.io/job-name".into(),
                    operator: "DoesNotExist".into(),
                    values: None,
                }]),
            }),
            min_available,
            max_unavailable,
            ..Default::default()
        }),
        status: None,
    }
}

/// Whether `deployment`'s controller has seen its spec and rolled every replica onto its
/// template: observedGeneration current, and updated = ready = replicas = desired.
pub(crate) fn rolled_out(deployment: &Deployment) -> bool {
    let desired = deployment.spec.replicas.unwrap_or(1);
    let Some(status) = &deployment.status else {
        return false;
    };
    status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0)
        && status.updated_replicas.unwrap_or(0) == desired
        && status.ready_replicas.unwrap_or(0) == desired
        && status.replicas.unwrap_or(0) == desired
}

/// Whether the pod template has converged: observed, and every replica updated.
fn template_converged(deployment: &Deployment) -> bool {
    let Some(status) = &deployment.status else {
        return false;
    };
    let replicas = status.replicas.unwrap_or(0);
    status.observed_generation.unwrap_or(0) >= deployment.metadata.generation.unwrap_or(0)
        && replicas > 0
        && status.updated_replicas.unwrap_or(0) == replicas
}

/// The API's URL inside the cluster: `http://{name}.{ns}.svc.cluster.local:5000/v3`, the
/// Service's (what bootstrap registers as the admin and internal endpoints, and what the
/// health check probes).
pub(crate) fn internal_url(pass: &Pass<'_>) -> String {
    format!(
        "http://{}.{}.svc.cluster.local:{API_PORT}/v3",
        pass.name(),
        pass.namespace()
    )
}

/// The API's endpoint: the public one through a Gateway, else the Service's.
pub(crate) fn endpoint(pass: &Pass<'_>) -> String {
    let spec = &pass.keystone.spec;
    match &spec.gateway {
        Some(_) if !spec.bootstrap.public_endpoint.is_empty() => {
            spec.bootstrap.public_endpoint.clone()
        }
        Some(gateway) => format!("https://{}/v3", gateway.hostname),
        None => internal_url(pass),
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let config_map = pass.config_map("deployment")?;
    let desired = deployment(pass, &config_map);
    let stored = ensure_deployment(pass.cluster, &pass.owner, &desired).map_err(|source| {
        Error::Workload {
            what: "Deployment",
            source,
        }
    })?;
    let ready = is_deployment_ready(&stored);
    let name = pass.name().to_owned();
    let namespace = pass.namespace().to_owned();
    let mut narrow = template_converged(&stored);
    if !narrow {
        let live = pass
            .cluster
            .get_typed_from::<Service>(Some(&namespace), &name, ReadFrom::Server)
            .map_err(Error::cluster(format!(
                "reading Service {}",
                pass.key(&name)
            )))?;
        narrow = live
            .and_then(|s| s.spec)
            .and_then(|s| s.selector)
            .is_some_and(|s| {
                s.get("app.kubernetes.io/component").map(String::as_str) == Some(COMPONENT_API)
            });
    }
    ensure_service(pass.cluster, &pass.owner, &service(pass, narrow)).map_err(|source| {
        Error::Workload {
            what: "Service",
            source,
        }
    })?;
    let budget = pod_disruption_budget(pass);
    ensure_object(pass.cluster, &pass.owner, &budget).map_err(Error::cluster(format!(
        "ensuring PodDisruptionBudget {}",
        pass.key(&name)
    )))?;
    if !ready {
        pass.condition(
            DEPLOYMENT_READY,
            false,
            "WaitingForDeployment",
            "Keystone API deployment is not yet available",
        );
        return Ok(Some(DEPLOYMENT_POLLING));
    }
    let phase = pass.keystone.status.as_ref().and_then(|s| s.upgrade_phase);
    if phase == Some(UpgradePhase::RollingUpdate) {
        if !rolled_out(&stored) {
            pass.condition(
                DEPLOYMENT_READY,
                false,
                "WaitingForDeployment",
                "Waiting for the upgraded image to finish rolling out before contracting the database schema",
            );
            return Ok(Some(DEPLOYMENT_POLLING));
        }
        crate::steps::database_upgrade::finish_rolling_update(pass);
        pass.condition(
            DEPLOYMENT_READY,
            true,
            "DeploymentReady",
            "Keystone API deployment is available",
        );
        return Ok(Some(NEXT_PASS));
    }
    pass.status_mut().endpoint = endpoint(pass);
    pass.condition(
        DEPLOYMENT_READY,
        true,
        "DeploymentReady",
        "Keystone API deployment is available",
    );
    Ok(None)
}

#[cfg(test)]
#[path = "deployment_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "deployment_proxy_tests.rs"]
mod proxy_tests;
