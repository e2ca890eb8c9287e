//! mariadb-operator Databases, Users and Grants (EnsureDatabase, EnsureDatabaseUser).
//!
//! Each is applied through [`ensure_object`]; fields the builder leaves unset keep the
//! server's defaults (e.g. a User's maxUserConnections), so a converged object is not
//! rewritten. Readiness is the `Ready` condition of the server's response to the apply.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::blocks::apply::{ensure_object, name_of};
use crate::cluster::{Cluster, Owner};
use crate::external::mariadb::{
    Database, DatabaseSpec, Grant, GrantSpec, MariaDbRef, SecretKeySelector, User, UserSpec,
};
use crate::external::status_ready;
use crate::object::object_key;

/// Why ensuring a Database, User or Grant failed.
#[derive(Debug, thiserror::Error)]
#[error("applying {what}: {source}")]
pub struct Error {
    /// The kind and key of the object.
    pub what: String,
    #[source]
    pub source: crate::Error,
}

fn what<K>(object: &K) -> String
where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
{
    match name_of(object) {
        Ok((namespace, name)) => format!("{} {}", K::KIND, object_key(namespace, name)),
        Err(_) => K::KIND.to_owned(),
    }
}

fn is_database_ready(database: &Database) -> bool {
    status_ready(database.status.as_ref())
}

fn is_user_ready(user: &User) -> bool {
    status_ready(user.status.as_ref())
}

fn is_grant_ready(grant: &Grant) -> bool {
    status_ready(grant.status.as_ref())
}

/// A service's database on a managed MariaDB: the Database, the User and the Grant, all
/// named after the service, the User's password from the `password` key of a Secret.
#[derive(Debug, Clone, Copy)]
pub struct ManagedDatabase<'a> {
    /// The namespace of the service and its MariaDB.
    pub namespace: &'a str,
    /// The service's name: the objects' names and the database user.
    pub name: &'a str,
    /// The MariaDB (`spec.database.clusterRef.name`).
    pub cluster: &'a str,
    /// The database's name on the server.
    pub database: &'a str,
    /// The Secret whose `password` the User gets.
    pub password_secret: &'a str,
}

/// The character set and collation of a service database.
const CHARACTER_SET: &str = "utf8";
const COLLATE: &str = "utf8_general_ci";

impl ManagedDatabase<'_> {
    fn metadata(&self) -> ObjectMeta {
        ObjectMeta {
            name: Some(self.name.to_owned()),
            namespace: Some(self.namespace.to_owned()),
            ..Default::default()
        }
    }

    fn mariadb_ref(&self) -> MariaDbRef {
        MariaDbRef {
            name: self.cluster.to_owned(),
            ..Default::default()
        }
    }

    /// The Database (utf8, utf8_general_ci).
    pub fn database(&self) -> Database {
        Database {
            metadata: self.metadata(),
            spec: DatabaseSpec {
                maria_db_ref: self.mariadb_ref(),
                name: Some(self.database.to_owned()),
                character_set: Some(CHARACTER_SET.into()),
                collate: Some(COLLATE.into()),
                ..Default::default()
            },
            status: None,
        }
    }

    /// The User, and the Grant of all privileges on the database's tables to it.
    pub fn user_and_grant(&self) -> (User, Grant) {
        let user = User {
            metadata: self.metadata(),
            spec: UserSpec {
                maria_db_ref: self.mariadb_ref(),
                password_secret_key_ref: Some(SecretKeySelector {
                    name: self.password_secret.to_owned(),
                    key: "password".into(),
                }),
                ..Default::default()
            },
            status: None,
        };
        let grant = Grant {
            metadata: self.metadata(),
            spec: GrantSpec {
                maria_db_ref: self.mariadb_ref(),
                privileges: vec!["ALL PRIVILEGES".into()],
                database: Some(self.database.to_owned()),
                table: Some("*".into()),
                username: self.name.to_owned(),
                ..Default::default()
            },
            status: None,
        };
        (user, grant)
    }
}

/// Creates or updates `database` under `owner`; `Ok(true)` once it is `Ready=True`.
pub fn ensure_database<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    database: &Database,
) -> Result<bool, Error> {
    let stored = ensure_object(cluster, owner, database).map_err(|source| Error {
        what: what(database),
        source,
    })?;
    Ok(is_database_ready(&stored))
}

