//! The Keystone stand-in: an Identity v3 API (the part the Keystone and
//! KeystoneIdentityBackend reconcilers call) for each Keystone the cluster runs, registered as
//! the endpoint of the Keystone's Service once its Deployment is available.
//!
//! - [`register`]: watches Keystone Deployments, Services and bootstrap Jobs; starts one
//!   stand-in per Keystone, writes its EndpointSlice, hands it the admin password.
//! - [`api`], [`tokens`], [`resources`], [`assignments`], [`reply`]: the HTTP API.
//! - [`identity`]: one Keystone's data; [`instance`]: its listener.
//!
//! Fault toggle: the annotation [`UNAVAILABLE_ANNOTATION`] (`"true"`) on a Keystone's
//! Deployment makes its stand-in answer every request 503 (the health check's
//! `APIUnhealthy`); removing it heals it.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::task::JoinHandle;

use super::{Actor, ActorContext, ActorError, Started};
use crate::ApiServer;

mod api;
mod assignments;
mod identity;
mod instance;
mod register;
mod reply;
mod resources;
mod tokens;

use identity::Kind;
use instance::Instance;

pub use register::{ENDPOINT_MANAGER, UNAVAILABLE_ANNOTATION};

/// The stand-ins by (namespace, Keystone name), and their listeners' tasks.
#[derive(Default)]
pub(crate) struct Keystones {
    instances: Mutex<BTreeMap<(String, String), Arc<Instance>>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Keystones {
    /// The stand-in of `namespace/name`, started on first use.
    pub(crate) async fn instance(
        &self,
        namespace: &str,
        name: &str,
    ) -> std::io::Result<Arc<Instance>> {
        let key = (namespace.to_owned(), name.to_owned());
        if let Some(found) = self.lock_instances().get(&key) {
            return Ok(found.clone());
        }
        let (instance, task) = Instance::spawn().await?;
        tracing::info!(namespace, keystone = name, addr = %instance.addr, "Keystone stand-in started");
        self.tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(task);
        Ok(self.lock_instances().entry(key).or_insert(instance).clone())
    }

    fn get(&self, namespace: &str, name: &str) -> Option<Arc<Instance>> {
        self.lock_instances()
            .get(&(namespace.to_owned(), name.to_owned()))
            .cloned()
    }

    fn lock_instances(
        &self,
    ) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Arc<Instance>>> {
        self.instances
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl Drop for Keystones {
    fn drop(&mut self) {
        for task in self
            .tasks
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
        {
            task.abort();
        }
    }
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    let keystones = Arc::new(Keystones::default());
    let task = tokio::spawn(register::run(ctx.client, keystones.clone()));
    Ok(Started {
        tasks: vec![task],
        handle: Some(keystones),
    })
}

/// A test's hold on one stand-in Keystone.
pub struct KeystoneStandIn {
    instance: Arc<Instance>,
}

impl KeystoneStandIn {
    /// `http://127.0.0.1:<port>`, where it listens (its EndpointSlice's address).
    pub fn url(&self) -> String {
        format!("http://{}", self.instance.addr)
    }

    /// Sets the password of user `admin` (domain Default), as a bootstrap would.
    pub fn set_admin_password(&self, password: &str) {
        self.instance.lock().set_admin_password(password);
    }

    /// Whether user `admin` authenticates with `password`.
    pub fn admin_password_is(&self, password: &str) -> bool {
        self.instance
            .lock()
            .users
            .iter()
            .any(|u| u.name == identity::ADMIN_USER && u.password.as_deref() == Some(password))
    }

    /// The domain named `name`, as `GET /v3/domains/{id}` answers it (without links).
    pub fn domain(&self, name: &str) -> Option<Value> {
        self.instance.lock().domain_named(name).cloned()
    }

    /// Every domain's name.
    pub fn domain_names(&self) -> Vec<String> {
        self.instance
            .lock()
            .all(Kind::Domain)
            .filter_map(|d| d["name"].as_str().map(str::to_owned))
            .collect()
    }

    /// The uid of the last bootstrap Job the actor has looked at (completed or not), so a
    /// test knows the actor has processed one.
    pub fn observed_bootstrap_job(&self) -> Option<String> {
        self.instance
            .observed_bootstrap
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Requests served so far.
    pub fn requests(&self) -> u64 {
        self.instance.requests.load(Ordering::Relaxed)
    }
}

impl ApiServer {
    /// The Keystone stand-in of Keystone `namespace/name`, once the actor has seen its
    /// Deployment (`None` when the actor does not run or has not).
    pub fn keystone(&self, namespace: &str, name: &str) -> Option<KeystoneStandIn> {
        let keystones = self.running().handle::<Keystones>(Actor::Keystone)?;
        let instance = keystones.get(namespace, name)?;
        Some(KeystoneStandIn { instance })
    }
}
