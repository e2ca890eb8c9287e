use std::ops::ControlFlow;

use serde_json::{Value, json};
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::Op;

use super::*;
use crate::testing::{
    PROJECTION_SECRET, Said, World, cond, deployment, held, ldap_backend, merged, oidc_backend,
    saml_backend, secret,
};

const NOT_PROJECTED: &str =
    "waiting for the Keystone Deployment to mount this backend's domain config";
const ROLLING: &str = "the Keystone Deployment has not finished rolling out this backend's config";
const PROJECTED: &str = "domain config is mounted in the Keystone Deployment";

/// Runs step 7; the flow, ConfigProjected and status.samlSPMetadataSecretName.
fn step(world: &World) -> (Flow, Option<Said>, String) {
    let mut pass = world.pass();
    let flow = run(&mut pass, &world.parent(), &world.cluster);
    let saml = pass
        .backend
        .status
        .as_ref()
        .map(|s| s.saml_sp_metadata_secret_name.clone())
        .unwrap_or_default();
    (flow, held(&pass, "ConfigProjected"), saml)
}

fn conf() -> Value {
    secret(PROJECTION_SECRET, &[("keystone.corp.conf", "[ldap]")])
}

fn rollout(status: Value) -> Value {
    merged(deployment("domains"), &json!({"status": status}))
}

#[test]
fn config_projected_follows_the_keystone_deployment_and_its_rollout() {
    let with = |objects: Vec<Value>| {
        objects
            .into_iter()
            .fold(World::ldap(), |world, object| world.with(object))
    };
    let waiting = (
        cond("False", "WaitingForProjection", NOT_PROJECTED),
        Some(SECRET_POLLING),
    );
    let rolling = (
        cond("False", "WaitingForRollout", ROLLING),
        Some(SECRET_POLLING),
    );
    let volumes = |v: Value| {
        merged(
            deployment("domains"),
            &json!({"spec": {"template": {"spec": {"volumes": v}}}}),
        )
    };
    // (case, objects, ConfigProjected, requeue)
    let table = [
        ("no Deployment", vec![conf()], waiting.clone()),
        (
            "no domains volume",
            vec![
                volumes(json!([{"name": "config", "configMap": {"name": "c"}}])),
                conf(),
            ],
            waiting.clone(),
        ),
        (
            "a domains volume not backed by a Secret",
            vec![
                volumes(json!([{"name": "domains", "configMap": {"name": "c"}}])),
                conf(),
            ],
            waiting.clone(),
        ),
        ("no Secret", vec![deployment("domains")], waiting.clone()),
        (
            "no data key for the domain",
            vec![
                deployment("domains"),
                secret(PROJECTION_SECRET, &[("keystone.other.conf", "x")]),
            ],
            waiting.clone(),
        ),
        (
            "a Deployment without status",
            vec![rollout(Value::Null), conf()],
            rolling.clone(),
        ),
        (
            "the new generation not observed",
            vec![rollout(json!({"observedGeneration": 3})), conf()],
            rolling.clone(),
        ),
        (
            "a replica not updated",
            vec![rollout(json!({"updatedReplicas": 1})), conf()],
            rolling.clone(),
        ),
        (
            "a replica not ready",
            vec![rollout(json!({"readyReplicas": 1})), conf()],
            rolling.clone(),
        ),
        (
            "an old replica still running",
            vec![rollout(json!({"replicas": 3})), conf()],
            rolling.clone(),
        ),
        (
            "mounted and rolled out",
            vec![deployment("domains"), conf()],
            (cond("True", "ConfigProjected", PROJECTED), None),
        ),
    ];
    for (case, objects, (expected, requeue)) in table {
        let world = with(objects);
        let (flow, projected, saml) = step(&world);
        let flow = flow.expect("no error");
        let wanted = match requeue {
            Some(after) => ControlFlow::Break(Some(after)),
            None => ControlFlow::Continue(()),
        };
        assert_eq!(flow, wanted, "{case}");
        assert_eq!(projected, Some(expected), "{case}");
        assert_eq!(saml, "", "{case}");
    }
}

#[test]
fn each_type_is_looked_for_under_the_keystone_sides_volume_and_data_key() {
    // (case, backend, volume, data key, projected, samlSPMetadataSecretName)
    let table = [
        (
            "LDAP",
            ldap_backend(),
            "domains",
            "keystone.corp.conf",
            true,
            "",
        ),
        (
            "OIDC",
            oidc_backend(),
            "federation-metadata",
            "corp.client",
            true,
            "",
        ),
        (
            "OIDC, only the provider document",
            oidc_backend(),
            "federation-metadata",
            "corp.provider",
            false,
            "",
        ),
        (
            "OIDC under the LDAP volume",
            oidc_backend(),
            "domains",
            "corp.client",
            false,
            "",
        ),
        (
            "SAML",
            saml_backend(),
            "federation-mellon",
            "corp.idp-metadata.xml",
            true,
            "keystone-saml-sp-metadata",
        ),
        (
            "SAML, only the SP metadata",
            saml_backend(),
            "federation-mellon",
            "sp-metadata.xml",
            false,
            "",
        ),
    ];
    for (case, backend, volume, key, projected, saml_name) in table {
        let world = World::of(backend)
            .with(deployment(volume))
            .with(secret(PROJECTION_SECRET, &[(key, "rendered")]));
        let (flow, condition, saml) = step(&world);
        let _converged_or_waiting = flow.expect("no error");
        let reason = condition.map(|c| c.1);
        let expected = if projected {
            "ConfigProjected"
        } else {
            "WaitingForProjection"
        };
        assert_eq!(reason.as_deref(), Some(expected), "{case}");
        assert_eq!(saml, saml_name, "{case}");
    }
}

#[test]
fn a_failed_read_fails_the_step_naming_the_object() {
    // (object failing, message)
    let table = [
        (
            "keystone",
            "fetching Deployment openstack/keystone: unavailable: down",
        ),
        (
            PROJECTION_SECRET,
            "fetching projection Secret openstack/keystone-projection-0001: unavailable: down",
        ),
        // The valid row: every read answers.
        ("nothing", ""),
    ];
    for (name, message) in table {
        let world = World::ldap().with(deployment("domains")).with(conf());
        // The pass reads the Keystone once before; fail the read after it.
        let parent = world.parent();
        world
            .cluster
            .fail(Op::Get, name, ApiError::Unavailable("down".into()), 1);
        let mut pass = world.pass();
        let result = run(&mut pass, &parent, &world.cluster);
        if message.is_empty() {
            assert_eq!(result.expect("no error"), ControlFlow::Continue(()));
            assert_eq!(
                held(&pass, "ConfigProjected"),
                Some(cond("True", "ConfigProjected", PROJECTED))
            );
            continue;
        }
        assert_eq!(result.expect_err("fails").to_string(), message);
        assert_eq!(held(&pass, "ConfigProjected"), None);
    }
}
