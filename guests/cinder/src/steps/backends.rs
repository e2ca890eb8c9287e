//! Backends (facts §3.4 "Parent step", the handshake's steps 2–3): each attached,
//! credential-ready CinderBackend rendered into its own immutable Secret
//! `{cinder}-backend-{name}-{hash}` (one per backend: each is mounted by its own
//! cinder-volume Deployment, so a change to one backend rolls no other).
//!
//! | Case | BackendsReady |
//! |---|---|
//! | none attached | True `NoBackends` "No CinderBackend is attached; volume services are not rendered" |
//! | a backend not credential-ready, or skipped (no block for its type, its RBD key Secret or `userKey` missing, a CR/LF in an option or the export) | False `WaitingForBackends` "Waiting for backends: a, b"; a skip also warns `CinderBackendSkipped` "Skipping backend b: <why>" |
//! | all rendered | True `AllBackendsProjected` "All 2 attached backends are projected: a, b" |
//!
//! Keys: `backend.conf` (`[<name>]`), `volume.conf` (`[DEFAULT] enabled_backends = <name>`),
//! and `shares` (NFS: `server:path`) or `ceph.conf` and `keyring` (RBD). Options: the
//! driver wiring of the type, `image_volume_cache_*` when the cache is enabled, then the
//! extraOptions that override no operator key. Each base keeps three superseded
//! Secrets; the Secrets of a backend no longer projected are swept whole. A deleting
//! backend drops out at once. The step never requeues and never fails on a waiting state.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use wasm_operator_sdk::blocks::config::ini::{Sections, render_ini};
use wasm_operator_sdk::blocks::config::{
    CONFIG_BASE_LABEL, create_immutable_secret, prune_immutable_secrets,
};
use wasm_operator_sdk::blocks::satellite::{CollectParams, collect};
use wasm_operator_sdk::{ClusterExt, EventType, ListOptions, Propagation};

use crate::ceph;
use crate::conditions::BACKENDS_READY;
use crate::error::Error;
use crate::pass::{BackendProjection, Pass, StepResult};
use crate::satellites::{Satellite, USER_KEY, backend_kind};

/// The data keys of a backend's Secret.
pub(crate) const BACKEND_CONF: &str = "backend.conf";
pub(crate) const VOLUME_CONF: &str = "volume.conf";
pub(crate) const SHARES: &str = "shares";
pub(crate) const CEPH_CONF: &str = "ceph.conf";
pub(crate) const KEYRING: &str = "keyring";
/// Where a cinder-volume mounts its NFS exports.
pub(crate) const NFS_MOUNT_POINT_BASE: &str = "/var/lib/cinder/mnt";
/// How many superseded Secrets a base keeps.
pub(crate) const RETAIN: usize = 3;

/// `{cinder}-backend-{name}`.
pub(crate) fn base_name(cinder: &str, backend: &str) -> String {
    format!("{cinder}-backend-{backend}")
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let listed = list(pass, &backend_kind())?;
    let gate = |b: &Satellite| b.credentials_ready();
    let collection = collect(CollectParams {
        items: listed.iter().collect(),
        gate: Some(&gate),
        is_default: None,
    });
    let mut pending = Vec::new();
    let mut projections = Vec::new();
    for backend in &collection.attached {
        if !backend.credentials_ready() {
            pending.push(backend.name().to_owned());
            continue;
        }
        match render(pass, backend)? {
            Ok(data) => {
                let base = base_name(pass.name(), backend.name());
                let namespace = pass.namespace().to_owned();
                let secret =
                    create_immutable_secret(pass.cluster, &pass.owner, &base, &namespace, &data)
                        .map_err(|source| Error::ImmutableSecret {
                            what: "backend",
                            source,
                        })?;
                prune_immutable_secrets(
                    pass.cluster,
                    &pass.owner,
                    &base,
                    &namespace,
                    &secret,
                    RETAIN,
                )
                .map_err(|source| Error::Prune {
                    what: "backend",
                    source: Box::new(source),
                })?;
                projections.push(BackendProjection {
                    name: backend.name().to_owned(),
                    secret,
                    spec: backend.spec.clone(),
                });
            }
            Err(why) => {
                pass.event(
                    EventType::Warning,
                    "CinderBackendSkipped",
                    &format!("Skipping backend {}: {why}", backend.name()),
                );
                pending.push(backend.name().to_owned());
            }
        }
    }
    let names: Vec<String> = projections.iter().map(|p| p.name.clone()).collect();
    sweep(pass, &names)?;
    if collection.attached.is_empty() {
        pass.condition(
            BACKENDS_READY,
            true,
            "NoBackends",
            "No CinderBackend is attached; volume services are not rendered",
        );
    } else if !pending.is_empty() {
        let message = format!("Waiting for backends: {}", pending.join(", "));
        pass.condition(BACKENDS_READY, false, "WaitingForBackends", &message);
    } else {
        let message = format!(
            "All {} attached backends are projected: {}",
            names.len(),
            names.join(", ")
        );
        pass.condition(BACKENDS_READY, true, "AllBackendsProjected", &message);
    }
    pass.backends = projections;
    Ok(None)
}

