//! mariadb-operator (`k8s.mariadb.com/v1alpha1`) stand-in: a MariaDB becomes `Ready`, and a
//! Database, User or Grant becomes `Ready` once what it references resolves.
//!
//! As mariadb-operator writes them (field manager `mariadb-operator`, conditions without
//! `observedGeneration`):
//! - MariaDB: `Ready=True`/`StatefulSetReady` "Running" (and `status.currentPrimary`
//!   `<name>-0`); kept not ready: `Ready=False`/`StatefulSetNotReady`.
//! - Database, User, Grant: `Ready=True`/`Created` "Created"; otherwise
//!   `Ready=False`/`Failed` with what is missing: the `mariaDbRef` MariaDB ("MariaDB not
//!   found" / "MariaDB not ready"), a User's `passwordSecretKeyRef` Secret or key, a Grant's
//!   User (`spec.username`, a User in the Grant's namespace named so or whose
//!   `spec.name` is so, that is Ready).
//!
//! [`NOT_READY_ANNOTATION`](super::kit::NOT_READY_ANNOTATION) keeps any of them not ready,
//! with its value as the message.

use std::sync::Arc;

use kube::Client;
use serde_json::{Value, json};
use tokio::sync::Notify;

use super::kit::{self, Condition, Kind, Pass};
use super::{Actor, ActorContext, ActorError, Started};

const CRDS: &str = include_str!("../../../../crds/external/mariadb-operator.yaml");
const MANAGER: &str = "mariadb-operator";

const fn kind(kind: &'static str, plural: &'static str) -> Kind {
    Kind {
        group: "k8s.mariadb.com",
        version: "v1alpha1",
        kind,
        plural,
        namespaced: true,
    }
}
const MARIADB: Kind = kind("MariaDB", "mariadbs");
const DATABASE: Kind = kind("Database", "databases");
const USER: Kind = kind("User", "users");
const GRANT: Kind = kind("Grant", "grants");

struct MariaDbOperator {
    client: Client,
}

/// What the pass reads: every object of every kind.
struct World {
    mariadbs: Vec<Value>,
    users: Vec<Value>,
}

impl Pass for MariaDbOperator {
    async fn pass(&self) {
        if let Err(error) = self.reconcile().await {
            tracing::warn!(actor = %Actor::MariaDb, %error, "a mariadb-operator pass failed");
        }
    }
}

impl MariaDbOperator {
    async fn reconcile(&self) -> Result<(), kube::Error> {
        let mut mariadbs = MARIADB.list(&self.client).await?;
        for mariadb in &mut mariadbs {
            let condition = match kit::not_ready_toggle(mariadb) {
                Some(message) => Condition::new("Ready", false, "StatefulSetNotReady", message),
                None => Condition::new("Ready", true, "StatefulSetReady", "Running"),
            };
            let (_, name) = kit::namespace_name(mariadb);
            let status = json!({
                "conditions": kit::conditions(mariadb, std::slice::from_ref(&condition), false),
                "currentPrimary": format!("{name}-0"),
                "currentPrimaryPodIndex": 0,
            });
            self.write(&MARIADB, mariadb, status.clone()).await;
            // Later kinds of this pass see this pass's verdict.
            mariadb["status"] = status;
        }
        let mut world = World {
            mariadbs,
            users: Vec::new(),
        };
        for user in USER.list(&self.client).await? {
            let mut verdict = self.check_user(&world, &user).await;
            if let Some(message) = kit::not_ready_toggle(&user) {
                verdict = Err(message);
            }
            let status = self.write_sql_status(&USER, &user, verdict).await;
            let mut user = user;
            user["status"] = status;
            world.users.push(user);
        }
        for (kind, objects) in [
            (DATABASE, DATABASE.list(&self.client).await?),
            (GRANT, GRANT.list(&self.client).await?),
        ] {
            for object in objects {
                let mut verdict = mariadb_ref(&world, &object);
                if verdict.is_ok() && kind.kind == "Grant" {
                    verdict = grant_user(&world, &object);
                }
                if let Some(message) = kit::not_ready_toggle(&object) {
                    verdict = Err(message);
                }
                self.write_sql_status(&kind, &object, verdict).await;
            }
        }
        Ok(())
    }

