//! mariadb-operator's `k8s.mariadb.com/v1alpha1` MariaDB, Database, User and Grant.

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::{ConditionsStatus, external_kind};

/// The MariaDB server a Database, User or Grant belongs to (`spec.mariaDbRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MariaDbRef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for_it: Option<bool>,
}

/// A key of a Secret (`spec.passwordSecretKeyRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecretKeySelector {
    pub name: String,
    pub key: String,
}

/// A mariadb-operator MariaDB server. Only its `Ready` condition is read (the gate before
/// a Database is provisioned on it), so its spec is not modelled and is dropped on decode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MariaDb {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    MariaDb,
    "k8s.mariadb.com",
    "v1alpha1",
    "MariaDB",
    "mariadbs",
    NamespaceResourceScope
);

/// `Database.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    pub maria_db_ref: MariaDbRef,
    /// The database name; defaults to metadata.name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub character_set: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collate: Option<String>,
    /// `Skip` or `Delete`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
}

/// A mariadb-operator Database.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Database {
    pub metadata: ObjectMeta,
    pub spec: DatabaseSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    Database,
    "k8s.mariadb.com",
    "v1alpha1",
    "Database",
    "databases",
    NamespaceResourceScope
);

/// `User.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserSpec {
    pub maria_db_ref: MariaDbRef,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_secret_key_ref: Option<SecretKeySelector>,
    /// The user name; defaults to metadata.name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Server default 10 when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_user_connections: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
}

/// A mariadb-operator User.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub metadata: ObjectMeta,
    pub spec: UserSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    User,
    "k8s.mariadb.com",
    "v1alpha1",
    "User",
    "users",
    NamespaceResourceScope
);

/// `Grant.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GrantSpec {
    pub maria_db_ref: MariaDbRef,
    pub privileges: Vec<String>,
    /// Server default `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database: Option<String>,
    /// Server default `*`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    pub username: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_option: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cleanup_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requeue_interval: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_interval: Option<String>,
}

/// A mariadb-operator Grant.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    pub metadata: ObjectMeta,
    pub spec: GrantSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ConditionsStatus>,
}
external_kind!(
    Grant,
    "k8s.mariadb.com",
    "v1alpha1",
    "Grant",
    "grants",
    NamespaceResourceScope
);
