//! Private keys from the host's `crypto` capability (contract 1.1): [`generate`] returns a
//! fresh key as PKCS#8 DER.
//!
//! Key generation is the host's: RSA takes seconds inside wasm against a fraction of that
//! natively, so in wasm32 [`generate`] calls the WIT `crypto.generate` import. Natively
//! (unit tests against `FakeCluster`) it calls `wasm-operator-keygen` in-process, the very
//! code the host serves the import with, so a test sees real keys of the same shape. With
//! the `testing` feature (dev-dependencies only), and in the SDK's own tests, a wasm32
//! build does the same, so unit tests run under wasmtime without a host.
//!
//! Everything else about a key (certificates, PEM, public halves) stays with the caller.
//! A key is a secret: never log it or write it into an object's status.
//!
//! ```no_run
//! use wasm_operator_sdk::crypto::{self, KeyAlgorithm};
//! # fn f() -> Result<(), crypto::KeyError> {
//! let pkcs8_der = crypto::generate(KeyAlgorithm::Rsa(2048))?;
//! # let _ = pkcs8_der; Ok(()) }
//! ```

/// An elliptic curve for ECDSA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// NIST P-256.
    P256,
    /// NIST P-384.
    P384,
    /// NIST P-521.
    P521,
}

/// The key to generate (the WIT `crypto.key-algorithm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyAlgorithm {
    /// RSA with this modulus size in bits: 2048 to 8192, odd sizes included; e = 65537.
    Rsa(u32),
    /// ECDSA on a NIST curve.
    Ecdsa(Curve),
    /// Ed25519.
    Ed25519,
}

/// Why no key was generated (the WIT `crypto.key-error`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The algorithm or size is not supported (e.g. RSA-1024); the message names it.
    #[error("unsupported key: {0}")]
    Unsupported(String),
    /// Generation itself failed, or the pass's deadline stopped it.
    #[error("key generation failed: {0}")]
    Failed(String),
}

/// A fresh private key of `algorithm` as PKCS#8 DER (RFC 5208 / 5958; RFC 8410 for
/// Ed25519).
pub fn generate(algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
    imp::generate(algorithm)
}

#[cfg(all(target_arch = "wasm32", not(any(test, feature = "testing"))))]
mod imp {
    use super::{KeyAlgorithm, KeyError};
    use crate::wit::bindings::wasm_operator::plugin::crypto as wit;

    /// The host's `crypto.generate`; the records convert in `crate::wit`.
    pub(super) fn generate(algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
        wit::generate(algorithm.into()).map_err(Into::into)
    }
}

#[cfg(any(not(target_arch = "wasm32"), test, feature = "testing"))]
mod imp {
    use wasm_operator_keygen as keygen;

    use super::{Curve, KeyAlgorithm, KeyError};

    /// As the host's import does: an out-of-range RSA size is unsupported, anything else
    /// a failure.
    pub(super) fn generate(algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
        let algorithm = match algorithm {
            KeyAlgorithm::Rsa(bits) => keygen::KeyAlgorithm::Rsa(bits),
            KeyAlgorithm::Ecdsa(Curve::P256) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P256),
            KeyAlgorithm::Ecdsa(Curve::P384) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P384),
            KeyAlgorithm::Ecdsa(Curve::P521) => keygen::KeyAlgorithm::Ecdsa(keygen::Curve::P521),
            KeyAlgorithm::Ed25519 => keygen::KeyAlgorithm::Ed25519,
        };
        keygen::generate_pkcs8(algorithm).map_err(|e| match e {
            keygen::KeyError::RsaSize(_) => KeyError::Unsupported(e.to_string()),
            _ => KeyError::Failed(e.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The algorithm identifier OID's DER (after its tag and length) inside a PKCS#8
    /// document's `privateKeyAlgorithm`.
    const RSA_ENCRYPTION: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01];
    const EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
    const ED25519: &[u8] = &[0x2b, 0x65, 0x70];

    fn holds(der: &[u8], oid: &[u8]) -> bool {
        der.windows(oid.len()).any(|w| w == oid)
    }

    #[test]
    fn each_algorithm_yields_a_pkcs8_document_naming_it() {
        let cases = [
            ("RSA-2048", KeyAlgorithm::Rsa(2048), RSA_ENCRYPTION),
            (
                "ECDSA P-256",
                KeyAlgorithm::Ecdsa(Curve::P256),
                EC_PUBLIC_KEY,
            ),
            (
                "ECDSA P-384",
                KeyAlgorithm::Ecdsa(Curve::P384),
                EC_PUBLIC_KEY,
            ),
            (
                "ECDSA P-521",
                KeyAlgorithm::Ecdsa(Curve::P521),
                EC_PUBLIC_KEY,
            ),
            ("Ed25519", KeyAlgorithm::Ed25519, ED25519),
        ];
        for (case, algorithm, oid) in cases {
            let der = generate(algorithm).unwrap_or_else(|e| panic!("{case}: {e}"));
            // A DER SEQUENCE with a long-form or short-form length, version 0 first.
            assert_eq!(der[0], 0x30, "{case}: not a SEQUENCE");
            assert!(holds(&der, oid), "{case}: the algorithm OID is missing");
        }
    }

    #[test]
    fn two_keys_of_one_algorithm_differ() {
        let a = generate(KeyAlgorithm::Ecdsa(Curve::P256)).expect("a key");
        let b = generate(KeyAlgorithm::Ecdsa(Curve::P256)).expect("a key");
        assert_ne!(a, b);
    }

    #[test]
    fn an_rsa_size_out_of_range_is_unsupported_and_named() {
        let err = generate(KeyAlgorithm::Rsa(1024)).expect_err("too small");
        assert_eq!(
            err,
            KeyError::Unsupported("RSA key size 1024 is outside 2048..=8192 bits".into())
        );
        assert_eq!(
            err.to_string(),
            "unsupported key: RSA key size 1024 is outside 2048..=8192 bits"
        );
    }
}
