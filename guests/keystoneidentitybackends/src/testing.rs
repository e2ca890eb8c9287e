//! Test fixtures: a [`World`] of a FakeCluster (the backend `openstack/corp`, its
//! Keystone `keystone` with a ready API, the admin Secret) and a [`FakeKeystone`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use serde_json::{Value, json};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ClusterExt, Outcome, ReconcileError, Request};

use crate::identity::fake::FakeKeystone;
use crate::identity::{Client, Credentials, fake};
use crate::keystone_ref::{self, Keystone};
use crate::pass::Pass;
use crate::types::{FINALIZER, KeystoneIdentityBackend};

/// The namespace of everything.
pub(crate) const NS: &str = "openstack";
/// The backend's name.
pub(crate) const BACKEND: &str = "corp";
/// The admin password Secret.
pub(crate) const ADMIN_SECRET: &str = "keystone-admin";
/// The Secret the Deployment's projection volume mounts.
pub(crate) const PROJECTION_SECRET: &str = "keystone-projection-0001";
/// The OIDC issuer / SAML entityID of the federation fixtures.
pub(crate) const ISSUER: &str = "https://idp.example.com/realms/corp";

/// `patch` merged into `base` (RFC 7386: null deletes).
pub(crate) fn merged(mut base: Value, patch: &Value) -> Value {
    merge(&mut base, patch);
    base
}

fn merge(base: &mut Value, patch: &Value) {
    match (base, patch) {
        (Value::Object(base), Value::Object(patch)) => {
            for (k, v) in patch {
                if v.is_null() {
                    base.remove(k);
                } else {
                    merge(base.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        }
        (base, patch) => *base = patch.clone(),
    }
}

/// The LDAP backend `corp` (domain `corp`, Manage, Retain), finalized, generation 3.
pub(crate) fn ldap_backend() -> Value {
    json!({
        "apiVersion": "keystone.openstack.c5c3.io/v1alpha1",
        "kind": "KeystoneIdentityBackend",
        "metadata": {"name": BACKEND, "namespace": NS, "generation": 3, "uid": "backend-uid",
                     "finalizers": [FINALIZER]},
        "spec": {
            "keystoneRef": {"name": "keystone"},
            "domain": {"name": "corp", "mode": "Manage", "deletionPolicy": "Retain",
                       "description": "Corp directory"},
            "type": "LDAP",
            "ldap": {"url": "ldaps://ldap.corp", "suffix": "dc=corp",
                     "bindCredentialsSecretRef": {"name": "bind"},
                     "users": {"treeDN": "ou=users,dc=corp"}},
        },
    })
}

/// The OIDC backend `corp` with one mapping rule and no groups.
pub(crate) fn oidc_backend() -> Value {
    let spec = json!({"spec": {
        "type": "OIDC", "ldap": null,
        "oidc": {"issuer": ISSUER, "clientID": "keystone", "clientSecretRef": {"name": "oidc"}},
        "mappings": [{"local": [{"user": {"name": "{0}"}}],
                      "remote": [{"type": "HTTP_OIDC_PREFERRED_USERNAME"}]}],
    }});
    merged(ldap_backend(), &spec)
}

/// The SAML backend `corp` with one mapping rule.
pub(crate) fn saml_backend() -> Value {
    let spec = json!({"spec": {
        "type": "SAML", "ldap": null,
        "saml": {"idpEntityID": ISSUER, "idpMetadata": {"url": "https://idp.example.com/md"}},
        "mappings": [{"local": [{"user": {"name": "{0}"}}],
                      "remote": [{"type": "HTTP_MELLON_NAME_ID"}]}],
    }});
    merged(ldap_backend(), &spec)
}

/// The Keystone `keystone`, its API ready.
pub(crate) fn keystone() -> Value {
    json!({
        "apiVersion": "keystone.openstack.c5c3.io/v1alpha1",
        "kind": "Keystone",
        "metadata": {"name": "keystone", "namespace": NS},
        "spec": {"bootstrap": {"adminUser": fake::USER,
                               "adminPasswordSecretRef": {"name": ADMIN_SECRET}}},
        "status": {"conditions": [{"type": "KeystoneAPIReady", "status": "True",
                                   "reason": "APIHealthy", "message": "ok",
                                   "lastTransitionTime": "2026-01-01T00:00:00Z"}]},
    })
}

/// A Secret `name` with `data` (text values).
pub(crate) fn secret(name: &str, data: &[(&str, &str)]) -> Value {
    use wasm_operator_sdk::k8s_openapi::ByteString;
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            let encoded =
                serde_json::to_value(ByteString(v.as_bytes().to_vec())).expect("bytes encode");
            ((*k).to_owned(), encoded)
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": name, "namespace": NS}, "data": data})
}

/// The admin password Secret.
pub(crate) fn admin_secret() -> Value {
    secret(ADMIN_SECRET, &[("password", fake::PASSWORD)])
}

/// The Keystone Deployment mounting [`PROJECTION_SECRET`] as `volume`, fully rolled out.
pub(crate) fn deployment(volume: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "keystone", "namespace": NS, "generation": 4},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "keystone"}},
                 "template": {"spec": {"containers": [{"name": "keystone"}],
                     "volumes": [{"name": "config", "configMap": {"name": "c"}},
                                 {"name": volume, "secret": {"secretName": PROJECTION_SECRET}}]}}},
        "status": {"observedGeneration": 4, "replicas": 2, "updatedReplicas": 2,
                   "readyReplicas": 2},
    })
}

