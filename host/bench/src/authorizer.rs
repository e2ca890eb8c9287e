//! Scenario 9, the embedded API server's authorizer: server-side applies per second as the
//! admin (`system:masters`, allowed before any rule is read: the cost of no authorizer) and
//! as a ServiceAccount whose permission is found among many roles and bindings, in
//! alternating rounds on one server. Issue 23 asks the authorizer to cost no more than 10%.

use std::time::Duration;

use kube::api::{Api, Patch, PatchParams};
use serde_json::json;
use tokio::time::Instant;
use wasm_operator::cli::operator_account;
use wasm_operator_apiserver::{ApiServer, ServerConfig};

use super::BenchOptions;
use super::report::Section;

/// Roles and bindings besides the one that grants the ServiceAccount its applies.
const OTHER_BINDINGS: usize = 100;

/// Runs the scenario.
pub async fn run(options: &BenchOptions) -> anyhow::Result<Section> {
    let mut section = Section::new(
        "authorizer",
        "9. API server authorizer: server-side applies per second",
        &[
            "measure",
            "admin (no rule read)",
            "ServiceAccount (RBAC)",
            "ServiceAccount ÷ admin",
        ],
    );
    let server = ApiServer::start(ServerConfig::default()).await?;
    let admin = server.client()?;
    grant(&admin).await?;
    let robot =
        server.client_with_token(&operator_account::token(&admin, "default", "robot").await?)?;
    let rounds = options.samples(10);
    let per_round = if options.quick { 50 } else { 300 };
    super::alternating_rates(
        &mut section,
        format!("applies per second (median of {rounds} rounds of {per_round})"),
        rounds,
        |round| applies_per_second(&admin, "admin", round, per_round),
        |round| applies_per_second(&robot, "robot", round, per_round),
    )
    .await?;
    section.note(format!(
        "The ServiceAccount's grant is one Role among {OTHER_BINDINGS} RoleBindings and \
         {OTHER_BINDINGS} ClusterRoleBindings to other subjects. Target (issue 23): the \
         ServiceAccount's rate at least 0.90 of the admin's."
    ));
    server.stop();
    Ok(section)
}

/// `per_round` applies of distinct ConfigMaps by `client`, per second.
async fn applies_per_second(
    client: &kube::Client,
    who: &str,
    round: usize,
    per_round: usize,
) -> anyhow::Result<f64> {
    let api: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    let params = PatchParams::apply("bench");
    let started = Instant::now();
    for i in 0..per_round {
        let name = format!("{who}-{}", i % 50);
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name}, "data": {"round": round.to_string(), "i": i.to_string()}});
        api.patch(&name, &params, &Patch::Apply(&object)).await?;
    }
    let elapsed = started.elapsed().max(Duration::from_micros(1));
    Ok(per_round as f64 / elapsed.as_secs_f64())
}

/// The ServiceAccount `robot`, its Role on ConfigMaps, and the other roles and bindings.
async fn grant(admin: &kube::Client) -> anyhow::Result<()> {
    let role = |name: &str, resource: &str| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": name, "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": [resource], "verbs": ["get", "patch", "create"]}]})
    };
    let binding = |kind: &str, name: &str, role_kind: &str, subject: &str| {
        let mut object = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind,
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": subject, "namespace": "default"}]});
        if kind == "RoleBinding" {
            object["metadata"]["namespace"] = json!("default");
        }
        object
    };
    let mut objects = vec![
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot", "namespace": "default"}}),
    ];
    for i in 0..OTHER_BINDINGS {
        let name = format!("other-{i}");
        objects.push(role(&name, "secrets"));
        objects.push(binding(
            "RoleBinding",
            &name,
            "Role",
            &format!("someone-{i}"),
        ));
        objects.push(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name},
            "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]}),
        );
        objects.push(binding(
            "ClusterRoleBinding",
            &name,
            "ClusterRole",
            &format!("someone-{i}"),
        ));
    }
    objects.push(role("config-writer", "configmaps"));
    objects.push(binding("RoleBinding", "config-writer", "Role", "robot"));
    for object in objects {
        operator_account::apply(admin, "bench-setup", &object).await?;
    }
    Ok(())
}
