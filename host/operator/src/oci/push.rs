//! `wasm-operator plugin push FILE REF`: a component published as a Wasm OCI artifact (one
//! [`WASM_LAYER`] layer, a [`WASM_CONFIG`] config). The manifest holds nothing that varies
//! between pushes (no timestamp), so the same file always gets the same digest.

use std::path::Path;

use http::HeaderValue;
use oci_client::manifest::OCI_IMAGE_MEDIA_TYPE;
use serde_json::json;

use super::{OciError, OciRef, Registry, WASM_CONFIG, WASM_LAYER, sha256_digest};

/// Pushes `file` to `reference` (a tag); returns the reference pinned to the manifest's
/// digest, what `plugins.toml` should name.
pub async fn push(
    registry: &Registry,
    file: &Path,
    reference: &OciRef,
) -> Result<OciRef, OciError> {
    let shown = file.display().to_string();
    let wasm = std::fs::read(file).map_err(|source| OciError::File {
        path: shown.clone(),
        source,
    })?;
    // A component: the wasm magic, then the component layer's version and layer fields.
    if !wasm.starts_with(b"\0asm\x0d\x00\x01\x00") {
        return Err(OciError::NotWasm {
            reference: shown,
            reason: "the file is not a WebAssembly component".into(),
        });
    }
    let layer_digest = sha256_digest(&wasm);
    let config = serde_json::to_vec(&json!({
        "architecture": "wasm",
        "os": "wasip2",
        "layerDigests": [layer_digest],
    }))
    .unwrap_or_default();
    let config_digest = sha256_digest(&config);
    let manifest = serde_json::to_vec(&json!({
        "schemaVersion": 2,
        "mediaType": OCI_IMAGE_MEDIA_TYPE,
        "config": {"mediaType": WASM_CONFIG, "digest": config_digest, "size": config.len()},
        "layers": [{"mediaType": WASM_LAYER, "digest": layer_digest, "size": wasm.len()}],
    }))
    .unwrap_or_default();
    let manifest_digest = sha256_digest(&manifest);
    let image = reference.as_client_ref();
    let failed = OciError::registry(reference);
    let client = &registry.client;
    client
        .store_auth_if_needed(image.resolve_registry(), &registry.auth(reference))
        .await;
    client
        .push_blob(image, config, &config_digest)
        .await
        .map_err(failed)?;
    client
        .push_blob(image, wasm, &layer_digest)
        .await
        .map_err(failed)?;
    client
        .push_manifest_raw(
            image,
            manifest,
            HeaderValue::from_static(OCI_IMAGE_MEDIA_TYPE),
        )
        .await
        .map_err(failed)?;
    Ok(reference.pinned(&manifest_digest))
}
