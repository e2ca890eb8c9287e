//! The federation side of step 4 (facts §2.6 step 6): turns the rendered OIDC and SAML
//! backends into the Keystone's federation objects and the pass's [`Federation`].
//!
//! | Object | Name | Lifecycle |
//! |---|---|---|
//! | federation Secret (immutable, content-hashed, label `cobaltcore.c5c3.io/config-base={name}-federation`) | `{name}-federation-{hash}` | one per content; prune keeps 3 |
//! | OIDC crypto passphrase (`passphrase`: 32 random bytes, urlsafe base64) | `{name}-oidc-crypto-passphrase` | created once, with the first OIDC backend; never rewritten (a new one only re-hashes the federation Secret) |
//! | SP metadata export (`sp-metadata.xml`, `entityID`) | `{name}-saml-sp-metadata` | written while a SAML backend is projected, updated on drift; deleted when no SAML backend is attached |
//!
//! The federation Secret also carries the annotation `metadata::SOURCES_ANNOTATION`: the
//! backend version each URL-fetched document was fetched for, so a later pass at the same
//! versions reuses the documents without a request to the identity provider.
//!
//! A converged pass writes nothing: the federation Secret, its annotation, the passphrase
//! and the export are compared with the cache before any request.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::apply::{controller_reference, is_controlled_by};
use wasm_operator_sdk::{ClusterExt, Propagation};

use super::federation_data;
use super::metadata::SOURCES_ANNOTATION;
use super::oidc::OidcRender;
use super::projection_secret;
use super::saml::{SP_METADATA, SamlRender};
use crate::error::Error;
use crate::federation::{self, Federation};
use crate::labels::common_labels;
use crate::pass::Pass;
use crate::steps::keys::generate_key;

/// The passphrase Secret's data key.
const PASSPHRASE: &str = "passphrase";

/// Creates (or finds) the federation objects of `oidc` and `saml` (at least one of them
/// non-empty, both sorted by backend name) and returns the projection.
pub(super) fn project(
    pass: &Pass<'_>,
    oidc: &[OidcRender],
    saml: &[SamlRender],
    proxy_image: String,
) -> Result<Federation, Error> {
    let passphrase = if oidc.is_empty() {
        String::new()
    } else {
        passphrase(pass)?
    };
    let assembled = federation_data::assemble(&pass.keystone, oidc, saml, &passphrase);
    let secret_name = projection_secret(
        pass,
        &federation::secret_base(pass.name()),
        &assembled.data,
        "federation",
    )?;
    let sources: BTreeMap<&str, &str> = oidc
        .iter()
        .map(|r| (r.backend_name.as_str(), r.fetched_for.as_deref()))
        .chain(
            saml.iter()
                .map(|r| (r.backend_name.as_str(), r.fetched_for.as_deref())),
        )
        .filter_map(|(name, stamp)| Some((name, stamp?)))
        .collect();
    record_sources(pass, &secret_name, &sources)?;
    if let Some(saml) = saml.first() {
        sp_metadata_export(pass, saml)?;
    }
    Ok(assembled.into_federation(secret_name, proxy_image))
}

/// Records on the federation Secret `name` which backend version each fetched document
/// was fetched for ([`SOURCES_ANNOTATION`]), when the cache's record differs: the next
/// pass reuses those documents instead of asking the identity providers again.
fn record_sources(
    pass: &Pass<'_>,
    name: &str,
    sources: &BTreeMap<&str, &str>,
) -> Result<(), Error> {
    let desired = (!sources.is_empty()).then(|| serde_json::to_string(sources).unwrap_or_default());
    let cached = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), name)
        .map_err(Error::cluster(format!("reading Secret {}", pass.key(name))))?;
    let recorded = cached.as_ref().and_then(|s| {
        s.metadata
            .annotations
            .as_ref()?
            .get(SOURCES_ANNOTATION)
            .cloned()
    });
    if recorded == desired {
        return Ok(());
    }
    pass.cluster
        .merge_patch::<Secret>(
            Some(pass.namespace()),
            name,
            serde_json::json!({"metadata": {"annotations": {SOURCES_ANNOTATION: desired}}}),
            None,
        )
        .map(drop)
        .map_err(Error::cluster(format!(
            "annotating Secret {}",
            pass.key(name)
        )))
}

