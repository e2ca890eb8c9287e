use std::time::Duration;

use serde_json::json;
use wasm_operator_sdk::http::Method;
use wasm_operator_sdk::testing::Call;
use wasm_operator_sdk::{ApiError, Outcome};

use crate::openbao::fake::FakeOpenBao;
use crate::testing::{
    ALL, JWT, ROLE_ID, Said, World, barbican, cond, managed_store, openbao, openbao_cluster,
    provisioner_account, secret,
};

const NOT_PROVISIONED: &str = "; the instance must run the self-init requests barbican_kv, approle_auth, barbican_approle_role";

/// (case, the world, ProvisioningReady)
type Row = (&'static str, World, Said);

/// The managed world against `bao`.
fn against(bao: FakeOpenBao) -> World {
    World::of(managed_store(), bao)
        .with(barbican(None))
        .with(openbao_cluster(true))
        .with(secret("bao-tls-ca", &[("ca.crt", "pem")]))
        .with(provisioner_account())
}

fn failing(method: Method, prefix: &str, status: u16) -> FakeOpenBao {
    let bao = openbao(&ALL, 3600);
    bao.fail(method, prefix, status);
    bao
}

#[test]
fn the_instance_is_checked_step_by_step_each_gap_with_its_reason_event_and_30_s() {
    let without_mount = FakeOpenBao::new()
        .with_approle("barbican", ROLE_ID, 3600)
        .with_kubernetes_role("provisioner", JWT);
    let without_role = FakeOpenBao::new()
        .with_mount("barbican")
        .with_kubernetes_role("provisioner", JWT);
    let rows: Vec<Row> = vec![
        (
            "no OpenBaoCluster",
            World::of(managed_store(), openbao(&ALL, 3600)).with(barbican(None)),
            cond(
                "False",
                "InstanceNotFound",
                "OpenBaoCluster openstack/bao does not exist",
            ),
        ),
        (
            "an instance not Available",
            World::managed(3600).with(openbao_cluster(false)),
            cond(
                "False",
                "WaitingForInstance",
                "OpenBaoCluster openstack/bao is not Available yet",
            ),
        ),
        (
            "no CA Secret",
            World::of(managed_store(), openbao(&ALL, 3600))
                .with(barbican(None))
                .with(openbao_cluster(true))
                .with(provisioner_account()),
            cond(
                "False",
                "WaitingForInstanceTLS",
                "waiting for Secret openstack/bao-tls-ca to carry the \"ca.crt\" trust bundle of OpenBaoCluster \"bao\"",
            ),
        ),
        (
            "no provisioner ServiceAccount",
            World::of(managed_store(), openbao(&ALL, 3600))
                .with(barbican(None))
                .with(openbao_cluster(true))
                .with(secret("bao-tls-ca", &[("ca.crt", "pem")])),
            cond(
                "False",
                "WaitingForInstance",
                "waiting for the provisioner ServiceAccount openstack/bao-provisioner of OpenBaoCluster \"bao\"",
            ),
        ),
        (
            "a token the provisioner role refuses",
            against(FakeOpenBao::new().with_kubernetes_role("provisioner", "another-jwt")),
            cond(
                "False",
                "ProvisioningDenied",
                "logging in to OpenBao: logging in to OpenBao with the kubernetes auth method: POST /v1/auth/kubernetes/login: HTTP 403",
            ),
        ),
        (
            "no answer",
            against(openbao(&ALL, 3600).unreachable()),
            cond(
                "False",
                "OpenBaoUnreachable",
                "logging in to OpenBao: logging in to OpenBao with the kubernetes auth method: https://bao.openstack.svc:8200/v1/auth/kubernetes/login: cannot connect: connection refused",
            ),
        ),
        (
            "no KV mount",
            against(without_mount),
            cond(
                "False",
                "InstanceNotProvisioned",
                &format!(
                    "the KV mount \"barbican\" is not mounted on OpenBaoCluster \"bao\"{NOT_PROVISIONED}"
                ),
            ),
        ),
        (
            "the mount read denied",
            against(failing(Method::Get, "/v1/sys/mounts/", 403)),
            cond(
                "False",
                "ProvisioningDenied",
                "reading the OpenBao mount \"barbican\": GET /v1/sys/mounts/barbican: HTTP 403",
            ),
        ),
        (
            "no AppRole",
            against(without_role),
            cond(
                "False",
                "InstanceNotProvisioned",
                &format!(
                    "the AppRole \"barbican\" does not exist on OpenBaoCluster \"bao\"{NOT_PROVISIONED}"
                ),
            ),
        ),
        (
            "the role ID read failing",
            against(failing(Method::Get, "/v1/auth/approle/role/", 500)),
            cond(
                "False",
                "OpenBaoUnreachable",
                "reading the role ID of AppRole \"barbican\": GET /v1/auth/approle/role/barbican/role-id: HTTP 500",
            ),
        ),
    ];
    for (case, world, expected) in rows {
        assert_eq!(
            world.run(),
            Ok(Outcome::requeue(Duration::from_secs(30))),
            "{case}"
        );
        assert_eq!(world.said("ProvisioningReady"), expected, "{case}");
        assert_eq!(
            world.events(),
            [("Warning".to_owned(), expected.1.clone(), expected.2.clone())],
            "{case}"
        );
        assert_eq!(world.condition("CredentialsReady"), None, "{case}");
        assert_eq!(world.said("Ready").1, "NotAllReady", "{case}");
        assert_eq!(world.minted(), None, "{case}: nothing minted");
        assert_eq!(
            world.bao.live_sessions(),
            0,
            "{case}: the session is revoked"
        );
    }
}

#[test]
fn a_provisioned_instance_is_reached_at_its_service_with_its_ca_and_a_bound_token() {
    let world = World::managed(3600);
    world.run().expect("a pass");
    assert_eq!(
        world.said("ProvisioningReady"),
        cond(
            "True",
            "Provisioned",
            "OpenBaoCluster \"bao\" carries the KV mount \"barbican\" and the AppRole \"barbican\""
        )
    );
    let token_requests: Vec<_> = world
        .cluster
        .calls()
        .into_iter()
        .filter_map(|c| match c {
            Call::CreateSubresource(object, subresource, body) => {
                Some((object.key(), subresource, body))
            }
            _ => None,
        })
        .collect();
    assert_eq!(token_requests.len(), 1);
    let (account, subresource, body) = &token_requests[0];
    assert_eq!(
        (account.as_str(), subresource.as_str()),
        ("openstack/bao-provisioner", "token")
    );
    assert_eq!(body["spec"]["audiences"], json!(["bao"]));
    assert_eq!(body["spec"]["expirationSeconds"], 600);
    assert_eq!(world.bao.trusted(), ["openstack/bao-tls-ca ca.crt"]);
    let sent = world.bao.sent();
    assert!(
        sent.iter()
            .all(|s| s.url.starts_with("https://bao.openstack.svc:8200/v1/"))
    );
    assert!(sent.iter().all(|s| s.namespace.is_none()));
    assert_eq!(
        sent[0].body,
        Some(json!({"role": "provisioner", "jwt": JWT}))
    );
    assert_eq!(world.bao.live_sessions(), 0);
}

/// The FakeCluster, refusing every TokenRequest as the host does outside the pass's reach.
struct TokensForbidden<'a>(&'a wasm_operator_sdk::testing::FakeCluster);

