//! Validation of how the Keystone's API pods run (facts §1.6): uWSGI, graceful
//! termination, the rollout strategy, autoscaling, the NetworkPolicy, requests and limits,
//! the priority class (read from the cluster) and topology spread.

use std::collections::BTreeMap;

use k8s_openapi::api::scheduling::v1::PriorityClass;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde_json::json;
use wasm_operator_sdk::admission::FieldErrors;
use wasm_operator_sdk::{Cluster, ObjectRef, ReadFrom};

use super::quantity;
use crate::types::KeystoneSpec;

/// The label every Keystone pod carries with the app's name, and that name.
const NAME_LABEL: (&str, &str) = ("app.kubernetes.io/name", "keystone");
/// The label every Keystone pod carries with its Keystone's name.
const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// The shortest grace period.
const MIN_GRACE_SECONDS: i64 = 10;

/// Checks the workload settings of `spec` that need no cluster; `name` is the Keystone's.
pub(super) fn check(spec: &KeystoneSpec, name: &str, errors: &mut FieldErrors) {
    check_uwsgi(spec, errors);
    check_termination(spec, errors);
    if let Some(strategy) = &spec.deployment.strategy
        && strategy.type_.as_deref() == Some("Recreate")
        && strategy.rolling_update.is_some()
    {
        errors.forbidden(
            "spec.deployment.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        );
    }
    check_autoscaling(spec, errors);
    if spec
        .network_policy
        .as_ref()
        .is_some_and(|n| n.ingress.is_empty())
    {
        errors.required(
            "spec.networkPolicy.ingress",
            "at least one ingress source must be specified",
        );
    }
    check_resources(spec, errors);
    check_topology_spread(spec, name, errors);
}

fn at_least(errors: &mut FieldErrors, field: &str, value: i64, min: i64) {
    if value < min {
        errors.invalid(field, &json!(value), &format!("must be at least {min}"));
    }
}

fn check_uwsgi(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let Some(uwsgi) = &spec.uwsgi else {
        return;
    };
    at_least(errors, "spec.uwsgi.processes", uwsgi.processes.into(), 1);
    at_least(errors, "spec.uwsgi.threads", uwsgi.threads.into(), 1);
    if let Some(harakiri) = uwsgi.harakiri {
        at_least(errors, "spec.uwsgi.harakiri", harakiri.into(), 1);
    }
    if let Some(timeout) = uwsgi.http_keep_alive_timeout {
        at_least(errors, "spec.uwsgi.httpKeepAliveTimeout", timeout.into(), 1);
        if uwsgi.http_keep_alive == Some(false) {
            errors.invalid(
                "spec.uwsgi.httpKeepAliveTimeout",
                &json!(timeout),
                "may only be set when httpKeepAlive is true",
            );
        }
    }
}

fn check_termination(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let deployment = &spec.deployment;
    if let Some(grace) = deployment.termination_grace_period_seconds {
        at_least(
            errors,
            "spec.deployment.terminationGracePeriodSeconds",
            grace,
            MIN_GRACE_SECONDS,
        );
    }
    if let Some(pre_stop) = deployment.pre_stop_sleep_seconds {
        at_least(errors, "spec.deployment.preStopSleepSeconds", pre_stop, 0);
    }
    let grace = deployment.effective_grace_seconds();
    let pre_stop = deployment.effective_pre_stop_seconds();
    if pre_stop >= grace {
        errors.invalid(
            "spec.deployment.preStopSleepSeconds",
            &json!(pre_stop),
            &format!("must be less than terminationGracePeriodSeconds ({grace})"),
        );
    }
    if let Some(harakiri) = spec.uwsgi.as_ref().and_then(|u| u.harakiri) {
        let drain = grace - pre_stop;
        if i64::from(harakiri) >= drain {
            errors.invalid(
                "spec.uwsgi.harakiri",
                &json!(harakiri),
                &format!(
                    "must be less than terminationGracePeriodSeconds - preStopSleepSeconds \
                     ({drain})"
                ),
            );
        }
    }
}

fn check_autoscaling(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let Some(autoscaling) = &spec.autoscaling else {
        return;
    };
    let max = autoscaling.max_replicas;
    at_least(errors, "spec.autoscaling.maxReplicas", max.into(), 1);
    match autoscaling.min_replicas {
        Some(min) => {
            at_least(errors, "spec.autoscaling.minReplicas", min.into(), 1);
            if min > max {
                errors.invalid(
                    "spec.autoscaling.minReplicas",
                    &json!(min),
                    &format!("must not exceed maxReplicas ({max})"),
                );
            }
        }
        None => {
            let replicas = spec.deployment.effective_replicas();
            if replicas > max {
                errors.invalid(
                    "spec.autoscaling.maxReplicas",
                    &json!(max),
                    &format!(
                        "must be at least spec.deployment.replicas ({replicas}) while \
                         minReplicas is unset, which then defaults to it"
                    ),
                );
            }
        }
    }
    let targets = [
        (
            "spec.autoscaling.targetCPUUtilization",
            autoscaling.target_cpu_utilization,
        ),
        (
            "spec.autoscaling.targetMemoryUtilization",
            autoscaling.target_memory_utilization,
        ),
    ];
    for (field, target) in targets {
        if let Some(target) = target.filter(|t| !(1..=100).contains(t)) {
            errors.invalid(field, &json!(target), "must be between 1 and 100");
        }
    }
    if targets.iter().all(|(_, target)| target.is_none()) {
        errors.required(
            "spec.autoscaling",
            "at least one of targetCPUUtilization or targetMemoryUtilization must be set",
        );
    }
}

fn check_resources(spec: &KeystoneSpec, errors: &mut FieldErrors) {
    let Some(resources) = &spec.deployment.resources else {
        return;
    };
    let requests = parsed("requests", resources.requests.as_ref(), errors);
    let limits = parsed("limits", resources.limits.as_ref(), errors);
    for (name, (request, text)) in &requests {
        if let Some((limit, limit_text)) = limits.get(name)
            && request > limit
        {
            errors.invalid(
                &format!("spec.deployment.resources.requests[{name}]"),
                &json!(text),
                &format!("must be less than or equal to {name} limit of {limit_text}"),
            );
        }
    }
}

/// The quantities of `list` (`requests` or `limits`) with their text; one that does not
/// parse is an error.
fn parsed(
    kind: &str,
    list: Option<&BTreeMap<String, Quantity>>,
    errors: &mut FieldErrors,
) -> BTreeMap<String, (quantity::Quantity, String)> {
    let mut parsed = BTreeMap::new();
    for (name, Quantity(text)) in list.into_iter().flatten() {
        match quantity::parse(text) {
            Ok(q) => {
                parsed.insert(name.clone(), (q, text.clone()));
            }
            Err(e) => {
                let field = format!("spec.deployment.resources.{kind}[{name}]");
                errors.invalid(&field, &json!(text), &e.to_string());
            }
        }
    }
    parsed
}

fn check_topology_spread(spec: &KeystoneSpec, name: &str, errors: &mut FieldErrors) {
    let Some(constraints) = &spec.deployment.topology_spread_constraints else {
        return;
    };
    let expected = BTreeMap::from([
        (NAME_LABEL.0.to_owned(), NAME_LABEL.1.to_owned()),
        (INSTANCE_LABEL.to_owned(), name.to_owned()),
    ]);
    for (i, constraint) in constraints.iter().enumerate() {
        let field = format!("spec.deployment.topologySpreadConstraints[{i}].labelSelector");
        let Some(selector) = &constraint.label_selector else {
            errors.required(&field, "must select the Keystone's pods");
            continue;
        };
        let labels = selector.match_labels.clone().unwrap_or_default();
        if labels != expected {
            errors.invalid(
                &format!("{field}.matchLabels"),
                &json!(labels),
                &format!("must be the Deployment's selector, {}", json!(expected)),
            );
        }
        if selector
            .match_expressions
            .as_ref()
            .is_some_and(|e| !e.is_empty())
        {
            errors.forbidden(
                &format!("{field}.matchExpressions"),
                "the selector must be the Deployment's matchLabels alone",
            );
        }
    }
}

/// `deployment.priorityClassName`, when set, names a PriorityClass the cluster has (read
/// from the API server, not a cache that may lag a class just created).
pub(super) fn check_priority_class(
    cluster: &dyn Cluster,
    spec: &KeystoneSpec,
    errors: &mut FieldErrors,
) {
    let Some(name) = spec
        .deployment
        .priority_class_name
        .as_deref()
        .filter(|n| !n.is_empty())
    else {
        return;
    };
    let field = "spec.deployment.priorityClassName";
    match cluster.get(
        &ObjectRef::of::<PriorityClass>(None, name),
        ReadFrom::Server,
    ) {
        Ok(Some(_)) => {}
        Ok(None) => {
            errors.invalid(field, &json!(name), "no PriorityClass of this name exists");
        }
        Err(e) => {
            errors.invalid(
                field,
                &json!(name),
                &format!("cannot be checked: reading the PriorityClass failed: {e}"),
            );
        }
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
