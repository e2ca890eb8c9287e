//! Step 4 — IdentityBackends (facts §2.6): projects the KeystoneIdentityBackends that name
//! this Keystone (`spec.keystoneRef.name`), sorted by name. LDAP domains go into one
//! immutable Secret `{name}-domains-{hash}` (label
//! `cobaltcore.c5c3.io/config-base={name}-domains`) whose name the pass hands to the
//! Config step (`[identity] domain_specific_drivers_enabled` / `domain_config_dir`) and
//! to every pod (the `domains` volume); the files are [`ldap`]'s. OIDC and SAML backends
//! go into one immutable Secret `{name}-federation-{hash}` ([`oidc`], [`saml`],
//! [`proxy_conf`], [`federation`]) whose projection ([`crate::federation::Federation`])
//! the Config, Deployment, Service and NetworkPolicy take.
//!
//! | Backend | Projected | Pending entry (why) |
//! |---|---|---|
//! | deleting | no (de-projected at once) | — |
//! | its domain name (case-insensitive) also claimed by another, deleting ones included | no, none of the set | `duplicate domain "D" also claimed by a, b` |
//! | DomainReady not True | no | `domain "D" not ready` |
//! | OIDC or SAML, `spec.federation.proxyImage` unset | no; one Warning `FederationProxyImageMissing` | `spec.federation.proxyImage not set` |
//! | SAML, another non-deleting SAML backend attached | no, none of the set | `more than one SAML backend attached: a, b` |
//! | OIDC whose issuer maps to the metadata file name of another's | no, none of the set | `issuer "I" collides with a, b at the mod_auth_openidc metadata filename` |
//! | a render fault (missing Secret or key, CR/LF, no type block, undecodable spec, provider or IdP metadata unavailable) | no; Warning `IdentityBackendSkipped` | the fault |
//! | rendered > 256 KiB | no; Warning `IdentityBackendSkipped` | `rendered config too large: N bytes` |
//! | LDAP, rendered | yes: `keystone.<domain>.conf` (+ `<domain>-ca.pem`) | — |
//! | OIDC, rendered | yes: `<backend>.provider`, `.client`, `.conf` and its part of `proxy.conf` | — |
//! | SAML, rendered | yes: `sp-key.pem`, `sp-cert.pem`, `sp-metadata.xml`, `<backend>.idp-metadata.xml`, its part of `proxy.conf`; the export `{name}-saml-sp-metadata` | — |
//!
//! | Case | IdentityBackendsReady |
//! |---|---|
//! | no backend, the Deployment mounts none and has rolled out | True `IdentityBackendsNotRequired` |
//! | any pending backend (the others still projected) | False `WaitingForBackends`: "Waiting for identity backends: a (why); b (why)" |
//! | the Deployment does not mount exactly this pass's domains and federation Secrets (or none), or is rolling out | False `WaitingForRollout` |
//! | otherwise | True `AllBackendsProjected` |
//!
//! The step never requeues and never fails for a waiting state (the Deployment, the
//! backends and their Secrets re-enqueue the Keystone); only reads and the Secrets'
//! writes fail it. A wait for the rollout is judged on the server's copy of the
//! Deployment, not the cache's. `IdentityBackendSkipped` and `FederationProxyImageMissing`
//! events are recorded only when the condition's message changes, so a converged pass
//! records none; projection Secrets already in the cache are not created again, so a
//! converged pass writes nothing. The SP metadata export is deleted whenever no SAML
//! backend is attached, the no-backend case included.
//!
//! DECISION: a backend whose spec cannot be decoded, or one without the block of its
//! type, is a render fault of that backend (skipped, warned), not a failure of the whole
//! pass: one bad backend must not stop the Keystone's rollout.
//! DECISION: provider and IdP metadata are fetched through the plugin's declared HTTP
//! egress only. A metadata URL outside it is a render fault that says so (set
//! `spec.oidc.endpoints` or inline metadata instead): a namespaced backend must not make
//! the operator reach an address the plugin did not declare.

mod federation;
mod federation_data;
mod idp_metadata;
mod ldap;
mod metadata;
mod oidc;
mod proxy_conf;
mod rollout;
mod saml;
mod sp_keypair;

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use serde_json::Value;
use wasm_operator_sdk::blocks::apply::is_controlled_by;
use wasm_operator_sdk::blocks::config::{create_immutable_secret, immutable_secret_name};
use wasm_operator_sdk::{ClusterExt, EventType, KindRef, ListOptions};

use crate::conditions::IDENTITY_BACKENDS_READY;
use crate::error::Error;
use crate::identity_backend::IdentityBackend;
use crate::pass::{Pass, StepResult};
use crate::steps::prune::domains_base;
use crate::types::API_VERSION;
use oidc::OidcRender;
use rollout::rollout_condition;
use saml::SamlRender;