/// A backend, its Keystone and an identity API.
pub(crate) struct World {
    pub(crate) cluster: FakeCluster,
    pub(crate) keystone: FakeKeystone,
}

impl World {
    /// `backend` with the Keystone, its admin Secret, an empty identity API with the
    /// role `member`, and nothing projected.
    pub(crate) fn of(backend: Value) -> Self {
        Self::bare(backend).with(keystone()).with(admin_secret())
    }

    /// Only `backend`, and an empty identity API with the role `member`.
    pub(crate) fn bare(backend: Value) -> Self {
        Self {
            cluster: FakeCluster::new().with(backend),
            keystone: FakeKeystone::new().with_role("role-member", "member"),
        }
    }

    /// The LDAP backend.
    pub(crate) fn ldap() -> Self {
        Self::of(ldap_backend())
    }

    /// Adds an object to the cluster.
    pub(crate) fn with(mut self, object: Value) -> Self {
        self.cluster = self.cluster.with(object);
        self
    }

    /// Replaces the identity API.
    pub(crate) fn with_keystone(mut self, keystone: FakeKeystone) -> Self {
        self.keystone = keystone;
        self
    }

    /// The Keystone Deployment mounting the backend's config, fully rolled out.
    pub(crate) fn projected(self) -> Self {
        let backend = self.stored();
        let (volume, key) = crate::projection::location(&backend);
        self.with(deployment(volume))
            .with(secret(PROJECTION_SECRET, &[(&key, "rendered")]))
    }

    /// One pass.
    pub(crate) fn run(&self) -> Result<Outcome, ReconcileError> {
        let request = Request {
            namespace: Some(NS.into()),
            name: BACKEND.into(),
        };
        crate::reconcile::reconcile_with(&self.cluster, &request, &self.keystone)
    }

    /// The backend as stored.
    pub(crate) fn stored(&self) -> KeystoneIdentityBackend {
        self.cluster
            .get_typed(Some(NS), BACKEND)
            .expect("readable")
            .expect("the backend exists")
    }

    /// The stored condition `type_`.
    pub(crate) fn condition(&self, type_: &str) -> Option<Condition> {
        let status = self.stored().status?;
        status.conditions.into_iter().find(|c| c.type_ == type_)
    }

    /// The stored condition `type_` as (status, reason, message).
    pub(crate) fn said(&self, type_: &str) -> Said {
        let c = self
            .condition(type_)
            .unwrap_or_else(|| panic!("no {type_} condition"));
        (c.status, c.reason, c.message)
    }

    /// The events recorded, as (reason, note).
    pub(crate) fn events(&self) -> Vec<(String, String)> {
        self.cluster
            .events()
            .into_iter()
            .map(|(_, e)| (e.reason, e.note))
            .collect()
    }

    /// A pass over the stored backend, for running one step.
    pub(crate) fn pass(&self) -> Pass<'_> {
        Pass {
            cluster: &self.cluster,
            transport: &self.keystone,
            backend: self.stored(),
        }
    }

    /// The stored Keystone.
    pub(crate) fn parent(&self) -> Keystone {
        keystone_ref::read(&self.cluster, NS, "keystone")
            .expect("readable")
            .expect("the Keystone exists")
    }

    /// A client of the identity API with the admin credentials.
    pub(crate) fn client(&self) -> Client<'_> {
        let credentials = Credentials {
            user: fake::USER.into(),
            password: fake::PASSWORD.into(),
        };
        Client::new(&self.keystone, fake::ENDPOINT, credentials)
    }
}

/// A condition as (status, reason, message).
pub(crate) type Said = (String, String, String);

/// (status, reason, message) of `type_` as a pass holds it.
pub(crate) fn held(pass: &Pass<'_>, type_: &str) -> Option<Said> {
    let status = pass.backend.status.as_ref()?;
    let c = status.conditions.iter().find(|c| c.type_ == type_)?;
    Some((c.status.clone(), c.reason.clone(), c.message.clone()))
}

/// `(status, reason, message)` owned, for comparing.
pub(crate) fn cond(status: &str, reason: &str, message: &str) -> Said {
    (status.into(), reason.into(), message.into())
}