/// The satellites of `kind` naming this Cinder, undecodable ones left out (none when the
/// kind is not served); they live next to the Cinder, never on its target cluster.
pub(crate) fn list(
    pass: &Pass<'_>,
    kind: &wasm_operator_sdk::KindRef,
) -> Result<Vec<Satellite>, Error> {
    let served = pass
        .primary_cluster
        .served(kind)
        .map_err(|source| Error::Probe {
            kind: "Cinder satellite",
            source,
        })?;
    if !served {
        return Ok(Vec::new());
    }
    let what = format!("listing {}s in {}", kind.kind, pass.namespace());
    let listed = pass
        .primary_cluster
        .list(kind, Some(pass.namespace()), &ListOptions::default())
        .map_err(|e| Error::cluster(what)(e.into()))?;
    Ok(listed
        .into_iter()
        .filter(|b| b.pointer("/spec/cinderRef/name").and_then(Value::as_str) == Some(pass.name()))
        .filter_map(|b| serde_json::from_value(b).ok())
        .collect())
}

fn text(value: String) -> ByteString {
    ByteString(value.into_bytes())
}

/// The Secret data of a credential-ready backend; `Ok(Err(why))` for a fault of this
/// backend alone.
fn render(
    pass: &Pass<'_>,
    backend: &Satellite,
) -> Result<Result<BTreeMap<String, ByteString>, String>, Error> {
    let name = backend.name();
    let spec = &backend.spec;
    let mut section = BTreeMap::from([
        ("volume_backend_name".to_owned(), name.to_owned()),
        ("backend_host".to_owned(), pass.name().to_owned()),
    ]);
    let mut data = BTreeMap::new();
    match (spec.type_.as_str(), &spec.nfs, &spec.rbd) {
        ("NFS", Some(nfs), _) => {
            for (key, value) in [
                ("volume_driver", "cinder.volume.drivers.nfs.NfsDriver"),
                ("nas_secure_file_operations", "true"),
                ("nas_secure_file_permissions", "true"),
                ("nfs_mount_options", nfs.mount_options()),
                ("nfs_mount_point_base", NFS_MOUNT_POINT_BASE),
                ("nfs_qcow2_volumes", "false"),
                ("nfs_snapshot_support", "false"),
                ("nfs_sparsed_volumes", "true"),
            ] {
                section.insert(key.to_owned(), value.to_owned());
            }
            section.insert(
                "nfs_shares_config".into(),
                format!("/etc/cinder/backends.conf.d/{name}.shares"),
            );
            let shares = format!("{}:{}", nfs.server, nfs.path);
            if shares.contains(['\n', '\r']) {
                return Ok(Err(control_char()));
            }
            data.insert(SHARES.to_owned(), text(format!("{shares}\n")));
        }
        ("RBD", _, Some(rbd)) => {
            let key_secret = &rbd.key_secret_ref.name;
            let what = format!("reading Secret {}", pass.key(key_secret));
            let secret = pass
                .cluster
                .get_typed::<Secret>(Some(pass.namespace()), key_secret)
                .map_err(Error::cluster(what))?;
            let Some(key) = secret
                .and_then(|s| s.data)
                .and_then(|d| d.get(USER_KEY).cloned())
                .map(|v| String::from_utf8_lossy(&v.0).into_owned())
            else {
                return Ok(Err(format!(
                    "Secret {} has no key {USER_KEY:?}",
                    pass.key(key_secret)
                )));
            };
            let (conf, _) = ceph::file_names(rbd);
            for (key, value) in [
                (
                    "volume_driver",
                    "cinder.volume.drivers.rbd.RBDDriver".to_owned(),
                ),
                ("rbd_ceph_conf", format!("/etc/ceph/{conf}")),
                ("rbd_cluster_name", rbd.cluster().to_owned()),
                ("rbd_pool", rbd.pool.clone()),
                ("rbd_user", rbd.user.clone()),
            ] {
                section.insert(key.to_owned(), value);
            }
            if !rbd.secret_uuid.is_empty() {
                section.insert("rbd_secret_uuid".into(), rbd.secret_uuid.clone());
            }
            let keyring = ceph::keyring(rbd, &key);
            if keyring.trim_end().lines().count() != 2 || keyring.contains('\r') {
                return Ok(Err(control_char()));
            }
            data.insert(CEPH_CONF.to_owned(), text(ceph::ceph_conf(rbd)));
            data.insert(KEYRING.to_owned(), text(keyring));
        }
        (type_, _, _) => {
            return Ok(Err(format!(
                "backend {name} has type {type_} but no {} block",
                type_.to_ascii_lowercase()
            )));
        }
    }
    if let Some(cache) = spec.image_volume_cache.as_ref().filter(|c| c.enabled) {
        section.insert("image_volume_cache_enabled".into(), "true".into());
        if let Some(size) = cache.max_size_gb {
            section.insert("image_volume_cache_max_size_gb".into(), size.to_string());
        }
        if let Some(count) = cache.max_count {
            section.insert("image_volume_cache_max_count".into(), count.to_string());
        }
    }
    for (key, value) in &spec.extra_options {
        section.entry(key.clone()).or_insert_with(|| value.clone());
    }
    if section
        .iter()
        .any(|(k, v)| k.contains(['\n', '\r']) || v.contains(['\n', '\r']))
    {
        return Ok(Err(control_char()));
    }
    let sections = Sections::from([(name.to_owned(), section)]);
    data.insert(BACKEND_CONF.to_owned(), text(render_ini(&sections)));
    data.insert(
        VOLUME_CONF.to_owned(),
        text(format!("[DEFAULT]\nenabled_backends = {name}\n")),
    );
    Ok(Ok(data))
}

