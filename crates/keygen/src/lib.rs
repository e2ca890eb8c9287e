//! Private keys as PKCS#8 DER: what the host's `crypto` capability serves guests, and what
//! secretgen's native key source uses, from one implementation.
//!
//! - RSA of any size from [`MIN_RSA_BITS`] to [`MAX_RSA_BITS`] (odd sizes included),
//!   e = 65537; natively each prime is searched on all cores ([`rsa_key`]).
//! - ECDSA on P-256, P-384, P-521 (SEC 1 keys in PKCS#8).
//! - Ed25519 (RFC 8410).
//!
//! Randomness is rand's thread-local CSPRNG, seeded by the OS (wasi:random in wasm32).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use p256::elliptic_curve::Generate as _;

#[cfg(not(target_arch = "wasm32"))]
mod multicore_rsa;

/// An elliptic curve for ECDSA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Curve {
    /// NIST P-256 (secp256r1).
    P256,
    /// NIST P-384 (secp384r1).
    P384,
    /// NIST P-521 (secp521r1).
    P521,
}

/// The private key to generate; mirrors the WIT `crypto.key-algorithm`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyAlgorithm {
    /// RSA with this modulus size in bits (2048 to 8192, odd sizes included).
    Rsa(u32),
    /// ECDSA on a NIST curve.
    Ecdsa(Curve),
    /// Ed25519.
    Ed25519,
}

impl fmt::Display for KeyAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Rsa(bits) => write!(f, "RSA {bits}"),
            Self::Ecdsa(Curve::P256) => f.write_str("ECDSA P-256"),
            Self::Ecdsa(Curve::P384) => f.write_str("ECDSA P-384"),
            Self::Ecdsa(Curve::P521) => f.write_str("ECDSA P-521"),
            Self::Ed25519 => f.write_str("Ed25519"),
        }
    }
}

/// The smallest RSA modulus generated.
pub const MIN_RSA_BITS: u32 = 2048;
/// The largest RSA modulus generated.
pub const MAX_RSA_BITS: u32 = 8192;

/// Why a key was not generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// The RSA size is outside [`MIN_RSA_BITS`]..=[`MAX_RSA_BITS`].
    #[error("RSA key size {0} is outside {MIN_RSA_BITS}..={MAX_RSA_BITS} bits")]
    RsaSize(u32),
    /// The caller gave up on the key (its cancel flag was set) before it was done.
    #[error("{algorithm} key generation was cancelled")]
    Cancelled { algorithm: KeyAlgorithm },
    /// The underlying library failed.
    #[error("{algorithm} key generation failed: {message}")]
    Generate {
        algorithm: KeyAlgorithm,
        message: String,
    },
}

/// A fresh private key of `algorithm` as PKCS#8 DER.
pub fn generate_pkcs8(algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
    generate_pkcs8_cancellable(algorithm, &AtomicBool::new(false))
}

/// [`generate_pkcs8`], giving up with [`KeyError::Cancelled`] soon after `cancel` is set:
/// an RSA prime search checks it at every candidate (natively; ECDSA and Ed25519 keys take
/// microseconds and are not interrupted).
pub fn generate_pkcs8_cancellable(
    algorithm: KeyAlgorithm,
    cancel: &AtomicBool,
) -> Result<Vec<u8>, KeyError> {
    use ::rsa::pkcs8::EncodePrivateKey as _;
    let failed = |e: &dyn fmt::Display| KeyError::Generate {
        algorithm,
        message: e.to_string(),
    };
    let mut rng = rand::rng();
    let der = match algorithm {
        KeyAlgorithm::Rsa(bits) => rsa_key_cancellable(bits, cancel)?.to_pkcs8_der(),
        KeyAlgorithm::Ecdsa(Curve::P256) => {
            p256::SecretKey::generate_from_rng(&mut rng).to_pkcs8_der()
        }
        KeyAlgorithm::Ecdsa(Curve::P384) => {
            p384::SecretKey::generate_from_rng(&mut rng).to_pkcs8_der()
        }
        KeyAlgorithm::Ecdsa(Curve::P521) => {
            p521::SecretKey::generate_from_rng(&mut rng).to_pkcs8_der()
        }
        KeyAlgorithm::Ed25519 => ed25519_dalek::SigningKey::generate(&mut rng).to_pkcs8_der(),
    };
    der.map(|doc| doc.as_bytes().to_vec())
        .map_err(|e| failed(&e))
}

/// A fresh RSA key whose modulus has exactly `bits` bits, e = 65537: natively with each
/// prime searched on all cores, in wasm32 (no threads) by rsa's own generator.
pub fn rsa_key(bits: u32) -> Result<::rsa::PrivateKey, KeyError> {
    rsa_key_cancellable(bits, &AtomicBool::new(false))
}

/// [`rsa_key`], giving up with [`KeyError::Cancelled`] soon after `cancel` is set (natively;
/// in wasm32 the flag is not looked at).
pub fn rsa_key_cancellable(bits: u32, cancel: &AtomicBool) -> Result<::rsa::PrivateKey, KeyError> {
    if !(MIN_RSA_BITS..=MAX_RSA_BITS).contains(&bits) {
        return Err(KeyError::RsaSize(bits));
    }
    let generated = {
        #[cfg(not(target_arch = "wasm32"))]
        {
            multicore_rsa::generate(bits, cancel)
        }
        #[cfg(target_arch = "wasm32")]
        {
            ::rsa::PrivateKey::new(&mut rand::rng(), bits as usize).map_err(|e| e.to_string())
        }
    };
    let algorithm = KeyAlgorithm::Rsa(bits);
    if cancel.load(Ordering::Relaxed) {
        return Err(KeyError::Cancelled { algorithm });
    }
    generated.map_err(|message| KeyError::Generate { algorithm, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_algorithm_yields_a_pkcs8_key_of_its_kind() {
        use ::rsa::pkcs8::DecodePrivateKey as _;
        use ::rsa::traits::PublicKeyParts as _;
        let der = generate_pkcs8(KeyAlgorithm::Rsa(2049)).expect("odd RSA sizes are supported");
        let key = ::rsa::PrivateKey::from_pkcs8_der(&der).expect("RSA PKCS#8");
        assert_eq!(key.n().bit_width(), 2049);
        for curve in [Curve::P256, Curve::P384, Curve::P521] {
            let der = generate_pkcs8(KeyAlgorithm::Ecdsa(curve)).expect("ECDSA");
            let parsed = match curve {
                Curve::P256 => p256::SecretKey::from_pkcs8_der(&der).map(|_| ()),
                Curve::P384 => p384::SecretKey::from_pkcs8_der(&der).map(|_| ()),
                Curve::P521 => p521::SecretKey::from_pkcs8_der(&der).map(|_| ()),
            };
            parsed.expect("ECDSA PKCS#8 of the curve");
        }
        let der = generate_pkcs8(KeyAlgorithm::Ed25519).expect("Ed25519");
        ed25519_dalek::SigningKey::from_pkcs8_der(&der).expect("Ed25519 PKCS#8");
    }

    #[test]
    fn rsa_sizes_outside_2048_to_8192_are_refused_naming_the_size() {
        for bits in [1024, 2047, 8193] {
            let err = generate_pkcs8(KeyAlgorithm::Rsa(bits)).expect_err("out of range");
            assert_eq!(
                err.to_string(),
                format!("RSA key size {bits} is outside 2048..=8192 bits")
            );
        }
    }
}
