//! Step 4 — IdentityBackends (facts §2.6): the LDAP domains projected from the
//! KeystoneIdentityBackends that name this Keystone (`spec.keystoneRef.name`), sorted by
//! name, into one immutable Secret `{name}-domains-{hash}` (label
//! `cobaltcore.c5c3.io/config-base={name}-domains`) whose name the pass hands to the
//! Config step (`[identity] domain_specific_drivers_enabled` / `domain_config_dir`) and
//! to every pod (the `domains` volume). The files are [`ldap`]'s.
//!
//! | Backend | Projected | Pending entry (why) |
//! |---|---|---|
//! | deleting | no (de-projected at once) | — |
//! | its domain name (case-insensitive) also claimed by another, deleting ones included | no, none of the set | `duplicate domain "D" also claimed by a, b` |
//! | DomainReady not True | no | `domain "D" not ready` |
//! | OIDC or SAML | no | `federation backends are not supported by this operator version yet` |
//! | a render fault (missing Secret or key, CR/LF, no `ldap` block, undecodable spec) | no; Warning `IdentityBackendSkipped` | the fault |
//! | rendered > 256 KiB (file + CA) | no; Warning `IdentityBackendSkipped` | `rendered config too large: N bytes` |
//! | LDAP, rendered | yes: `keystone.<domain>.conf` (+ `<domain>-ca.pem`) | — |
//!
//! | Case | IdentityBackendsReady |
//! |---|---|
//! | no backend, the Deployment mounts none and has rolled out | True `IdentityBackendsNotRequired` |
//! | any pending backend (the others still projected) | False `WaitingForBackends`: "Waiting for identity backends: a (why); b (why)" |
//! | the Deployment does not mount exactly this pass's domains Secret (or none), or is rolling out | False `WaitingForRollout` |
//! | otherwise | True `AllBackendsProjected` |
//!
//! The step never requeues and never fails for a waiting state (the Deployment, the
//! backends and their Secrets re-enqueue the Keystone); only reads and the Secret's create
//! fail it. A wait for the rollout is judged on the server's copy of the Deployment, not
//! the cache's. An `IdentityBackendSkipped` event is recorded only when the condition's
//! message changes, so a converged pass records none; a domains Secret already in the
//! cache is not created again, so a converged pass writes nothing.
//!
//! DECISION: federation (OIDC, SAML) is not built yet: such backends are reported pending
//! and nothing is projected for them (no `{name}-federation-*` Secret), rather than being
//! silently ignored while the backend waits for its ConfigProjected.
//! DECISION: a backend whose spec cannot be decoded, or an LDAP backend without its
//! `ldap` block, is a render fault of that backend (skipped, warned), not a failure of the
//! whole pass: one bad backend must not stop the Keystone's rollout.

// wired by the lead
#[cfg_attr(not(test), allow(dead_code))]
mod federation_data;
mod idp_metadata;
mod ldap;
// wired by the lead
#[cfg_attr(not(test), allow(dead_code))]
mod metadata;
// wired by the lead
#[cfg_attr(not(test), allow(dead_code))]
mod oidc;
mod proxy_conf;
// wired by the lead
#[cfg_attr(not(test), allow(dead_code))]
mod saml;
mod sp_keypair;

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use wasm_operator_sdk::blocks::apply::is_controlled_by;
use wasm_operator_sdk::blocks::config::{create_immutable_secret, immutable_secret_name};
use wasm_operator_sdk::{ClusterExt, EventType, KindRef, ListOptions, ReadFrom};

use crate::conditions::IDENTITY_BACKENDS_READY;
use crate::error::Error;
use crate::identity_backend::IdentityBackend;
use crate::pass::{Pass, StepResult};
use crate::steps::deployment::rolled_out;
use crate::steps::prune::domains_base;
use crate::types::API_VERSION;

/// The KeystoneIdentityBackend kind.
pub(crate) fn identity_backend_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: "KeystoneIdentityBackend".into(),
        plural: "keystoneidentitybackends".into(),
        namespaced: true,
    }
}

