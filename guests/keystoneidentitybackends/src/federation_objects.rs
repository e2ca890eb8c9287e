//! Step 6 — the federation objects of an OIDC or SAML backend (facts §3.2 step 6), run
//! once DomainReady is True with a known status.domainID, in dependency order: identity
//! provider → mapping, groups and role assignments ([`groups`](crate::groups)) →
//! protocol. Every write is drift-only: a converged pass sends only GETs.
//!
//! | Case | FederationObjectsReady | MappingsReady | Pass |
//! |---|---|---|---|
//! | `spec.mappings` empty | False `NoMappingRules` | False `NoMappingRules` "spec.mappings is empty: keystone requires at least one mapping rule before the federation protocol can be provisioned" | goes on (nothing sent) |
//! | identity provider `<idp>` absent | — | — | `PUT` with domain_id, description (spec.domain.description, when set), enabled, remote_ids [issuer / entityID]; event `IdentityProviderCreated` "Created identity provider \"idp\" (remote ID r)" |
//! | present, drifted | — | — | `PATCH` of only enabled=true / description / remote_ids (never domain_id) |
//! | mapping `<idp>-mapping` absent / rules drifted | — | — | `PUT` / `PATCH` of the rules; event `MappingCreated` / `MappingUpdated` "Created federation mapping \"m\" (n rules)" |
//! | groups and role assignments applied | — | True `MappingsApplied` "mapping \"m\", n group(s), and role assignments applied" | goes on |
//! | a role or project is missing | — | False `RoleOrProjectNotFound` | ends, 30 s |
//! | protocol absent / bound elsewhere | True `FederationObjectsProvisioned` "identity provider \"idp\" and protocol \"p\" provisioned" | — | `PUT` / `PATCH` with mapping_id; event `ProtocolCreated` "Created protocol \"p\" on identity provider \"idp\" (mapping m)" |
//! | a call fails | False `IdentityAPIError` (identity provider, protocol) | False `IdentityAPIError` (mapping, groups) | fails |
//!
//! The `IdentityAPIError` demotions obey the transient-reason rule: a True condition stays.

use std::ops::ControlFlow;

use wasm_operator_sdk::EventType;

use crate::conditions::{
    FEDERATION_OBJECTS_PROVISIONED, FEDERATION_OBJECTS_READY, MAPPINGS_APPLIED, MAPPINGS_READY,
    NO_MAPPING_RULES,
};
use crate::domain::api_error;
use crate::error::Error;
use crate::groups;
use crate::identity::federation::IdentityProviderFields;
use crate::identity::{Client, rules};
use crate::pass::{Flow, Pass};

/// The message of both conditions while `spec.mappings` is empty.
const NO_RULES: &str = "spec.mappings is empty: keystone requires at least one mapping rule before the federation protocol can be provisioned";

/// Runs step 6.
pub(crate) fn run(pass: &mut Pass<'_>, client: &Client<'_>) -> Flow {
    if pass.backend.spec.mappings.is_empty() {
        pass.condition(FEDERATION_OBJECTS_READY, false, NO_MAPPING_RULES, NO_RULES);
        pass.condition(MAPPINGS_READY, false, NO_MAPPING_RULES, NO_RULES);
        return Ok(ControlFlow::Continue(()));
    }
    identity_provider(pass, client)?;
    let mapping_id = pass.backend.mapping_id();
    mapping(pass, client, &mapping_id)?;
    if let ControlFlow::Break(after) = groups::run(pass, client)? {
        return Ok(ControlFlow::Break(after));
    }
    let message = format!(
        "mapping {mapping_id:?}, {} group(s), and role assignments applied",
        pass.backend.spec.groups.len()
    );
    pass.condition(MAPPINGS_READY, true, MAPPINGS_APPLIED, &message);
    protocol(pass, client, &mapping_id)?;
    Ok(ControlFlow::Continue(()))
}

