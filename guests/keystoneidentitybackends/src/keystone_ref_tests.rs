use std::ops::ControlFlow;

use serde_json::json;
use wasm_operator_sdk::ApiError;
use wasm_operator_sdk::testing::Op;

use super::*;
use crate::testing::{World, admin_secret, cond, held, keystone, ldap_backend, merged};

fn api_condition(status: &str) -> serde_json::Value {
    merged(
        keystone(),
        &json!({"status": {"conditions": [{"type": "KeystoneAPIReady", "status": status,
            "reason": "R", "message": "m", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}),
    )
}

#[test]
fn the_backend_waits_for_its_keystone_and_its_api() {
    let absent = || World::bare(ldap_backend()).with(admin_secret());
    let not_found = "Keystone keystone not found in namespace openstack";
    let not_ready = "Keystone keystone API is not ready yet";
    // (case, world, DomainReady, flow)
    let table: Vec<(
        &str,
        World,
        Option<_>,
        ControlFlow<Option<std::time::Duration>>,
    )> = vec![
        (
            "no Keystone",
            absent(),
            Some(cond("False", "KeystoneNotFound", not_found)),
            ControlFlow::Break(None),
        ),
        (
            "the Keystone kind is not served",
            {
                let w = absent();
                w.cluster.fail(
                    Op::Get,
                    "keystone",
                    ApiError::NotServed("keystones".into()),
                    1,
                );
                w
            },
            Some(cond("False", "KeystoneNotFound", not_found)),
            ControlFlow::Break(None),
        ),
        (
            "reading the Keystone fails",
            {
                let w = World::ldap();
                w.cluster
                    .fail(Op::Get, "keystone", ApiError::Unavailable("etcd".into()), 1);
                w
            },
            Some(cond(
                "False",
                "KeystoneNotFound",
                "fetching Keystone keystone: unavailable: etcd",
            )),
            ControlFlow::Break(Some(SECRET_POLLING)),
        ),
        (
            "KeystoneAPIReady False",
            absent().with(api_condition("False")),
            Some(cond("False", "WaitingForKeystoneAPI", not_ready)),
            ControlFlow::Break(None),
        ),
        (
            "no KeystoneAPIReady",
            absent().with(merged(keystone(), &json!({"status": null}))),
            Some(cond("False", "WaitingForKeystoneAPI", not_ready)),
            ControlFlow::Break(None),
        ),
        (
            "KeystoneAPIReady True",
            World::ldap(),
            None,
            ControlFlow::Continue(()),
        ),
    ];
    for (case, world, expected, flow) in table {
        let mut pass = world.pass();
        let result = run(&mut pass).expect("no error").map_continue(|k| {
            assert_eq!(k.name(), "keystone", "{case}");
        });
        assert_eq!(result, flow, "{case}");
        assert_eq!(held(&pass, "DomainReady"), expected, "{case}");
    }
}

#[test]
fn the_identity_api_is_the_keystone_services_port_5000_and_the_admin_defaults_to_admin() {
    let world = World::ldap().with(merged(
        keystone(),
        &json!({"spec": {"bootstrap": {"adminUser": null}}}),
    ));
    let parent = world.parent();
    assert_eq!(
        parent.api_endpoint(),
        "http://keystone.openstack.svc.cluster.local:5000/v3"
    );
    assert_eq!(parent.admin_user(), "admin");
    let named = World::ldap().with(merged(
        keystone(),
        &json!({"spec": {"bootstrap": {"adminUser": "root"}}}),
    ));
    assert_eq!(named.parent().admin_user(), "root");
}
