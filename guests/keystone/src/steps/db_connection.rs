//! Step 3 — DBConnectionSecret (facts §2.5): the connection string Keystone's pods read
//! from `OS_DATABASE__CONNECTION`, kept in Secret `{name}-db-connection`.
//!
//! Waiting for the credentials sets SecretsReady False `WaitingForDBCredentials` and
//! requeues after 15 s. The step leaves the SHA-256 hex of the connection string in
//! [`Pass::db_connection_hash`].

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use wasm_operator_sdk::ClusterExt;
use wasm_operator_sdk::blocks::apply::controller_reference;
use wasm_operator_sdk::blocks::types::escape_userinfo;

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};
use crate::types::Keystone;

/// The data key of the connection Secret.
pub(crate) const CONNECTION_KEY: &str = "connection";
/// Where the pods mount the database TLS material.
pub(crate) const DB_TLS_DIR: &str = "/etc/keystone/db-tls/";

/// `{name}-db-connection`.
pub(crate) fn secret_name(keystone: &str) -> String {
    format!("{keystone}-db-connection")
}

/// The connection string for `user`/`password`: `mysql+pymysql://user:pass@host/db
/// ?charset=utf8`, with the TLS parameters of `database.tls.mode` (paths under
/// [`DB_TLS_DIR`], `/` left unescaped).
pub(crate) fn dsn(keystone: &Keystone, user: &str, password: &str) -> String {
    let database = &keystone.spec.database;
    let namespace = keystone.metadata.namespace.as_deref().unwrap_or_default();
    let mut query = vec![("charset", "utf8".to_owned())];
    if let Some(tls) = database.tls.as_ref().filter(|t| t.is_enabled()) {
        query.push(("ssl_ca", format!("{DB_TLS_DIR}ca.crt")));
        query.push(("ssl_cert", format!("{DB_TLS_DIR}tls.crt")));
        query.push(("ssl_key", format!("{DB_TLS_DIR}tls.key")));
        if matches!(tls.mode.as_str(), "verify-ca" | "verify-full") {
            query.push(("ssl_verify_cert", "true".to_owned()));
        }
        if tls.mode == "verify-full" {
            query.push(("ssl_verify_identity", "true".to_owned()));
        }
    }
    let query: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!(
        "mysql+pymysql://{}:{}@{}/{}?{}",
        escape_userinfo(user),
        escape_userinfo(password),
        database.address(namespace),
        database.database,
        query.join("&")
    )
}

/// SHA-256 hex of `dsn`.
pub(crate) fn dsn_hash(dsn: &str) -> String {
    hex::encode(Sha256::digest(dsn.as_bytes()))
}

fn text(secret: &Secret, key: &str) -> Option<String> {
    let bytes = secret.data.as_ref()?.get(key)?;
    String::from_utf8(bytes.0.clone()).ok()
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let upstream = pass.keystone.spec.database.secret_ref.name.clone();
    let key = pass.key(&upstream);
    let secret = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &upstream)
        .map_err(Error::cluster(format!("reading Secret {key}")))?;
    let waiting = |pass: &mut Pass<'_>, message: String| {
        pass.condition(SECRETS_READY, false, "WaitingForDBCredentials", &message);
        Ok(Some(SECRET_POLLING))
    };
    let Some(secret) = secret else {
        return waiting(
            pass,
            format!("Upstream database credentials Secret {key} not found"),
        );
    };
    let database = &pass.keystone.spec.database;
    let user = if database.is_managed() && !database.is_dynamic() {
        Some(pass.name().to_owned())
    } else {
        text(&secret, "username")
    };
    let Some(user) = user else {
        return waiting(
            pass,
            format!("Upstream database credentials Secret {key} missing key \"username\""),
        );
    };
    let Some(password) = text(&secret, "password") else {
        return waiting(
            pass,
            format!("Upstream database credentials Secret {key} missing key \"password\""),
        );
    };
    let dsn = dsn(&pass.keystone, &user, &password);
    write_connection_secret(pass, &dsn)?;
    pass.db_connection_hash = Some(dsn_hash(&dsn));
    Ok(None)
}

/// Creates `{name}-db-connection` with the one key `connection`, or sets its data to
/// exactly that when it differs.
fn write_connection_secret(pass: &Pass<'_>, dsn: &str) -> Result<(), Error> {
    let name = secret_name(pass.name());
    let key = pass.key(&name);
    let existing = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &name)
        .map_err(Error::cluster(format!("reading Secret {key}")))?;
    let wanted = BTreeMap::from([(
        CONNECTION_KEY.to_owned(),
        ByteString(dsn.as_bytes().to_vec()),
    )]);
    match existing {
        None => {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(name.clone()),
                    namespace: Some(pass.namespace().to_owned()),
                    owner_references: Some(vec![controller_reference(&pass.owner)]),
                    ..Default::default()
                },
                type_: Some("Opaque".into()),
                data: Some(wanted),
                ..Default::default()
            };
            pass.cluster
                .create_typed(&secret)
                .map_err(Error::cluster(format!("creating Secret {key}")))?;
        }
        Some(secret) if secret.data.as_ref() != Some(&wanted) => {
            let mut data = Map::new();
            for stale in secret.data.iter().flat_map(|d| d.keys()) {
                data.insert(stale.clone(), Value::Null);
            }
            data.insert(
                CONNECTION_KEY.to_owned(),
                serde_json::to_value(ByteString(dsn.as_bytes().to_vec())).unwrap_or_default(),
            );
            pass.cluster
                .merge_patch::<Secret>(
                    Some(pass.namespace()),
                    &name,
                    serde_json::json!({"data": data}),
                    secret.metadata.resource_version.as_deref(),
                )
                .map_err(Error::cluster(format!("updating Secret {key}")))?;
        }
        Some(_) => {}
    }
    Ok(())
}

#[cfg(test)]
#[path = "db_connection_tests.rs"]
mod tests;
