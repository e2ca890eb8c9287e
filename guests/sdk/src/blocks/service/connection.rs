//! DBConnectionSecret (facts §4): the connection string the pods and the sync Job read
//! from `OS_DATABASE__CONNECTION`, kept in Secret `{name}-db-connection` (key
//! `connection`).
//!
//! | Case | Result |
//! |---|---|
//! | the credentials Secret lacks `username` (brownfield or Dynamic) or `password` | [`Waiting`] `WaitingForDBCredentials` "Upstream database credentials Secret ns/s missing key \"k\"" |
//! | both there | the Secret applied (no write when unchanged); the SHA-256 hex of the string |
//!
//! A managed Static database's user is the service's name (the MariaDB User
//! [`super::database`] provisions).

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, Secret, SecretKeySelector};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use sha2::{Digest, Sha256};

use super::{Error, Service, Waiting};
use crate::ClusterExt;
use crate::blocks::apply::ensure_object;
use crate::blocks::types::escape_userinfo;

/// The data key of the connection Secret.
pub const CONNECTION_KEY: &str = "connection";

/// `{name}-db-connection`.
pub fn secret_name(service: &str) -> String {
    format!("{service}-db-connection")
}

/// `OS_DATABASE__CONNECTION` from the connection Secret of `service`.
pub fn connection_env(service: &str) -> EnvVar {
    EnvVar {
        name: "OS_DATABASE__CONNECTION".into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret_name(service),
                key: CONNECTION_KEY.into(),
                optional: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Applies the connection Secret; the connection string's SHA-256 hex, or what it waits
/// for.
pub fn ensure(service: &Service<'_>) -> Result<Result<String, Waiting>, Error> {
    let database = &service.spec.database;
    let upstream = &database.secret_ref.name;
    let key = service.key(upstream);
    let secret = service
        .cluster
        .get_typed::<Secret>(Some(service.namespace), upstream)
        .map_err(|source| Error::Cluster {
            what: format!("reading Secret {key}"),
            source,
        })?;
    let data = secret.and_then(|s| s.data).unwrap_or_default();
    let text = |k: &str| {
        data.get(k)
            .map(|v| String::from_utf8_lossy(&v.0).into_owned())
    };
    let missing = |k: &str| {
        Ok(Err(Waiting::new(
            "WaitingForDBCredentials",
            format!("Upstream database credentials Secret {key} missing key {k:?}"),
        )))
    };
    let user = if database.is_managed() && !database.is_dynamic() {
        Some(service.name.to_owned())
    } else {
        text("username")
    };
    let Some(user) = user else {
        return missing("username");
    };
    let Some(password) = text("password") else {
        return missing("password");
    };
    let dsn = format!(
        "mysql+pymysql://{}:{}@{}/{}?charset=utf8",
        escape_userinfo(&user),
        escape_userinfo(&password),
        database.address(service.namespace),
        database.database
    );
    let name = secret_name(service.name);
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(service.namespace.to_owned()),
            ..Default::default()
        },
        type_: Some("Opaque".into()),
        data: Some(BTreeMap::from([(
            CONNECTION_KEY.to_owned(),
            ByteString(dsn.as_bytes().to_vec()),
        )])),
        ..Default::default()
    };
    ensure_object(service.cluster, service.owner, &secret).map_err(|source| Error::Cluster {
        what: format!("applying Secret {}", service.key(&name)),
        source,
    })?;
    Ok(Ok(hex::encode(Sha256::digest(dsn.as_bytes()))))
}