    /// A User's MariaDB and password Secret.
    async fn check_user(&self, world: &World, user: &Value) -> Result<(), String> {
        mariadb_ref(world, user)?;
        let Some(reference) = user.pointer("/spec/passwordSecretKeyRef") else {
            return Ok(());
        };
        let (namespace, _) = kit::namespace_name(user);
        let name = kit::str_at(reference, "/name").unwrap_or_default();
        let key = kit::str_at(reference, "/key").unwrap_or_default();
        let secret = kit::SECRET
            .api(&self.client, namespace.as_deref())
            .get_opt(name)
            .await
            .map_err(|e| format!("Error getting password: {e}"))?
            .ok_or_else(|| format!("Error getting password: secrets {name:?} not found"))?;
        let has_key = serde_json::to_value(&secret)
            .ok()
            .and_then(|s| s.pointer(&format!("/data/{key}")).cloned())
            .is_some();
        if has_key {
            Ok(())
        } else {
            Err(format!(
                "Error getting password: secret {name:?} has no key {key:?}"
            ))
        }
    }

    /// Writes a Database/User/Grant status; returns it.
    async fn write_sql_status(
        &self,
        kind: &Kind,
        object: &Value,
        verdict: Result<(), String>,
    ) -> Value {
        let condition = match verdict {
            Ok(()) => Condition::new("Ready", true, "Created", "Created"),
            Err(message) => Condition::new("Ready", false, "Failed", message),
        };
        let status = json!({"conditions": kit::conditions(object, &[condition], false)});
        self.write(kind, object, status.clone()).await;
        status
    }

    async fn write(&self, kind: &Kind, object: &Value, status: Value) {
        if let Err(error) = kit::apply_status(&self.client, kind, object, MANAGER, status).await {
            let (namespace, name) = kit::namespace_name(object);
            tracing::warn!(actor = %Actor::MariaDb, kind = kind.kind, ?namespace, %name, %error, "writing the status failed");
        }
    }
}

/// Whether the object's `spec.mariaDbRef` names a Ready MariaDB.
fn mariadb_ref(world: &World, object: &Value) -> Result<(), String> {
    let (namespace, _) = kit::namespace_name(object);
    let reference = &object["spec"]["mariaDbRef"];
    let name = kit::str_at(reference, "/name").unwrap_or_default();
    let namespace = kit::str_at(reference, "/namespace")
        .map(str::to_owned)
        .or(namespace);
    let found = world.mariadbs.iter().find(|m| {
        let (ns, n) = kit::namespace_name(m);
        n == name && ns == namespace
    });
    match found {
        None => Err("MariaDB not found".into()),
        Some(m) if !kit::is_ready(m) => Err("MariaDB not ready".into()),
        Some(_) => Ok(()),
    }
}

/// Whether a Grant's `spec.username` is a Ready User of its namespace.
fn grant_user(world: &World, grant: &Value) -> Result<(), String> {
    let (namespace, _) = kit::namespace_name(grant);
    let username = kit::str_at(grant, "/spec/username").unwrap_or_default();
    let found = world.users.iter().find(|u| {
        let (ns, name) = kit::namespace_name(u);
        let sql_name = kit::str_at(u, "/spec/name").unwrap_or(&name).to_owned();
        ns == namespace && (name == username || sql_name == username)
    });
    match found {
        None => Err(format!("User {username:?} not found")),
        Some(u) if !kit::is_ready(u) => Err(format!("User {username:?} not ready")),
        Some(_) => Ok(()),
    }
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    kit::install_crds(&ctx.client, Actor::MariaDb, MANAGER, CRDS).await?;
    let wake = Arc::new(Notify::new());
    let mut tasks = kit::spawn_watchers(
        Actor::MariaDb,
        &ctx.client,
        &[MARIADB, DATABASE, USER, GRANT, kit::SECRET],
        &wake,
    );
    tasks.push(kit::spawn_loop(
        Arc::new(MariaDbOperator { client: ctx.client }),
        wake,
    ));
    Ok(Started {
        tasks,
        handle: None,
    })
}