/// Why the Deployment does not yet carry the projection `domains` / `federation` (the
/// Secret names the pods should mount; `None` for none), or `None` when it does and has
/// rolled out.
pub(crate) fn rollout_pending(
    deployment: Option<&Deployment>,
    domains: Option<&str>,
    federation: Option<&str>,
) -> Option<&'static str> {
    let Some(deployment) = deployment else {
        return Some("the Keystone Deployment does not exist yet");
    };
    let mounted = |volume: &str| -> Option<String> {
        deployment
            .spec
            .template
            .spec
            .as_ref()?
            .volumes
            .as_ref()?
            .iter()
            .find(|v| v.name == volume)
            .and_then(|v| v.secret.as_ref())
            .and_then(|s| s.secret_name.clone())
    };
    if mounted("domains").as_deref() != domains {
        return Some("the domains projection has not reached the Deployment yet");
    }
    if mounted("federation-proxy-config").as_deref() != federation {
        return Some("the federation projection has not reached the Deployment yet");
    }
    if !rolled_out(deployment) {
        return Some("the Keystone Deployment is still rolling out");
    }
    None
}

/// The per-backend budget of rendered bytes (file + CA bundle), far under the API
/// server's Secret limit.
const MAX_RENDERED: usize = 256 * 1024;

/// The Warning event of a skipped backend.
const SKIPPED: &str = "IdentityBackendSkipped";

/// A listed backend that names this Keystone.
struct Listed {
    name: String,
    deleting: bool,
    /// The decoded backend, or why it cannot be decoded.
    backend: Result<IdentityBackend, String>,
}

/// The backends naming this Keystone, sorted by name (none when the kind is not served).
fn list(pass: &Pass<'_>) -> Result<Vec<Listed>, Error> {
    let kind = identity_backend_kind();
    let served = pass.cluster.served(&kind).map_err(|source| Error::Probe {
        kind: "KeystoneIdentityBackend",
        source,
    })?;
    if !served {
        return Ok(Vec::new());
    }
    let listed = pass
        .cluster
        .list(&kind, Some(pass.namespace()), &ListOptions::default())
        .map_err(|e| {
            Error::cluster(format!(
                "listing KeystoneIdentityBackends in {}",
                pass.namespace()
            ))(e.into())
        })?;
    let mut backends: Vec<Listed> = listed
        .into_iter()
        .filter(|b| {
            b.pointer("/spec/keystoneRef/name").and_then(Value::as_str) == Some(pass.name())
        })
        .map(|b| Listed {
            name: b
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            deleting: b.pointer("/metadata/deletionTimestamp").is_some(),
            backend: serde_json::from_value(b).map_err(|e| format!("spec cannot be read: {e}")),
        })
        .collect();
    backends.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(backends)
}

/// What the backends project, and which wait.
#[derive(Default)]
struct Projection {
    /// The domains Secret's data.
    data: BTreeMap<String, ByteString>,
    /// `name (why)` per pending backend.
    pending: Vec<String>,
    /// The notes of the `IdentityBackendSkipped` events.
    skipped: Vec<String>,
}

impl Projection {
    fn skip(&mut self, name: &str, why: String, note: String) {
        self.pending.push(format!("{name} ({why})"));
        self.skipped.push(note);
    }
}

/// Judges and renders every backend.
fn project(pass: &Pass<'_>, backends: &[Listed]) -> Result<Projection, Error> {
    let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for listed in backends {
        if let Ok(b) = &listed.backend {
            owners
                .entry(b.spec.domain.name.to_lowercase())
                .or_default()
                .push(&listed.name);
        }
    }
    let mut out = Projection::default();
    for listed in backends.iter().filter(|l| !l.deleting) {
        let name = listed.name.as_str();
        let backend = match &listed.backend {
            Ok(b) => b,
            Err(why) => {
                let note = format!("Skipping identity backend {name}: {why}");
                out.skip(name, why.clone(), note);
                continue;
            }
        };
        let domain = &backend.spec.domain.name;
        let claimed = &owners[&domain.to_lowercase()];
        if claimed.len() > 1 {
            out.pending.push(format!(
                "{name} (duplicate domain {domain:?} also claimed by {})",
                claimed.join(", ")
            ));
            continue;
        }
        if !backend.domain_ready() {
            out.pending
                .push(format!("{name} (domain {domain:?} not ready)"));
            continue;
        }
        if backend.federation() {
            out.pending.push(format!(
                "{name} (federation backends are not supported by this operator version yet)"
            ));
            continue;
        }
        let rendered = match ldap::render(pass.cluster, pass.namespace(), backend)? {
            Ok(rendered) => rendered,
            Err(fault) => {
                let note = format!("Skipping identity backend {name}: {fault}");
                out.skip(name, fault.to_string(), note);
                continue;
            }
        };
        let size = rendered.size();
        if size > MAX_RENDERED {
            let note = format!(
                "Skipping identity backend {name}: rendered config is {size} bytes, exceeding \
                 the {MAX_RENDERED}-byte per-domain budget"
            );
            out.skip(
                name,
                format!("rendered config too large: {size} bytes"),
                note,
            );
            continue;
        }
        out.data.insert(
            ldap::conf_key(domain),
            ByteString(rendered.conf.into_bytes()),
        );
        if let Some(ca) = rendered.ca {
            out.data
                .insert(ldap::ca_key(domain), ByteString(ca.into_bytes()));
        }
    }
    Ok(out)
}

