//! Step 8 — a deleted backend (facts §3.2 step 8): its config leaves the Keystone first,
//! then its federation objects and (by policy) its domain, then the finalizer. Nothing
//! of the status is written.
//!
//! | # | Case | What the pass does |
//! |---|---|---|
//! | 1 | the finalizer is not carried | nothing |
//! | 2 | the Keystone is gone (or its kind not served) | releases the finalizer |
//! | 3 | reading the Keystone fails otherwise | fails |
//! | 4 | the Deployment still mounts the config (or rolls it out) | waits, 15 s (the Keystone side drops deleting backends) |
//! | 5 | OIDC/SAML | `DELETE` protocol → mapping → identity provider (404 counts as gone); event `FederationObjectsDeleted` "Deleted protocol \"p\", mapping \"m\", and identity provider \"idp\""; a failure: Warning `FederationTeardownFailed` "Deleting protocol \"p\" failed: …", 30 s |
//! | 6 | Manage + Delete + a known status.domainID | `PATCH` enabled=false (event `DomainDisabled` "Disabled domain \"d\" before deletion"), then `DELETE` (event `DomainDeleted` "Deleted domain \"d\" (id i)"); a 404 counts as gone; a failure: Warning `DomainDeleteFailed` "Disabling domain \"d\" failed: …" / "Deleting domain \"d\" failed: …", 30 s |
//! | 6 | Retain, Adopt, or no status.domainID | the domain is left as it is |
//! | — | the admin Secret is gone when 5 or 6 needs it | Warning `FederationTeardownFailed` "Retaining federation objects of \"idp\": …" / `DomainDeleteFailed` "Retaining domain \"d\": …", and the objects are retained |
//! | 7 | done | releases the finalizer |

use std::ops::ControlFlow;

use wasm_operator_sdk::{EventType, log};

use crate::admin_credentials::{self, secret_key};
use crate::error::Error;
use crate::finalizer;
use crate::identity::{Client, Credentials};
use crate::keystone_ref::{self, Keystone};
use crate::pass::{Flow, IDENTITY_WAIT, Pass, SECRET_POLLING};
use crate::projection::{self, Projection};
use crate::types::{DeletionPolicy, DomainMode};

/// Runs the deletion flow.
pub(crate) fn run(pass: &mut Pass<'_>) -> Flow {
    if !finalizer::holds(&pass.backend) {
        return Ok(ControlFlow::Break(None));
    }
    let namespace = pass.namespace().to_owned();
    let name = pass.backend.spec.keystone_ref.name.clone();
    let what = format!("fetching referenced Keystone {namespace}/{name}");
    let Some(keystone) =
        keystone_ref::read(pass.cluster, &namespace, &name).map_err(Error::cluster(what))?
    else {
        log::info(&format!(
            "{}: Keystone {namespace}/{name} is gone; releasing the finalizer",
            pass.key(pass.name())
        ));
        finalizer::release(pass)?;
        return Ok(ControlFlow::Break(None));
    };
    let cluster = pass.cluster;
    let target = keystone_ref::children(cluster, &keystone)?;
    let children = target.as_deref().unwrap_or(cluster);
    if projection::inspect(children, &keystone, &pass.backend)? != Projection::NotProjected {
        log::debug(&format!(
            "{}: waiting for the config to leave the Keystone before the teardown",
            pass.key(pass.name())
        ));
        return Ok(ControlFlow::Break(Some(SECRET_POLLING)));
    }
    let status = pass.backend.status.clone().unwrap_or_default();
    let domain = pass.backend.spec.domain.clone();
    let deletes = domain.mode == DomainMode::Manage
        && domain.deletion_policy == DeletionPolicy::Delete
        && !status.domain_id.is_empty();
    // Read only when something is to be deleted through the identity API.
    let credentials = if pass.backend.is_federation() || deletes {
        admin_credentials::read(children, &keystone)?
    } else {
        None
    };
    let missing = || {
        format!(
            "admin password Secret is unavailable (Secret {} is missing or has no password key)",
            secret_key(&keystone)
        )
    };
    if pass.backend.is_federation() {
        let after = match &credentials {
            Some(credentials) => teardown(pass, &keystone, credentials.clone()),
            None => {
                let idp = pass.backend.identity_provider_name().to_owned();
                let note = format!("Retaining federation objects of {idp:?}: {}", missing());
                pass.event(EventType::Warning, "FederationTeardownFailed", &note);
                None
            }
        };
        if after.is_some() {
            return Ok(ControlFlow::Break(after));
        }
    }
    if deletes {
        let after = match credentials {
            Some(credentials) => delete_domain(pass, &keystone, credentials, &status.domain_id),
            None => {
                let note = format!("Retaining domain {:?}: {}", domain.name, missing());
                pass.event(EventType::Warning, "DomainDeleteFailed", &note);
                None
            }
        };
        if after.is_some() {
            return Ok(ControlFlow::Break(after));
        }
    }
    finalizer::release(pass)?;
    Ok(ControlFlow::Break(None))
}