fn control_char() -> String {
    "an option name or value contains a newline or carriage-return character".to_owned()
}

/// Deletes every Secret of a backend base no projected backend has: nothing mounts them,
/// and each carries an export or key this Cinder no longer serves.
fn sweep(pass: &Pass<'_>, projected: &[String]) -> Result<(), Error> {
    let prefix = base_name(pass.name(), "");
    let what = format!("listing Secrets in {}", pass.namespace());
    let secrets: Vec<Secret> = pass
        .cluster
        .list_typed(Some(pass.namespace()), &ListOptions::default())
        .map_err(Error::cluster(what))?;
    for secret in secrets {
        let Some(base) = secret
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get(CONFIG_BASE_LABEL))
        else {
            continue;
        };
        let Some(backend) = base.strip_prefix(&prefix) else {
            continue;
        };
        let controlled =
            wasm_operator_sdk::blocks::apply::is_controlled_by(&secret.metadata, &pass.owner.uid);
        if !controlled || projected.iter().any(|p| p == backend) {
            continue;
        }
        let name = secret.metadata.name.clone().unwrap_or_default();
        let what = format!("deleting stale Secret {}", pass.key(&name));
        pass.cluster
            .delete_typed::<Secret>(Some(pass.namespace()), &name, Propagation::Background)
            .map_err(Error::cluster(what))?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "backends_tests.rs"]
mod tests;
