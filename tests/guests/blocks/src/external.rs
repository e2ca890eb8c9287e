//! Scenarios of the blocks over other operators' CRDs: EnsureDatabase,
//! EnsureDatabaseUser, EnsureCertificate, EnsurePushSecret, and the secret reads.

use serde_json::{Map, Value, json};
use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::{database, secrets, tls};
use wasm_operator_sdk::external::certmanager::{Certificate, CertificateSpec, IssuerRef};
use wasm_operator_sdk::external::eso::{
    PushSecret, PushSecretSecret, PushSecretSelector, PushSecretSpec,
};
use wasm_operator_sdk::external::mariadb::{
    Database, DatabaseSpec, Grant, GrantSpec, MariaDbRef, User, UserSpec,
};
use wasm_operator_sdk::k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workloads::outcome;

fn meta(s: &Scenario) -> ObjectMeta {
    ObjectMeta {
        name: Some(s.name.clone()),
        namespace: Some(s.namespace.clone()),
        ..Default::default()
    }
}

fn mariadb() -> MariaDbRef {
    MariaDbRef {
        name: "mariadb".into(),
        ..Default::default()
    }
}

/// EnsureDatabase of Database `<name>`. Outcome: `ready`.
pub fn database(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let desired = Database {
        metadata: meta(s),
        spec: DatabaseSpec {
            maria_db_ref: mariadb(),
            name: Some(s.text("database", &s.name)?),
            ..Default::default()
        },
        status: None,
    };
    let ready = database::ensure_database(cluster, &s.owner, &desired)?;
    Ok(outcome([("ready", json!(ready))]))
}

/// EnsureDatabaseUser of User and Grant `<name>`; the User leaves maxUserConnections to
/// the server. Outcome: `ready`.
pub fn database_user(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let user = User {
        metadata: meta(s),
        spec: UserSpec {
            maria_db_ref: mariadb(),
            ..Default::default()
        },
        status: None,
    };
    let grant = Grant {
        metadata: meta(s),
        spec: GrantSpec {
            maria_db_ref: mariadb(),
            privileges: s.list("privileges")?,
            database: s.opt_text("database")?,
            username: s.name.clone(),
            ..Default::default()
        },
        status: None,
    };
    let ready = database::ensure_database_user(cluster, &s.owner, &user, &grant)?;
    Ok(outcome([("ready", json!(ready))]))
}

/// EnsureCertificate of Certificate `<name>` for `params.commonName`. Outcome: `ready`.
pub fn certificate(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let desired = Certificate {
        metadata: meta(s),
        spec: CertificateSpec {
            secret_name: format!("{}-tls", s.name),
            common_name: Some(s.text("commonName", &s.name)?),
            issuer_ref: IssuerRef {
                name: "ca-issuer".into(),
                kind: Some("ClusterIssuer".into()),
                group: Some("cert-manager.io".into()),
            },
            usages: vec!["client auth".into()],
            ..Default::default()
        },
        status: None,
    };
    let ready = tls::ensure_certificate(cluster, &s.owner, &desired)?;
    Ok(outcome([("ready", json!(ready))]))
}

/// EnsurePushSecret of PushSecret `<name>` pushing Secret `params.secret` to the default
/// store. Outcome: `applied`.
pub fn push_secret(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let desired = PushSecret {
        metadata: meta(s),
        spec: PushSecretSpec {
            secret_store_refs: secrets::push_secret_store_refs(&secrets::effective_store_ref(None)),
            selector: PushSecretSelector {
                secret: Some(PushSecretSecret {
                    name: s.text("secret", "credentials")?,
                }),
            },
            ..Default::default()
        },
        status: None,
    };
    secrets::ensure_push_secret(cluster, &s.owner, &desired)?;
    Ok(outcome([("applied", json!(true))]))
}

/// IsSecretReady and GetSecretValue on Secret `params.secret` (key `params.key`), and
/// WaitForExternalSecret on ExternalSecret `params.externalSecret`. Outcome:
/// `secretReady`, `value` (or `valueError`), `externalSecret` (exists/ready).
pub fn secret_reads(
    cluster: &dyn Cluster,
    s: &Scenario,
) -> Result<Map<String, Value>, ScenarioError> {
    let secret = s.text("secret", "credentials")?;
    let key = s.text("key", "password")?;
    let keys = s.list("expectedKeys")?;
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let ready = secrets::is_secret_ready(cluster, &s.namespace, &secret, &keys)?;
    let value = match secrets::get_secret_value(cluster, &s.namespace, &secret, &key) {
        Ok(v) => json!({"value": v}),
        Err(e) if e.is_not_found() || e.is_key_not_found() => json!({"error": e.to_string()}),
        Err(e) => return Err(e.into()),
    };
    let es = s.text("externalSecret", "credentials")?;
    let state = secrets::wait_for_external_secret(cluster, &s.namespace, &es)?;
    Ok(outcome([
        ("secretReady", json!(ready)),
        ("value", value),
        (
            "externalSecret",
            json!({"exists": state.exists(), "ready": state.ready()}),
        ),
    ]))
}
