//! The `crypto` import: native key generation, returned as PKCS#8 DER, by
//! `wasm-operator-keygen` (each RSA prime searched on all cores).
//!
//! Generation runs on tokio's blocking pool: RSA-8192 takes seconds, and the guest is
//! blocked in the call anyway. At most [`RuntimeConfig::max_concurrent_keygens`] run at
//! once over all plugins (the others wait within their pass's deadline), and a generation
//! whose call is dropped — its pass missed its deadline, or was cancelled — is told to stop
//! and gives its turn back once its threads have.
//!
//! [`RuntimeConfig::max_concurrent_keygens`]: crate::RuntimeConfig::max_concurrent_keygens

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use tokio::sync::Semaphore;

use wasm_operator_keygen as keygen;

use crate::bindings::crypto::{Curve, Host, KeyAlgorithm, KeyError};

/// The key generations of one runtime: their turns, and counters of those started and
/// running.
#[derive(Debug)]
pub(crate) struct Keygens {
    turns: Arc<Semaphore>,
    started: AtomicU64,
    running: AtomicUsize,
}

impl Keygens {
    /// At most `concurrency` (at least one) key generations at once.
    pub(crate) fn new(concurrency: usize) -> Self {
        Self {
            turns: Arc::new(Semaphore::new(concurrency.max(1))),
            started: AtomicU64::new(0),
            running: AtomicUsize::new(0),
        }
    }

    /// Key generations started so far.
    pub(crate) fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Key generations running now.
    pub(crate) fn running(&self) -> usize {
        self.running.load(Ordering::Relaxed)
    }
}

/// The crypto capability of one pass.
#[derive(Debug, Clone)]
pub(crate) struct CryptoCtx {
    keygens: Arc<Keygens>,
}

impl CryptoCtx {
    pub(crate) fn new(keygens: Arc<Keygens>) -> Self {
        Self { keygens }
    }
}

impl Host for CryptoCtx {
    /// Contract 1.0's call: the error as text.
    async fn generate_key(&mut self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, String> {
        self.generate(algorithm).await.map_err(|e| match e {
            KeyError::Unsupported(m) | KeyError::Failed(m) => m,
        })
    }

    /// Contract 1.1's call: an unsupported algorithm is told apart from a failure.
    async fn generate(&mut self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
        let algorithm = match algorithm {
            KeyAlgorithm::Rsa(bits) => keygen::KeyAlgorithm::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P521),
            KeyAlgorithm::Ed25519 => keygen::KeyAlgorithm::Ed25519,
        };
        let keygens = self.keygens.clone();
        let Ok(turn) = keygens.turns.clone().acquire_owned().await else {
            return Err(KeyError::Failed("key generation is shut down".into()));
        };
        let cancel = CancelOnDrop(Arc::new(AtomicBool::new(false)));
        let flag = cancel.0.clone();
        keygens.started.fetch_add(1, Ordering::Relaxed);
        keygens.running.fetch_add(1, Ordering::Relaxed);
        let generated = tokio::task::spawn_blocking(move || {
            let generated = keygen::generate_pkcs8_cancellable(algorithm, &flag);
            keygens.running.fetch_sub(1, Ordering::Relaxed);
            drop(turn);
            generated
        })
        .await;
        drop(cancel);
        match generated {
            Ok(generated) => generated.map_err(key_error),
            Err(e) => Err(KeyError::Failed(format!("key generation task failed: {e}"))),
        }
    }
}

/// Sets the flag when dropped: a generation whose call is dropped stops.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// The WIT form of a key generation failure.
fn key_error(error: keygen::KeyError) -> KeyError {
    match error {
        keygen::KeyError::RsaSize(_) => KeyError::Unsupported(error.to_string()),
        keygen::KeyError::Cancelled { .. } | keygen::KeyError::Generate { .. } => {
            KeyError::Failed(error.to_string())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unsupported_rsa_size_is_unsupported_and_a_supported_key_is_generated() {
        let mut crypto = CryptoCtx::new(Arc::new(Keygens::new(1)));
        let unsupported = crypto.generate(KeyAlgorithm::Rsa(1024)).await;
        assert!(
            matches!(&unsupported, Err(KeyError::Unsupported(m))
                if m == "RSA key size 1024 is outside 2048..=8192 bits"),
            "{unsupported:?}"
        );
        assert_eq!(
            crypto.generate_key(KeyAlgorithm::Rsa(1024)).await,
            Err("RSA key size 1024 is outside 2048..=8192 bits".into()),
            "contract 1.0 gets the same text"
        );
        let der = crypto
            .generate(KeyAlgorithm::Ecdsa(Curve::P256))
            .await
            .expect("P-256 is supported");
        assert!(!der.is_empty());
    }
}
