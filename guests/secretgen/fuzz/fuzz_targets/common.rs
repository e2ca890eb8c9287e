//! What the fuzz targets share: a key source that generates each algorithm's key once (key
//! generation is not what is fuzzed, and RSA would make every run take seconds), and a
//! Secret JSON builder.

use std::collections::HashMap;
use std::sync::Mutex;

use base64::Engine as _;
use secretgen::{KeyAlgorithm, KeySource, NativeKeys, SourceError};

static CACHE: Mutex<Option<HashMap<KeyAlgorithm, Result<Vec<u8>, SourceError>>>> = Mutex::new(None);

/// Generates one key per algorithm and hands it out again.
pub struct CachedKeys;

impl KeySource for CachedKeys {
    fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
        let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .get_or_insert_with(HashMap::new)
            .entry(algorithm)
            .or_insert_with(|| NativeKeys.generate_key(algorithm))
            .clone()
    }
}

/// The JSON of a Secret with this data.
pub fn secret_json(
    name: &str,
    secret_type: &str,
    immutable: bool,
    data: &[(String, Vec<u8>)],
) -> String {
    let data: serde_json::Map<String, serde_json::Value> = data
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                base64::engine::general_purpose::STANDARD.encode(v).into(),
            )
        })
        .collect();
    serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "type": secret_type, "immutable": immutable, "data": data,
    })
    .to_string()
}
