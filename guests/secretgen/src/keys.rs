//! Key generation behind the [`KeySource`] trait.
//!
//! The planner never generates a private key itself: it asks a [`KeySource`] for PKCS#8 DER
//! and decodes it here into a typed [`PrivateKey`]. Built for wasm32 the source is the host's
//! `crypto` import (native speed; RSA-4096 takes seconds inside wasm); natively it is
//! [`NativeKeys`], which uses RustCrypto directly. The planner logic is therefore identical on
//! both targets.
//!
//! DECISION: the decoded key is checked against the requested algorithm and size, so a key
//! source that returns the wrong key fails the plan instead of issuing a weaker certificate.

use ed25519_dalek::pkcs8::DecodePrivateKey as _;
use rsa::traits::PublicKeyParts as _;

pub use wasm_operator_keygen::{Curve, KeyAlgorithm, MAX_RSA_BITS, MIN_RSA_BITS};

/// Why a [`KeySource`] returned no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The algorithm or size is not supported (e.g. RSA-1024), named.
    #[error("{0}")]
    Unsupported(String),
    /// Generation itself failed, or was stopped (the pass's deadline).
    #[error("{0}")]
    Failed(String),
}

/// Where private keys come from.
///
/// Contract: `generate_key` returns a fresh private key of exactly the requested algorithm
/// (and, for RSA, modulus size) as PKCS#8 DER (RFC 5208 / RFC 5958; RFC 8410 for Ed25519), or
/// an error telling an unsupported algorithm or size ([`SourceError::Unsupported`]) from a
/// failure. It must accept RSA sizes from [`MIN_RSA_BITS`] to [`MAX_RSA_BITS`], odd sizes
/// included.
pub trait KeySource {
    /// Generates one private key.
    fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError>;
}

/// Generates keys in this process with the host's own generator (`wasm-operator-keygen`:
/// RustCrypto, each RSA prime searched on all cores). Used natively and by the unit tests; a
/// wasm build of the component uses the host's `crypto` import.
#[derive(Clone, Copy, Debug, Default)]
pub struct NativeKeys;

impl KeySource for NativeKeys {
    fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
        wasm_operator_keygen::generate_pkcs8(algorithm).map_err(|e| match e {
            wasm_operator_keygen::KeyError::RsaSize(_) => SourceError::Unsupported(e.to_string()),
            other => SourceError::Failed(other.to_string()),
        })
    }
}

/// Why a key could not be had from a [`KeySource`].
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The key source does not support the algorithm or size.
    #[error("{algorithm} keys are not supported: {message}")]
    Unsupported {
        algorithm: KeyAlgorithm,
        message: String,
    },
    /// The key source failed.
    #[error("generating an {algorithm} key failed: {message}")]
    Generate {
        algorithm: KeyAlgorithm,
        message: String,
    },
    /// The key source returned something that is not a key of the requested algorithm.
    #[error("the key source returned no {algorithm} key: {reason}")]
    Mismatch {
        algorithm: KeyAlgorithm,
        reason: String,
    },
}

/// A decoded private key.
#[derive(Clone)]
pub(crate) enum PrivateKey {
    Rsa(rsa::PrivateKey),
    P256(p256::SecretKey),
    P384(p384::SecretKey),
    P521(p521::SecretKey),
    Ed25519(ed25519_dalek::SigningKey),
}

/// Asks `source` for a key of `algorithm` and decodes it, checking that it is one.
pub(crate) fn generate(
    source: &dyn KeySource,
    algorithm: KeyAlgorithm,
) -> Result<PrivateKey, KeyError> {
    let der = source.generate_key(algorithm).map_err(|e| match e {
        SourceError::Unsupported(message) => KeyError::Unsupported { algorithm, message },
        SourceError::Failed(message) => KeyError::Generate { algorithm, message },
    })?;
    decode(&der, algorithm)
}

/// Decodes PKCS#8 DER as a key of `algorithm`.
fn decode(der: &[u8], algorithm: KeyAlgorithm) -> Result<PrivateKey, KeyError> {
    let mismatch = |reason: String| KeyError::Mismatch { algorithm, reason };
    match algorithm {
        KeyAlgorithm::Rsa(bits) => {
            let key = rsa::PrivateKey::from_pkcs8_der(der).map_err(|e| mismatch(e.to_string()))?;
            let actual = key.n().bit_width();
            if actual != bits {
                return Err(mismatch(format!("its modulus has {actual} bits")));
            }
            Ok(PrivateKey::Rsa(key))
        }
        KeyAlgorithm::Ecdsa(Curve::P256) => p256::SecretKey::from_pkcs8_der(der)
            .map(PrivateKey::P256)
            .map_err(|e| mismatch(e.to_string())),
        KeyAlgorithm::Ecdsa(Curve::P384) => p384::SecretKey::from_pkcs8_der(der)
            .map(PrivateKey::P384)
            .map_err(|e| mismatch(e.to_string())),
        KeyAlgorithm::Ecdsa(Curve::P521) => p521::SecretKey::from_pkcs8_der(der)
            .map(PrivateKey::P521)
            .map_err(|e| mismatch(e.to_string())),
        KeyAlgorithm::Ed25519 => ed25519_dalek::SigningKey::from_pkcs8_der(der)
            .map(PrivateKey::Ed25519)
            .map_err(|e| mismatch(e.to_string())),
    }
}