/// Deletes protocol, mapping and identity provider; `Some` to retry after a failure.
fn teardown(
    pass: &Pass<'_>,
    keystone: &Keystone,
    credentials: Credentials,
) -> Option<std::time::Duration> {
    let client = Client::new(pass.transport, keystone.api_endpoint(), credentials);
    let idp = pass.backend.identity_provider_name();
    let protocol = pass.backend.protocol_id();
    let mapping = pass.backend.mapping_id();
    let warn = |what: String, e: crate::identity::Error| {
        let note = format!("{what}: {e}");
        pass.event(EventType::Warning, "FederationTeardownFailed", &note);
        Some(IDENTITY_WAIT)
    };
    if let Err(e) = client.delete_protocol(idp, protocol).or_else(gone) {
        return warn(format!("Deleting protocol {protocol:?} failed"), e);
    }
    if let Err(e) = client.delete_mapping(&mapping).or_else(gone) {
        return warn(format!("Deleting mapping {mapping:?} failed"), e);
    }
    if let Err(e) = client.delete_identity_provider(idp).or_else(gone) {
        return warn(format!("Deleting identity provider {idp:?} failed"), e);
    }
    let note = format!(
        "Deleted protocol {protocol:?}, mapping {mapping:?}, and identity provider {idp:?}"
    );
    pass.event(EventType::Normal, "FederationObjectsDeleted", &note);
    None
}

/// A 404 counts as done.
fn gone(e: crate::identity::Error) -> Result<(), crate::identity::Error> {
    if e.is_not_found() { Ok(()) } else { Err(e) }
}

/// Disables, then deletes the managed domain; `Some` to retry after a failure.
fn delete_domain(
    pass: &Pass<'_>,
    keystone: &Keystone,
    credentials: Credentials,
    id: &str,
) -> Option<std::time::Duration> {
    let client = Client::new(pass.transport, keystone.api_endpoint(), credentials);
    let name = &pass.backend.spec.domain.name;
    let disable = crate::identity::domains::DomainPatch {
        enabled: Some(false),
        description: None,
    };
    match client.update_domain(id, &disable) {
        // Deleted out of band: done.
        Err(e) if e.is_not_found() => return None,
        Err(e) => {
            let note = format!("Disabling domain {name:?} failed: {e}");
            pass.event(EventType::Warning, "DomainDeleteFailed", &note);
            return Some(IDENTITY_WAIT);
        }
        Ok(()) => {}
    }
    let note = format!("Disabled domain {name:?} before deletion");
    pass.event(EventType::Normal, "DomainDisabled", &note);
    if let Err(e) = client.delete_domain(id).or_else(gone) {
        let note = format!("Deleting domain {name:?} failed: {e}");
        pass.event(EventType::Warning, "DomainDeleteFailed", &note);
        return Some(IDENTITY_WAIT);
    }
    let note = format!("Deleted domain {name:?} (id {id})");
    pass.event(EventType::Normal, "DomainDeleted", &note);
    None
}

#[cfg(test)]
#[path = "deletion_tests.rs"]
mod tests;
