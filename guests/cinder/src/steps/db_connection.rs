//! DBConnectionSecret (facts §4): the connection string the pods and the db-sync Job
//! read from `OS_DATABASE__CONNECTION`, kept in Secret `{name}-db-connection` (key
//! `connection`).
//!
//! | Case | SecretsReady | Pass |
//! |---|---|---|
//! | the credentials Secret lacks `username` (brownfield or Dynamic) or `password` | False `WaitingForDBCredentials` "Upstream database credentials Secret ns/s missing key \"k\"" | 15 s |
//! | both there | — | the Secret applied (no write when unchanged); its SHA-256 hex in [`Pass::db_connection_hash`] |
//!
//! A managed Static database's user is the Cinder's name (the MariaDB User the
//! Database step provisions).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha2::{Digest, Sha256};
use wasm_operator_sdk::ClusterExt;
use wasm_operator_sdk::blocks::apply::ensure_object;
use wasm_operator_sdk::blocks::types::escape_userinfo;

use crate::conditions::SECRETS_READY;
use crate::error::Error;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// The data key of the connection Secret.
pub(crate) const CONNECTION_KEY: &str = "connection";

/// `{name}-db-connection`.
pub(crate) fn secret_name(cinder: &str) -> String {
    format!("{cinder}-db-connection")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let database = pass.cinder.spec.database.clone();
    let upstream = database.secret_ref.name.clone();
    let key = pass.key(&upstream);
    let secret = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &upstream)
        .map_err(Error::cluster(format!("reading Secret {key}")))?;
    let data = secret.and_then(|s| s.data).unwrap_or_default();
    let text = |k: &str| {
        data.get(k)
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
    };
    let user = if database.is_managed() && !database.is_dynamic() {
        Some(pass.name().to_owned())
    } else {
        text("username")
    };
    let missing = |pass: &mut Pass<'_>, k: &str| {
        let message = format!("Upstream database credentials Secret {key} missing key {k:?}");
        pass.condition(SECRETS_READY, false, "WaitingForDBCredentials", &message);
        Ok(Some(SECRET_POLLING))
    };
    let Some(user) = user else {
        return missing(pass, "username");
    };
    let Some(password) = text("password") else {
        return missing(pass, "password");
    };
    let dsn = format!(
        "mysql+pymysql://{}:{}@{}/{}?charset=utf8",
        escape_userinfo(&user),
        escape_userinfo(&password),
        database.address(pass.namespace()),
        database.database
    );
    let name = secret_name(pass.name());
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(pass.namespace().to_owned()),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            CONNECTION_KEY.to_owned(),
            ByteString(dsn.as_bytes().to_vec()),
        )])),
        ..Default::default()
    };
    ensure_object(pass.cluster, &pass.owner, &secret).map_err(Error::cluster(format!(
        "applying Secret {}",
        pass.key(&name)
    )))?;
    pass.db_connection_hash = hex::encode(Sha256::digest(dsn.as_bytes()));
    Ok(None)
}

#[cfg(test)]
#[path = "db_connection_tests.rs"]
mod tests;