#[cfg(test)]
pub(crate) mod testing {
    //! A key source for tests: each algorithm's keys are generated once per process and then
    //! handed out in turn from a small pool, so tests stay fast (also under wasm) while two keys of a
    //! certificate set still differ.

    use std::cell::Cell;
    use std::collections::HashMap;
    use std::sync::Mutex;

    use super::{KeyAlgorithm, KeySource, NativeKeys, SourceError};

    /// How many distinct keys per algorithm the pool holds.
    const POOL: usize = 2;

    static CACHE: Mutex<Option<HashMap<KeyAlgorithm, Vec<Vec<u8>>>>> = Mutex::new(None);

    thread_local! {
        /// Per test thread, so that one test's consecutive keys differ whatever other
        /// tests take meanwhile.
        static NEXT: Cell<usize> = const { Cell::new(0) };
    }

    /// Hands out pooled keys; see the module docs.
    pub(crate) struct PooledKeys;

    impl KeySource for PooledKeys {
        fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
            let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
            let pool = cache
                .get_or_insert_with(HashMap::new)
                .entry(algorithm)
                .or_default();
            while pool.len() < POOL {
                pool.push(NativeKeys.generate_key(algorithm)?);
            }
            let next = NEXT.with(|n| n.replace(n.get() + 1));
            Ok(pool[next % POOL].clone())
        }
    }

    /// A key source that always fails, to prove nothing is generated.
    pub(crate) struct NoKeys;

    impl KeySource for NoKeys {
        fn generate_key(&self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
            Err(SourceError::Failed(format!(
                "no key may be generated here, asked for {algorithm}"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testing::PooledKeys;
    use super::*;

    #[test]
    fn a_key_of_another_size_than_requested_is_refused() {
        struct WrongSize;
        impl KeySource for WrongSize {
            fn generate_key(&self, _: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
                PooledKeys.generate_key(KeyAlgorithm::Rsa(2048))
            }
        }
        let err = generate(&WrongSize, KeyAlgorithm::Rsa(3072)).err();
        assert!(matches!(err, Some(KeyError::Mismatch { .. })), "{err:?}");
    }

    #[test]
    fn a_key_of_another_algorithm_than_requested_is_refused() {
        /// Answers every request with a key of `0`.
        struct Always(KeyAlgorithm);
        impl KeySource for Always {
            fn generate_key(&self, _: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
                PooledKeys.generate_key(self.0)
            }
        }
        let ed = Always(KeyAlgorithm::Ed25519);
        assert!(
            generate(&ed, KeyAlgorithm::Ed25519).is_ok(),
            "the valid row: the key asked for"
        );
        let cases = [
            (KeyAlgorithm::Ed25519, KeyAlgorithm::Rsa(2048), ""),
            (KeyAlgorithm::Ed25519, KeyAlgorithm::Ecdsa(Curve::P256), ""),
            (
                KeyAlgorithm::Rsa(2048),
                KeyAlgorithm::Rsa(3072),
                "its modulus has 2048 bits",
            ),
            (
                KeyAlgorithm::Ecdsa(Curve::P256),
                KeyAlgorithm::Ecdsa(Curve::P384),
                "",
            ),
        ];
        for (given, asked, fragment) in cases {
            match generate(&Always(given), asked) {
                Err(KeyError::Mismatch { algorithm, reason }) => {
                    assert_eq!(algorithm, asked);
                    assert!(reason.contains(fragment), "{given} for {asked}: {reason}");
                }
                Err(other) => panic!("{given} for {asked}: {other:?}"),
                Ok(_) => panic!("{given} for {asked}: the key was taken"),
            }
        }
    }

    #[test]
    fn native_keys_decode_as_the_requested_algorithm() {
        for algorithm in [
            KeyAlgorithm::Rsa(2048),
            KeyAlgorithm::Ecdsa(Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521),
            KeyAlgorithm::Ed25519,
        ] {
            assert!(generate(&PooledKeys, algorithm).is_ok(), "{algorithm}");
        }
    }

    #[test]
    fn native_keys_refuse_rsa_sizes_outside_the_contract_as_unsupported() {
        for bits in [1024, 2047, 8193] {
            assert_eq!(
                NativeKeys.generate_key(KeyAlgorithm::Rsa(bits)),
                Err(SourceError::Unsupported(format!(
                    "RSA key size {bits} is outside 2048..=8192 bits"
                ))),
                "{bits}"
            );
        }
    }

    #[test]
    fn an_unsupported_key_is_told_apart_from_a_failed_one() {
        let err = generate(&NativeKeys, KeyAlgorithm::Rsa(1024)).err();
        assert!(
            matches!(&err, Some(KeyError::Unsupported { algorithm: KeyAlgorithm::Rsa(1024), message })
                if message.contains("outside 2048..=8192")),
            "{err:?}"
        );
        struct Broken;
        impl KeySource for Broken {
            fn generate_key(&self, _: KeyAlgorithm) -> Result<Vec<u8>, SourceError> {
                Err(SourceError::Failed("the deadline stopped it".into()))
            }
        }
        let err = generate(&Broken, KeyAlgorithm::Ed25519).err();
        assert!(
            matches!(&err, Some(KeyError::Generate { message, .. }) if message == "the deadline stopped it"),
            "{err:?}"
        );
    }
}
