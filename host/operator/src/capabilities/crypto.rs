//! The `crypto` import: native key generation, returned as PKCS#8 DER.
//!
//! Generation runs on tokio's blocking pool: RSA-8192 takes seconds, and the guest is
//! blocked in the call anyway.

use ed25519_dalek::pkcs8::EncodePrivateKey as _;
use p256::elliptic_curve::Generate as _;

use crate::bindings::crypto::{Curve, Host, KeyAlgorithm};

/// The smallest and largest RSA modulus the host generates.
pub const RSA_BITS: std::ops::RangeInclusive<u32> = 2048..=8192;

/// The crypto capability (stateless: randomness comes from the OS).
#[derive(Debug, Clone, Copy, Default)]
pub struct CryptoCtx;

/// Why a key was not generated.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The RSA size is outside 2048..=8192.
    #[error("RSA key size {0} is outside {min}..={max} bits", min = RSA_BITS.start(), max = RSA_BITS.end())]
    RsaSize(u32),
    /// The underlying library failed.
    #[error("{algorithm} key generation failed: {message}")]
    Generate {
        algorithm: &'static str,
        message: String,
    },
    /// The blocking task did not finish.
    #[error("key generation task failed: {0}")]
    Task(#[from] tokio::task::JoinError),
}

impl Host for CryptoCtx {
    async fn generate_key(&mut self, algorithm: KeyAlgorithm) -> Result<Vec<u8>, String> {
        let result = tokio::task::spawn_blocking(move || generate_key(algorithm)).await;
        result
            .map_err(KeyError::from)
            .and_then(|r| r)
            .map_err(|e| e.to_string())
    }
}

/// Generates a private key for `algorithm` as PKCS#8 DER.
pub fn generate_key(algorithm: KeyAlgorithm) -> Result<Vec<u8>, KeyError> {
    let failed = |algorithm: &'static str| {
        move |e: &dyn std::fmt::Display| KeyError::Generate {
            algorithm,
            message: e.to_string(),
        }
    };
    let mut rng = rand::rng();
    match algorithm {
        KeyAlgorithm::Rsa(bits) => {
            if !RSA_BITS.contains(&bits) {
                return Err(KeyError::RsaSize(bits));
            }
            let key =
                rsa::PrivateKey::new(&mut rng, bits as usize).map_err(|e| failed("RSA")(&e))?;
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| failed("RSA")(&e))?
                .as_bytes()
                .to_vec())
        }
        KeyAlgorithm::Ecdsa(Curve::P256) => {
            let key = p256::SecretKey::generate_from_rng(&mut rng);
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| failed("ECDSA P-256")(&e))?
                .as_bytes()
                .to_vec())
        }
        KeyAlgorithm::Ecdsa(Curve::P384) => {
            let key = p384::SecretKey::generate_from_rng(&mut rng);
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| failed("ECDSA P-384")(&e))?
                .as_bytes()
                .to_vec())
        }
        KeyAlgorithm::Ecdsa(Curve::P521) => {
            let key = p521::SecretKey::generate_from_rng(&mut rng);
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| failed("ECDSA P-521")(&e))?
                .as_bytes()
                .to_vec())
        }
        KeyAlgorithm::Ed25519 => {
            let key = ed25519_dalek::SigningKey::generate(&mut rng);
            Ok(key
                .to_pkcs8_der()
                .map_err(|e| failed("Ed25519")(&e))?
                .as_bytes()
                .to_vec())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rsa::traits::PublicKeyParts as _;

    #[test]
    fn every_algorithm_yields_a_pkcs8_key_of_its_kind() {
        let rsa = generate_key(KeyAlgorithm::Rsa(2049)).expect("odd RSA sizes are supported");
        let key = rsa::PrivateKey::from_pkcs8_der(&rsa).expect("RSA PKCS#8");
        assert_eq!(key.n().bit_width(), 2049);
        p256::SecretKey::from_pkcs8_der(
            &generate_key(KeyAlgorithm::Ecdsa(Curve::P256)).expect("P-256"),
        )
        .expect("P-256 PKCS#8");
        p384::SecretKey::from_pkcs8_der(
            &generate_key(KeyAlgorithm::Ecdsa(Curve::P384)).expect("P-384"),
        )
        .expect("P-384 PKCS#8");
        p521::SecretKey::from_pkcs8_der(
            &generate_key(KeyAlgorithm::Ecdsa(Curve::P521)).expect("P-521"),
        )
        .expect("P-521 PKCS#8");
        use ed25519_dalek::pkcs8::DecodePrivateKey as _;
        ed25519_dalek::SigningKey::from_pkcs8_der(
            &generate_key(KeyAlgorithm::Ed25519).expect("Ed25519"),
        )
        .expect("Ed25519 PKCS#8");
    }

    #[test]
    fn rsa_sizes_outside_2048_to_8192_are_refused_naming_the_size() {
        for bits in [1024, 2047, 8193] {
            let err = generate_key(KeyAlgorithm::Rsa(bits)).expect_err("out of range");
            assert_eq!(
                err.to_string(),
                format!("RSA key size {bits} is outside 2048..=8192 bits")
            );
        }
    }
}