/// The OIDC crypto passphrase: the stable Secret's, created on first use.
fn passphrase(pass: &Pass<'_>) -> Result<String, Error> {
    let name = federation::passphrase_secret(pass.name());
    let existing = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &name)
        .map_err(Error::cluster(format!(
            "reading Secret {}",
            pass.key(&name)
        )))?;
    if let Some(existing) = existing {
        let value = existing
            .data
            .as_ref()
            .and_then(|d| d.get(PASSPHRASE))
            .filter(|v| !v.0.is_empty())
            .ok_or_else(|| {
                Error::Spec(format!(
                    "Secret {} exists but carries no {PASSPHRASE:?} key; delete it to have a \
                     new passphrase generated",
                    pass.key(&name)
                ))
            })?;
        return String::from_utf8(value.0.clone()).map_err(|_| {
            Error::Spec(format!(
                "Secret {}: key {PASSPHRASE:?} is not text",
                pass.key(&name)
            ))
        });
    }
    let value = generate_key()?;
    let object = Secret {
        metadata: owned_meta(pass, &name),
        data: Some(BTreeMap::from([(
            PASSPHRASE.to_owned(),
            ByteString(value.clone().into_bytes()),
        )])),
        ..Default::default()
    };
    pass.cluster
        .create_typed(&object)
        .map_err(Error::cluster(format!(
            "creating Secret {}",
            pass.key(&name)
        )))?;
    Ok(value)
}

/// Writes the SP metadata export of `saml` when the cache's differs.
fn sp_metadata_export(pass: &Pass<'_>, saml: &SamlRender) -> Result<(), Error> {
    let name = federation::sp_metadata_secret(pass.name());
    let data = BTreeMap::from([
        (SP_METADATA.to_owned(), ByteString(saml.sp_metadata.clone())),
        (
            "entityID".to_owned(),
            ByteString(saml.sp_entity_id.clone().into_bytes()),
        ),
    ]);
    let existing = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &name)
        .map_err(Error::cluster(format!(
            "reading Secret {}",
            pass.key(&name)
        )))?;
    match existing {
        Some(existing) if existing.data.as_ref() == Some(&data) => Ok(()),
        Some(existing) if !is_controlled_by(&existing.metadata, &pass.owner.uid) => {
            Err(Error::Spec(format!(
                "Secret {} exists and is not controlled by this Keystone; the SP metadata \
                 export needs its name",
                pass.key(&name)
            )))
        }
        Some(existing) => {
            // A merge patch of exactly this data: its keys set, any other key removed.
            let mut patch = serde_json::Map::new();
            for key in existing.data.iter().flat_map(BTreeMap::keys) {
                patch.insert(key.clone(), serde_json::Value::Null);
            }
            for (key, value) in &data {
                patch.insert(key.clone(), serde_json::json!(value));
            }
            pass.cluster
                .merge_patch::<Secret>(
                    Some(pass.namespace()),
                    &name,
                    serde_json::json!({ "data": patch }),
                    existing.metadata.resource_version.as_deref(),
                )
                .map(drop)
                .map_err(Error::cluster(format!(
                    "updating Secret {}",
                    pass.key(&name)
                )))
        }
        None => {
            let object = Secret {
                metadata: owned_meta(pass, &name),
                data: Some(data),
                ..Default::default()
            };
            pass.cluster
                .create_typed(&object)
                .map(drop)
                .map_err(Error::cluster(format!(
                    "creating Secret {}",
                    pass.key(&name)
                )))
        }
    }
}

/// Deletes the SP metadata export when this Keystone's is in the cache (no SAML backend
/// is attached any more).
pub(super) fn remove_sp_metadata_export(pass: &Pass<'_>) -> Result<(), Error> {
    let name = federation::sp_metadata_secret(pass.name());
    let existing = pass
        .cluster
        .get_typed::<Secret>(Some(pass.namespace()), &name)
        .map_err(Error::cluster(format!(
            "reading Secret {}",
            pass.key(&name)
        )))?;
    if existing.is_some_and(|s| is_controlled_by(&s.metadata, &pass.owner.uid)) {
        pass.cluster
            .delete_typed::<Secret>(Some(pass.namespace()), &name, Propagation::Background)
            .map_err(Error::cluster(format!(
                "deleting Secret {}",
                pass.key(&name)
            )))?;
    }
    Ok(())
}

/// Metadata of a Secret this Keystone controls.
fn owned_meta(pass: &Pass<'_>, name: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_owned()),
        namespace: Some(pass.namespace().to_owned()),
        labels: Some(common_labels(pass.name())),
        owner_references: Some(vec![controller_reference(&pass.owner)]),
        ..Default::default()
    }
}
