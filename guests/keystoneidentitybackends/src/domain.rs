//! Step 5 — the backend's domain (facts §3.2 step 5), looked up by name first
//! (`GET /domains?name=`).
//!
//! | Mode | Found | DomainReady | Also | Pass |
//! |---|---|---|---|---|
//! | Adopt | no | False `DomainNotFound` "domain \"d\" not found; Adopt mode never creates domains" | — | ends, 30 s |
//! | Adopt | yes | True `DomainAdopted` "domain \"d\" adopted (id i)" | status.domainID = i; event `DomainAdopted` "Adopted pre-existing domain \"d\" (id i)" when it was unset; never modified | goes on |
//! | Manage | no | True `DomainProvisioned` "domain \"d\" provisioned (id i)" | `POST /domains` (enabled, description); status.domainID = i; event `DomainCreated` "Created domain \"d\" (id i)" | goes on |
//! | Manage | yes, id ≠ status.domainID (or it is unset) | False `DomainAlreadyExists` "domain \"d\" already exists (id i) but was not created by this backend; use domain.mode Adopt to attach to it" | — | goes on (no requeue of its own) |
//! | Manage | yes, ours | True `DomainProvisioned` | `PATCH /domains/{id}` of only the drifted description / enabled=true, nothing when none drifted | goes on |
//! | any | a call fails | False `IdentityAPIError` "looking up domain \"d\": …" / "creating domain …" / "updating domain …" (a True DomainReady stays) | — | fails |

use std::ops::ControlFlow;

use wasm_operator_sdk::EventType;

use crate::conditions::{
    DOMAIN_ADOPTED, DOMAIN_ALREADY_EXISTS, DOMAIN_NOT_FOUND, DOMAIN_PROVISIONED, DOMAIN_READY,
    IDENTITY_API_ERROR,
};
use crate::error::Error;
use crate::identity::domains::{Domain, DomainPatch};
use crate::identity::{self, Client};
use crate::pass::{Flow, IDENTITY_WAIT, Pass};
use crate::types::DomainMode;

/// Sets DomainReady False `IdentityAPIError` "`what`: `error`" and returns the error.
pub(crate) fn api_error(
    pass: &mut Pass<'_>,
    condition: &str,
    what: String,
    source: identity::Error,
) -> Error {
    let message = format!("{what}: {source}");
    pass.condition(condition, false, IDENTITY_API_ERROR, &message);
    Error::Identity { what, source }
}

/// Runs step 5.
pub(crate) fn run(pass: &mut Pass<'_>, client: &Client<'_>) -> Flow {
    let name = pass.backend.spec.domain.name.clone();
    let existing = match client.domain_by_name(&name) {
        Ok(existing) => existing,
        Err(e) => {
            return Err(api_error(
                pass,
                DOMAIN_READY,
                format!("looking up domain {name:?}"),
                e,
            ));
        }
    };
    match (pass.backend.spec.domain.mode, existing) {
        (DomainMode::Adopt, None) => {
            let message = format!("domain {name:?} not found; Adopt mode never creates domains");
            pass.condition(DOMAIN_READY, false, DOMAIN_NOT_FOUND, &message);
            Ok(ControlFlow::Break(Some(IDENTITY_WAIT)))
        }
        (DomainMode::Adopt, Some(domain)) => {
            if pass.domain_id().is_empty() {
                let note = format!("Adopted pre-existing domain {name:?} (id {})", domain.id);
                pass.event(EventType::Normal, "DomainAdopted", &note);
            }
            let message = format!("domain {name:?} adopted (id {})", domain.id);
            pass.status_mut().domain_id = domain.id;
            pass.condition(DOMAIN_READY, true, DOMAIN_ADOPTED, &message);
            Ok(ControlFlow::Continue(()))
        }
        (DomainMode::Manage, None) => create(pass, client, &name),
        (DomainMode::Manage, Some(domain)) if domain.id != pass.domain_id() => {
            let message = format!(
                "domain {name:?} already exists (id {}) but was not created by this backend; use domain.mode Adopt to attach to it",
                domain.id
            );
            pass.condition(DOMAIN_READY, false, DOMAIN_ALREADY_EXISTS, &message);
            Ok(ControlFlow::Continue(()))
        }
        (DomainMode::Manage, Some(domain)) => correct_drift(pass, client, &name, &domain),
    }
}

/// Creates the managed domain.
fn create(pass: &mut Pass<'_>, client: &Client<'_>, name: &str) -> Flow {
    let description = pass.backend.spec.domain.description.clone();
    let created = match client.create_domain(name, &description) {
        Ok(created) => created,
        Err(e) => {
            return Err(api_error(
                pass,
                DOMAIN_READY,
                format!("creating domain {name:?}"),
                e,
            ));
        }
    };
    let note = format!("Created domain {name:?} (id {})", created.id);
    pass.event(EventType::Normal, "DomainCreated", &note);
    let message = format!("domain {name:?} provisioned (id {})", created.id);
    pass.status_mut().domain_id = created.id;
    pass.condition(DOMAIN_READY, true, DOMAIN_PROVISIONED, &message);
    Ok(ControlFlow::Continue(()))
}

/// Patches the managed domain's description and enabled flag where they drifted.
fn correct_drift(pass: &mut Pass<'_>, client: &Client<'_>, name: &str, domain: &Domain) -> Flow {
    let wanted = &pass.backend.spec.domain.description;
    let patch = DomainPatch {
        enabled: (!domain.is_enabled()).then_some(true),
        description: (domain.description() != wanted).then(|| wanted.clone()),
    };
    if !patch.is_empty()
        && let Err(e) = client.update_domain(&domain.id, &patch)
    {
        return Err(api_error(
            pass,
            DOMAIN_READY,
            format!("updating domain {name:?}"),
            e,
        ));
    }
    let message = format!("domain {name:?} provisioned (id {})", domain.id);
    pass.condition(DOMAIN_READY, true, DOMAIN_PROVISIONED, &message);
    Ok(ControlFlow::Continue(()))
}

#[cfg(test)]
#[path = "domain_tests.rs"]
mod tests;