impl wasm_operator_sdk::Cluster for TokensForbidden<'_> {
    fn get(
        &self,
        object: &wasm_operator_sdk::ObjectRef,
        from: wasm_operator_sdk::ReadFrom,
    ) -> Result<Option<serde_json::Value>, ApiError> {
        self.0.get(object, from)
    }
    fn list(
        &self,
        kind: &wasm_operator_sdk::KindRef,
        namespace: Option<&str>,
        options: &wasm_operator_sdk::ListOptions,
    ) -> Result<Vec<serde_json::Value>, ApiError> {
        self.0.list(kind, namespace, options)
    }
    fn apply(
        &self,
        object: &serde_json::Value,
        owner: Option<&wasm_operator_sdk::Owner>,
    ) -> Result<serde_json::Value, ApiError> {
        self.0.apply(object, owner)
    }
    fn create(&self, object: &serde_json::Value) -> Result<serde_json::Value, ApiError> {
        self.0.create(object)
    }
    fn patch(
        &self,
        object: &wasm_operator_sdk::ObjectRef,
        patch: &wasm_operator_sdk::Patch,
        resource_version: Option<&str>,
    ) -> Result<serde_json::Value, ApiError> {
        self.0.patch(object, patch, resource_version)
    }
    fn delete_with(
        &self,
        object: &wasm_operator_sdk::ObjectRef,
        options: &wasm_operator_sdk::DeleteOptions,
    ) -> Result<(), ApiError> {
        self.0.delete_with(object, options)
    }
    fn update_status(&self, object: &serde_json::Value) -> Result<serde_json::Value, ApiError> {
        self.0.update_status(object)
    }
    fn record_event(
        &self,
        regarding: &wasm_operator_sdk::ObjectRef,
        event: &wasm_operator_sdk::Event,
    ) -> Result<(), ApiError> {
        self.0.record_event(regarding, event)
    }
    fn served(&self, kind: &wasm_operator_sdk::KindRef) -> Result<bool, ApiError> {
        self.0.served(kind)
    }
    fn create_subresource(
        &self,
        _object: &wasm_operator_sdk::ObjectRef,
        _subresource: &str,
        _body: &serde_json::Value,
    ) -> Result<serde_json::Value, ApiError> {
        Err(ApiError::Forbidden(
            "create serviceaccounts/token is not granted".into(),
        ))
    }
}

#[test]
fn a_refused_token_request_is_provisioning_denied_naming_the_account() {
    let world = World::managed(3600);
    let request = wasm_operator_sdk::Request {
        namespace: Some("openstack".into()),
        name: "vault".into(),
    };
    let outcome = crate::reconcile::reconcile_with(
        &TokensForbidden(&world.cluster),
        &request,
        &world.bao,
        world.now,
    );
    assert_eq!(outcome, Ok(Outcome::requeue(Duration::from_secs(30))));
    let message = "the operator may not mint a bound token for the provisioner ServiceAccount openstack/bao-provisioner: forbidden: create serviceaccounts/token is not granted";
    assert_eq!(
        world.said("ProvisioningReady"),
        cond("False", "ProvisioningDenied", message)
    );
    assert_eq!(
        world.events(),
        [(
            "Warning".to_owned(),
            "ProvisioningDenied".to_owned(),
            message.to_owned()
        )]
    );
    assert_eq!(world.bao.requests(), Vec::<String>::new());
}