/// Registers the identity provider, or patches what drifted.
fn identity_provider(pass: &mut Pass<'_>, client: &Client<'_>) -> Result<(), Error> {
    let idp = pass.backend.identity_provider_name().to_owned();
    let remote_id = pass.backend.federation_remote_id().to_owned();
    let description = pass.backend.spec.domain.description.clone();
    let fail =
        |pass: &mut Pass<'_>, what: String, e| api_error(pass, FEDERATION_OBJECTS_READY, what, e);
    let existing = match client.identity_provider(&idp) {
        Ok(existing) => existing,
        Err(e) => {
            return Err(fail(
                pass,
                format!("looking up identity provider {idp:?}"),
                e,
            ));
        }
    };
    let Some(existing) = existing else {
        let fields = IdentityProviderFields {
            domain_id: Some(pass.domain_id().to_owned()),
            description: (!description.is_empty()).then_some(description),
            enabled: Some(true),
            remote_ids: Some(vec![remote_id.clone()]),
        };
        if let Err(e) = client.create_identity_provider(&idp, &fields) {
            return Err(fail(pass, format!("creating identity provider {idp:?}"), e));
        }
        let note = format!("Created identity provider {idp:?} (remote ID {remote_id})");
        pass.event(EventType::Normal, "IdentityProviderCreated", &note);
        return Ok(());
    };
    let remote_ids = vec![remote_id];
    let drift = IdentityProviderFields {
        domain_id: None,
        enabled: (existing.enabled == Some(false)).then_some(true),
        description: (existing.description.as_deref().unwrap_or_default() != description)
            .then_some(description),
        remote_ids: (existing.remote_ids.as_ref() != Some(&remote_ids)).then_some(remote_ids),
    };
    if !drift.is_empty()
        && let Err(e) = client.update_identity_provider(&idp, &drift)
    {
        return Err(fail(pass, format!("updating identity provider {idp:?}"), e));
    }
    Ok(())
}

/// Creates the mapping, or replaces its rules when they drifted.
fn mapping(pass: &mut Pass<'_>, client: &Client<'_>, id: &str) -> Result<(), Error> {
    let wanted = rules::rules(&pass.backend.spec.mappings);
    let count = pass.backend.spec.mappings.len();
    let fail = |pass: &mut Pass<'_>, what: String, e| api_error(pass, MAPPINGS_READY, what, e);
    match client.mapping(id) {
        Err(e) => Err(fail(pass, format!("looking up mapping {id:?}"), e)),
        Ok(None) => {
            if let Err(e) = client.create_mapping(id, &wanted) {
                return Err(fail(pass, format!("creating mapping {id:?}"), e));
            }
            let note = format!("Created federation mapping {id:?} ({count} rules)");
            pass.event(EventType::Normal, "MappingCreated", &note);
            Ok(())
        }
        Ok(Some(existing)) if existing.rules == wanted => Ok(()),
        Ok(Some(_)) => {
            if let Err(e) = client.update_mapping(id, &wanted) {
                return Err(fail(pass, format!("updating mapping {id:?}"), e));
            }
            let note = format!("Updated federation mapping {id:?} ({count} rules)");
            pass.event(EventType::Normal, "MappingUpdated", &note);
            Ok(())
        }
    }
}

/// Binds the protocol to the mapping; completes FederationObjectsReady.
fn protocol(pass: &mut Pass<'_>, client: &Client<'_>, mapping_id: &str) -> Result<(), Error> {
    let idp = pass.backend.identity_provider_name().to_owned();
    let protocol = pass.backend.protocol_id().to_owned();
    let fail =
        |pass: &mut Pass<'_>, what: String, e| api_error(pass, FEDERATION_OBJECTS_READY, what, e);
    match client.protocol(&idp, &protocol) {
        Err(e) => return Err(fail(pass, format!("looking up protocol {protocol:?}"), e)),
        Ok(None) => {
            if let Err(e) = client.create_protocol(&idp, &protocol, mapping_id) {
                return Err(fail(pass, format!("creating protocol {protocol:?}"), e));
            }
            let note = format!(
                "Created protocol {protocol:?} on identity provider {idp:?} (mapping {mapping_id})"
            );
            pass.event(EventType::Normal, "ProtocolCreated", &note);
        }
        Ok(Some(existing)) if existing.mapping_id != mapping_id => {
            if let Err(e) = client.update_protocol(&idp, &protocol, mapping_id) {
                return Err(fail(pass, format!("updating protocol {protocol:?}"), e));
            }
        }
        Ok(Some(_)) => {}
    }
    let message = format!("identity provider {idp:?} and protocol {protocol:?} provisioned");
    pass.condition(
        FEDERATION_OBJECTS_READY,
        true,
        FEDERATION_OBJECTS_PROVISIONED,
        &message,
    );
    Ok(())
}

#[cfg(test)]
#[path = "federation_objects_tests.rs"]
mod tests;
