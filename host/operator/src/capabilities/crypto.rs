//! The `crypto` import: native key generation, returned as PKCS#8 DER.
//!
//! Generation runs on tokio's blocking pool: RSA-8192 takes seconds, and the guest is
//! blocked in the call anyway. An RSA prime is searched on up to [`RSA_THREADS`] threads
//! (see [`rsa_key`]).

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
            let key = rsa_key(bits).map_err(|e| failed("RSA")(&e))?;
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

/// At most this many threads search for one RSA prime.
pub const RSA_THREADS: usize = 8;

/// How many times a pair of RSA primes is drawn before giving up; a draw is refused with a
/// probability of about 2/65537 (e divides p−1 or q−1).
const RSA_DRAWS: usize = 64;

/// An RSA private key whose modulus has exactly `bits` bits, e = 65537.
///
/// This is `rsa::PrivateKey::new` (rsa 0.10, two primes) with one change: each prime is
/// searched with `crypto_primes::multicore::sieve_and_find` on up to [`RSA_THREADS`] threads
/// instead of on one. Everything else is as rsa's own generator does it: the same sieve (a
/// random odd start with its top two bits set, so that the modulus has exactly `bits` bits),
/// the same test (`is_prime(Flavor::Any, _)`), the first prime of `bits / 2` bits and the
/// second of the rest, the key built by `PrivateKey::from_primes` (n = p·q,
/// d = e⁻¹ mod φ(n), validated, CRT values precomputed), and both primes drawn again when e
/// divides p−1 or q−1. The same code is `NativeKeys`' in guests/secretgen (src/keys/rsa_keygen.rs).
///
/// DECISION: the prime search, not p and q on a thread each: a prime's search time varies a
/// lot, so p and q on a thread each take the longer of two searches (about 1.5 times one on
/// average), while both threads on one search then on the other take about one.
fn rsa_key(bits: u32) -> Result<rsa::PrivateKey, String> {
    use crypto_primes::hazmat::{SetBits, SmallFactorsSieveFactory};
    use crypto_primes::{Flavor, is_prime, multicore};
    use rsa::BoxedUint;
    use rsa::traits::PublicKeyParts as _;

    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(RSA_THREADS);
    // A CSPRNG that can be forked per candidate, seeded from the thread-local one.
    let mut rng: rand::rngs::StdRng = rand::make_rng();
    let mut prime = |bits: u32| -> Result<BoxedUint, String> {
        let sieve = SmallFactorsSieveFactory::new(Flavor::Any, bits, SetBits::TwoMsb)
            .map_err(|e| e.to_string())?;
        multicore::sieve_and_find(
            &mut rng,
            sieve,
            |_rng, candidate| is_prime(Flavor::Any, candidate),
            threads,
        )
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("the sieve ran out of {bits}-bit candidates"))
    };
    for _ in 0..RSA_DRAWS {
        let p = prime(bits / 2)?;
        let q = prime(bits - bits / 2)?;
        match rsa::PrivateKey::from_primes(vec![p, q], BoxedUint::from(65537u64)) {
            Ok(key) if key.n().bit_width() == bits => return Ok(key),
            Ok(key) => {
                return Err(format!(
                    "the primes make a {}-bit modulus, not {bits} bits",
                    key.n().bit_width()
                ));
            }
            // e divides p−1 or q−1 (or p = q): rsa's own generator draws both again too.
            Err(rsa::Error::InvalidPrime) => continue,
            Err(e) => return Err(e.to_string()),
        }
    }
    Err(format!("no valid pair of primes in {RSA_DRAWS} draws"))
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
    fn rsa_keys_have_the_exact_size_and_standard_parameters() {
        use rsa::pkcs8::DecodePrivateKey as _;
        use rsa::traits::PrivateKeyParts as _;
        for bits in [2048, 2049] {
            let der = generate_key(KeyAlgorithm::Rsa(bits)).expect("generates");
            let key = rsa::PrivateKey::from_pkcs8_der(&der).expect("RSA PKCS#8");
            assert_eq!(key.n().bit_width(), bits, "modulus bits");
            assert_eq!(key.e(), &rsa::BoxedUint::from(65537u64));
            let [p, q] = key.primes() else {
                panic!("{} primes", key.primes().len())
            };
            assert_eq!(p.bit_width(), bits / 2, "p bits");
            assert_eq!(q.bit_width(), bits - bits / 2, "q bits");
            assert_ne!(p, q);
            // p·q = n, multiplied at both factors' width so that it cannot overflow.
            let one = rsa::BoxedUint::one_with_precision(p.bits_precision() + q.bits_precision());
            assert_eq!(&(&one * &**p) * &**q, **key.n(), "p·q = n");
            // Πprimes = n, distinct primes, d·e = 1 mod p−1 and mod q−1.
            key.validate().expect("valid");
            assert!(key.dp().is_some() && key.dq().is_some() && key.qinv().is_some());
        }
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