/// Makes sure the domains Secret of `data` exists; its name. One already in the cache,
/// controlled by this Keystone and holding `data` immutably, is taken without a request.
fn domains_secret(pass: &Pass<'_>, data: &BTreeMap<String, ByteString>) -> Result<String, Error> {
    let base = domains_base(pass.name());
    let name = immutable_secret_name(&base, data);
    let cached = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &name)
        .map_err(Error::cluster(format!(
            "reading Secret {}",
            pass.key(&name)
        )))?;
    if let Some(cached) = cached
        && is_controlled_by(&cached.metadata, &pass.owner.uid)
        && cached.immutable == Some(true)
        && cached.data.as_ref() == Some(data)
    {
        return Ok(name);
    }
    create_immutable_secret(pass.cluster, &pass.owner, &base, pass.namespace(), data).map_err(
        |source| Error::ImmutableSecret {
            what: format!("creating the domains Secret {}", pass.key(&name)),
            source,
        },
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let backends = list(pass)?;
    pass.domains_secret_name.clear();
    if backends.is_empty() {
        rollout_condition(
            pass,
            None,
            "IdentityBackendsNotRequired",
            "No KeystoneIdentityBackend references this Keystone",
        )?;
        return Ok(None);
    }
    let projection = project(pass, &backends)?;
    if !projection.data.is_empty() {
        pass.domains_secret_name = domains_secret(pass, &projection.data)?;
    }
    if !projection.pending.is_empty() {
        let message = format!(
            "Waiting for identity backends: {}",
            projection.pending.join("; ")
        );
        let unchanged = pass
            .conditions_of(IDENTITY_BACKENDS_READY)
            .is_some_and(|c| {
                c.status == "False" && c.reason == "WaitingForBackends" && c.message == message
            });
        pass.condition(
            IDENTITY_BACKENDS_READY,
            false,
            "WaitingForBackends",
            &message,
        );
        if !unchanged {
            for note in &projection.skipped {
                pass.event(EventType::Warning, SKIPPED, note);
            }
        }
        return Ok(None);
    }
    let domains = Some(pass.domains_secret_name.clone()).filter(|n| !n.is_empty());
    rollout_condition(
        pass,
        domains.as_deref(),
        "AllBackendsProjected",
        "All attached identity backends are projected",
    )?;
    Ok(None)
}

/// Sets the condition: False `WaitingForRollout` while the Deployment does not carry the
/// projection `domains` or is rolling out, else True `reason`.
fn rollout_condition(
    pass: &mut Pass<'_>,
    domains: Option<&str>,
    reason: &str,
    message: &str,
) -> Result<(), Error> {
    let name = pass.name().to_owned();
    let read = |from: ReadFrom| {
        pass.cluster
            .get_typed_from::<Deployment>(Some(pass.namespace()), &name, from)
            .map_err(Error::cluster(format!(
                "reading Deployment {}",
                pass.key(&name)
            )))
    };
    let mut pending = rollout_pending(read(ReadFrom::Cache)?.as_ref(), domains, None);
    if pending.is_some() {
        // The cache may lag the rollout the Deployment step is about to find done: judge
        // a wait on the server's copy, so the pass that sees the rollout end reports it.
        pending = rollout_pending(read(ReadFrom::Server)?.as_ref(), domains, None);
    }
    match pending {
        Some(why) => {
            let message = format!("Waiting for the identity-backend projection to roll out: {why}");
            pass.condition(
                IDENTITY_BACKENDS_READY,
                false,
                "WaitingForRollout",
                &message,
            );
        }
        None => pass.condition(IDENTITY_BACKENDS_READY, true, reason, message),
    }
    Ok(())
}

#[cfg(test)]
#[path = "identity_backends_tests.rs"]
mod tests;
