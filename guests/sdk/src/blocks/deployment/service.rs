//! EnsureService.
//!
//! The builder leaves the server-assigned fields (clusterIP, clusterIPs, ipFamilies, a
//! port's nodePort) unset, so the field manager never owns them and the server keeps what
//! it assigned. A builder that does set one must set the value already assigned.

use k8s_openapi::api::core::v1::{Service, ServicePort};

use super::Error;
use crate::blocks::apply::{ensure_object, name_of};
use crate::cluster::{Cluster, ClusterExt, Owner};
use crate::object::object_key;

/// A server-assigned immutable field the builder set to another value than the server's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} is immutable: the server assigned {existing}, the builder set {desired}")]
pub struct ServiceConflict {
    /// The field's path, e.g. `spec.clusterIP` or `spec.ports[http].nodePort`.
    pub field: String,
    pub existing: String,
    pub desired: String,
}

/// The first server-assigned field the desired Service sets to a value other than the
/// existing one's; fields either side leaves unset never conflict.
pub fn service_conflict(existing: &Service, desired: &Service) -> Option<ServiceConflict> {
    let (Some(have), Some(want)) = (existing.spec.as_ref(), desired.spec.as_ref()) else {
        return None;
    };
    let conflict = |field: &str, existing: String, desired: String| ServiceConflict {
        field: field.to_owned(),
        existing,
        desired,
    };
    if let (Some(e), Some(d)) = (non_empty(&have.cluster_ip), non_empty(&want.cluster_ip))
        && e != d
    {
        return Some(conflict("spec.clusterIP", e.to_owned(), d.to_owned()));
    }
    for (field, e, d) in [
        ("spec.clusterIPs", &have.cluster_ips, &want.cluster_ips),
        ("spec.ipFamilies", &have.ip_families, &want.ip_families),
    ] {
        if let (Some(e), Some(d)) = (non_empty_list(e), non_empty_list(d))
            && e != d
        {
            return Some(conflict(field, e.join(","), d.join(",")));
        }
    }
    for port in want.ports.iter().flatten() {
        let Some(d) = port.node_port else { continue };
        let assigned = have
            .ports
            .iter()
            .flatten()
            .find(|p| same_port(p, port))
            .and_then(|p| p.node_port);
        if let Some(e) = assigned
            && e != d
        {
            let id = port.name.clone().unwrap_or_else(|| port.port.to_string());
            return Some(conflict(
                &format!("spec.ports[{id}].nodePort"),
                e.to_string(),
                d.to_string(),
            ));
        }
    }
    None
}

fn non_empty(value: &Option<String>) -> Option<&str> {
    value.as_deref().filter(|v| !v.is_empty())
}

fn non_empty_list(value: &Option<Vec<String>>) -> Option<&Vec<String>> {
    value.as_ref().filter(|v| !v.is_empty())
}

/// Ports are the same port when their names match, or, unnamed, their port and protocol.
fn same_port(a: &ServicePort, b: &ServicePort) -> bool {
    match (&a.name, &b.name) {
        (Some(x), Some(y)) if !x.is_empty() || !y.is_empty() => x == y,
        _ => {
            a.port == b.port
                && a.protocol.as_deref().unwrap_or("TCP") == b.protocol.as_deref().unwrap_or("TCP")
        }
    }
}

/// Creates or updates `service` under `owner`. Fails before applying when the builder
/// set clusterIP, clusterIPs, ipFamilies or a nodePort to a value conflicting with the
/// one the server assigned.
pub fn ensure_service<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    service: &Service,
) -> Result<(), Error> {
    let (namespace, name) = name_of(service).map_err(|source| Error::Apply {
        what: "Service".into(),
        source,
    })?;
    let what = format!("Service {}", object_key(namespace, name));
    let existing: Option<Service> =
        cluster
            .get_typed(namespace, name)
            .map_err(|source| Error::Get {
                what: what.clone(),
                source,
            })?;
    if let Some(conflict) = existing.as_ref().and_then(|e| service_conflict(e, service)) {
        return Err(Error::Immutable { what, conflict });
    }
    ensure_object(cluster, owner, service).map_err(|source| Error::Apply { what, source })?;
    Ok(())
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