/// The KeystoneIdentityBackend kind.
pub(crate) fn identity_backend_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: "KeystoneIdentityBackend".into(),
        plural: "keystoneidentitybackends".into(),
        namespaced: true,
    }
}

/// The per-backend budget of rendered bytes (file + CA bundle), far under the API
/// server's Secret limit.
const MAX_RENDERED: usize = 256 * 1024;

/// The Warning event of a skipped backend.
const SKIPPED: &str = "IdentityBackendSkipped";
/// The Warning event of a federation backend waiting for `spec.federation.proxyImage`.
const PROXY_IMAGE_MISSING: &str = "FederationProxyImageMissing";

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
    let served = pass
        .primary_cluster
        .served(&kind)
        .map_err(|source| Error::Probe {
            kind: "KeystoneIdentityBackend",
            source,
        })?;
    if !served {
        return Ok(Vec::new());
    }
    let listed = pass
        .primary_cluster
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
    /// The rendered OIDC backends, by name.
    oidc: Vec<OidcRender>,
    /// The rendered SAML backend (at most one), by name.
    saml: Vec<SamlRender>,
    /// Whether a non-deleting SAML backend is attached (projected or not).
    saml_attached: bool,
    /// `name (why)` per pending backend.
    pending: Vec<String>,
    /// The Warning events to record when the condition's message changes: (reason, note).
    warnings: Vec<(&'static str, String)>,
    /// The notes of the `FederationMetadataStale` warnings, recorded every pass the
    /// last-known-good metadata stands in (the host folds repeats into a series).
    stale: Vec<String>,
}

impl Projection {
    fn skip(&mut self, name: &str, why: String, note: String) {
        self.pending.push(format!("{name} ({why})"));
        self.warnings.push((SKIPPED, note));
    }

    /// Skips `name` for a render fault, or for a rendering over the budget.
    fn skip_fault(&mut self, name: &str, fault: impl std::fmt::Display) {
        let note = format!("Skipping identity backend {name}: {fault}");
        self.skip(name, fault.to_string(), note);
    }

    /// Whether `size` rendered bytes of `what` fit the budget (`per`: `domain` for LDAP,
    /// `backend` for federation, as CobaltCore words them); skips `name` when not.
    fn fits(&mut self, name: &str, size: usize, what: &str, per: &str) -> bool {
        if size <= MAX_RENDERED {
            return true;
        }
        let note = format!(
            "Skipping identity backend {name}: rendered {what} is {size} bytes, exceeding the \
             {MAX_RENDERED}-byte per-{per} budget"
        );
        self.skip(
            name,
            format!("rendered {what} too large: {size} bytes"),
            note,
        );
        false
    }
}

/// The names of the backends of each colliding set, by the key they collide on.
fn owners(
    backends: &[Listed],
    key: impl Fn(&IdentityBackend) -> Option<String>,
) -> BTreeMap<String, Vec<&str>> {
    let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for listed in backends {
        if let Some(k) = listed.backend.as_ref().ok().and_then(&key) {
            owners.entry(k).or_default().push(&listed.name);
        }
    }
    owners
}

