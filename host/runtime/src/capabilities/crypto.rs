//! The `crypto` import: native key generation, returned as PKCS#8 DER, by
//! `wasm-operator-keygen` (each RSA prime searched on all cores).
//!
//! Generation runs on tokio's blocking pool: RSA-8192 takes seconds, and the guest is
//! blocked in the call anyway.

use wasm_operator_keygen as keygen;

use crate::bindings::crypto::{Curve, Host, KeyAlgorithm};

/// The crypto capability (stateless: randomness comes from the OS).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct CryptoCtx;

impl Host for CryptoCtx {
    async fn generate_key(&mut self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, String> {
        let algorithm = match algorithm {
            KeyAlgorithm::Rsa(bits) => keygen::KeyAlgorithm::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P521),
            KeyAlgorithm::Ed25519 => keygen::KeyAlgorithm::Ed25519,
        };
        match tokio::task::spawn_blocking(move || keygen::generate_pkcs8(algorithm)).await {
            Ok(generated) => generated.map_err(|e| e.to_string()),
            Err(e) => Err(format!("key generation task failed: {e}")),
        }
    }
}