/// Creates or updates `user`, then `grant`, both under `owner`; `Ok(true)` once both are
/// `Ready=True`. When the User fails, the Grant is not attempted.
pub fn ensure_database_user<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    user: &User,
    grant: &Grant,
) -> Result<bool, Error> {
    let user = ensure_object(cluster, owner, user).map_err(|source| Error {
        what: what(user),
        source,
    })?;
    let grant = ensure_object(cluster, owner, grant).map_err(|source| Error {
        what: what(grant),
        source,
    })?;
    Ok(is_user_ready(&user) && is_grant_ready(&grant))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ApiError;
    use crate::external::mariadb::{DatabaseSpec, GrantSpec, MariaDbRef, UserSpec};
    use crate::testing::{Call, FakeCluster, Op, owner};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::{Value, json};

    fn meta() -> ObjectMeta {
        ObjectMeta {
            name: Some("keystone".into()),
            namespace: Some("ns".into()),
            ..Default::default()
        }
    }

    fn mariadb() -> MariaDbRef {
        MariaDbRef {
            name: "mariadb".into(),
            ..Default::default()
        }
    }

    fn database() -> Database {
        Database {
            metadata: meta(),
            spec: DatabaseSpec {
                maria_db_ref: mariadb(),
                name: Some("keystone".into()),
                ..Default::default()
            },
            status: None,
        }
    }

    fn user() -> User {
        User {
            metadata: meta(),
            spec: UserSpec {
                maria_db_ref: mariadb(),
                ..Default::default()
            },
            status: None,
        }
    }

    fn grant() -> Grant {
        Grant {
            metadata: meta(),
            spec: GrantSpec {
                maria_db_ref: mariadb(),
                privileges: vec!["ALL PRIVILEGES".into()],
                username: "keystone".into(),
                ..Default::default()
            },
            status: None,
        }
    }

    fn stored(kind: &str, ready: &str) -> Value {
        json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": kind,
            "metadata": {"name": "keystone", "namespace": "ns"},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}})
    }

    #[test]
    fn a_database_is_ready_only_with_ready_true() {
        let cases = [
            ("a new Database is not ready", FakeCluster::new(), false),
            (
                "a Database with Ready=False is not ready",
                FakeCluster::new().with(stored("Database", "False")),
                false,
            ),
            (
                "a Database with Ready=True is ready",
                FakeCluster::new().with(stored("Database", "True")),
                true,
            ),
        ];
        for (case, cluster, ready) in cases {
            assert_eq!(
                ensure_database(&cluster, &owner(), &database()).expect(case),
                ready,
                "{case}"
            );
        }
    }

    #[test]
    fn server_defaults_the_builder_omits_are_neither_sent_nor_overwritten() {
        let mut existing = stored("User", "True");
        existing["spec"] = json!({"mariaDbRef": {"name": "mariadb"}, "maxUserConnections": 10});
        existing["metadata"]["ownerReferences"] = json!([{"apiVersion": owner().api_version,
            "kind": owner().kind, "name": owner().name, "uid": owner().uid,
            "controller": true, "blockOwnerDeletion": true}]);
        let cluster = FakeCluster::new()
            .with(existing)
            .with(stored("Grant", "True"));
        ensure_database_user(&cluster, &owner(), &user(), &grant()).expect("ok");
        let bodies = cluster.applied();
        assert!(bodies[0]["spec"].get("maxUserConnections").is_none());
        assert_eq!(
            cluster
                .object(&crate::object::ObjectRef {
                    api_version: "k8s.mariadb.com/v1alpha1".into(),
                    kind: "User".into(),
                    namespace: Some("ns".into()),
                    name: "keystone".into(),
                })
                .expect("stored")["spec"]["maxUserConnections"],
            10,
            "the server's default survives the apply"
        );
        // Applied once, the converged User is not sent again.
        cluster.clear_calls();
        ensure_database_user(&cluster, &owner(), &user(), &grant()).expect("ok");
        assert!(
            !cluster
                .writes()
                .iter()
                .any(|w| matches!(w, Call::Apply { object, .. } if object.kind == "User")),
            "a converged User is not rewritten"
        );
    }

    #[test]
    fn user_and_grant_readiness_combine() {
        let cases = [
            ("neither ready", "False", "False", false),
            ("only the User ready", "True", "False", false),
            ("only the Grant ready", "False", "True", false),
            ("both ready", "True", "True", true),
        ];
        for (case, user_ready, grant_ready, ready) in cases {
            let cluster = FakeCluster::new()
                .with(stored("User", user_ready))
                .with(stored("Grant", grant_ready));
            assert_eq!(
                ensure_database_user(&cluster, &owner(), &user(), &grant()).expect(case),
                ready,
                "{case}"
            );
        }
    }

    #[test]
    fn the_user_is_applied_before_the_grant_and_both_are_owned() {
        let cluster = FakeCluster::new();
        ensure_database_user(&cluster, &owner(), &user(), &grant()).expect("ok");
        let kinds: Vec<String> = cluster
            .calls()
            .into_iter()
            .filter_map(|c| match c {
                Call::Apply { object, .. } => Some(object.kind),
                _ => None,
            })
            .collect();
        assert_eq!(kinds, ["User", "Grant"]);
        for kind in ["User", "Grant"] {
            let object = cluster
                .object(&crate::object::ObjectRef {
                    api_version: "k8s.mariadb.com/v1alpha1".into(),
                    kind: kind.into(),
                    namespace: Some("ns".into()),
                    name: "keystone".into(),
                })
                .expect("stored");
            assert_eq!(object["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
        }
    }

    #[test]
    fn a_failed_user_leaves_the_grant_unattempted() {
        let cluster =
            FakeCluster::new().failing(Op::Apply, "keystone", ApiError::Invalid("bad".into()));
        let err = ensure_database_user(&cluster, &owner(), &user(), &grant()).expect_err("fails");
        assert_eq!(err.to_string(), "applying User ns/keystone: invalid: bad");
        assert!(
            !cluster
                .calls()
                .iter()
                .any(|c| c.object().is_some_and(|o| o.kind == "Grant")),
            "{:?}",
            cluster.calls()
        );
    }
}