/// Judges and renders every backend.
fn project(pass: &Pass<'_>, backends: &[Listed]) -> Result<Projection, Error> {
    let domains = owners(backends, |b| Some(b.spec.domain.name.to_lowercase()));
    let issuers = owners(backends, |b| {
        b.spec
            .oidc
            .as_ref()
            .filter(|_| b.spec.type_ == "OIDC")
            .map(|o| metadata::metadata_basename(&o.issuer))
    });
    let saml_names: Vec<&str> = backends
        .iter()
        .filter(|l| !l.deleting)
        .filter(|l| l.backend.as_ref().is_ok_and(|b| b.spec.type_ == "SAML"))
        .map(|l| l.name.as_str())
        .collect();
    let proxy_image = proxy_image(pass);
    let mut out = Projection {
        saml_attached: !saml_names.is_empty(),
        ..Projection::default()
    };
    let mut image_warned = false;
    for listed in backends.iter().filter(|l| !l.deleting) {
        let name = listed.name.as_str();
        let backend = match &listed.backend {
            Ok(b) => b,
            Err(why) => {
                out.skip_fault(name, why);
                continue;
            }
        };
        let domain = &backend.spec.domain.name;
        let claimed = &domains[&domain.to_lowercase()];
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
        match backend.spec.type_.as_str() {
            "OIDC" | "SAML" if proxy_image.is_none() => {
                if !image_warned {
                    image_warned = true;
                    out.warnings.push((
                        PROXY_IMAGE_MISSING,
                        format!(
                            "Identity backend {name} is pending: spec.federation.proxyImage is \
                             not set — configure the federation sidecar image before \
                             attaching federation backends"
                        ),
                    ));
                }
                out.pending
                    .push(format!("{name} (spec.federation.proxyImage not set)"));
            }
            "SAML" if saml_names.len() > 1 => out.pending.push(format!(
                "{name} (more than one SAML backend attached: {})",
                saml_names.join(", ")
            )),
            "SAML" => match saml::render(pass, backend)? {
                Ok(mut rendered) => {
                    if out.fits(name, rendered.size(), "SAML config", "backend") {
                        out.stale.extend(rendered.stale.take());
                        out.saml.push(rendered);
                    }
                }
                Err(fault) => out.skip_fault(name, fault),
            },
            "OIDC" => {
                if let Some(o) = &backend.spec.oidc {
                    let colliding = &issuers[&metadata::metadata_basename(&o.issuer)];
                    if colliding.len() > 1 {
                        out.pending.push(format!(
                            "{name} (issuer {:?} collides with {} at the mod_auth_openidc \
                             metadata filename)",
                            o.issuer,
                            colliding.join(", ")
                        ));
                        continue;
                    }
                }
                match oidc::render(pass, backend)? {
                    Ok(mut rendered) => {
                        if out.fits(name, rendered.size(), "federation config", "backend") {
                            out.stale.extend(rendered.stale.take());
                            out.oidc.push(rendered);
                        }
                    }
                    Err(fault) => out.skip_fault(name, fault),
                }
            }
            _ => match ldap::render(pass.primary_cluster, pass.namespace(), backend)? {
                Ok(rendered) => {
                    if out.fits(name, rendered.size(), "config", "domain") {
                        out.data.insert(
                            ldap::conf_key(domain),
                            ByteString(rendered.conf.into_bytes()),
                        );
                        if let Some(ca) = rendered.ca {
                            out.data
                                .insert(ldap::ca_key(domain), ByteString(ca.into_bytes()));
                        }
                    }
                }
                Err(fault) => out.skip_fault(name, fault),
            },
        }
    }
    Ok(out)
}

/// The federation sidecar's image reference, `None` without a repository.
fn proxy_image(pass: &Pass<'_>) -> Option<String> {
    pass.keystone
        .spec
        .federation
        .as_ref()
        .and_then(|f| f.proxy_image.as_ref())
        .filter(|i| !i.repository.is_empty())
        .map(|i| i.reference())
}

/// Makes sure the immutable projection Secret of `data` under `base` exists; its name.
/// One already in the cache, controlled by this Keystone and holding `data` immutably, is
/// taken without a request.
fn projection_secret(
    pass: &Pass<'_>,
    base: &str,
    data: &BTreeMap<String, ByteString>,
    what: &str,
) -> Result<String, Error> {
    let name = immutable_secret_name(base, data);
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
    create_immutable_secret(pass.cluster, &pass.owner, base, pass.namespace(), data).map_err(
        |source| Error::ImmutableSecret {
            what: format!("creating the {what} Secret {}", pass.key(&name)),
            source,
        },
    )
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let backends = list(pass)?;
    pass.domains_secret_name.clear();
    pass.federation = None;
    if backends.is_empty() {
        federation::remove_sp_metadata_export(pass)?;
        rollout_condition(
            pass,
            "IdentityBackendsNotRequired",
            "No KeystoneIdentityBackend references this Keystone",
        )?;
        return Ok(None);
    }
    let projection = project(pass, &backends)?;
    if !projection.data.is_empty() {
        pass.domains_secret_name = projection_secret(
            pass,
            &domains_base(pass.name()),
            &projection.data,
            "domains",
        )?;
    }
    if !projection.oidc.is_empty() || !projection.saml.is_empty() {
        let image = proxy_image(pass).unwrap_or_default();
        pass.federation = Some(federation::project(
            pass,
            &projection.oidc,
            &projection.saml,
            image,
        )?);
    }
    if !projection.saml_attached {
        federation::remove_sp_metadata_export(pass)?;
    }
    for note in &projection.stale {
        pass.event(EventType::Warning, metadata::STALE, note);
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
            for (reason, note) in &projection.warnings {
                pass.event(EventType::Warning, reason, note);
            }
        }
        return Ok(None);
    }
    rollout_condition(
        pass,
        "AllBackendsProjected",
        "All attached identity backends are projected",
    )?;
    Ok(None)
}

#[cfg(test)]
#[path = "identity_backends_tests.rs"]
mod tests;
