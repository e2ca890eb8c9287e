//! Native RSA key generation with each prime's search spread over the cores.
//!
//! This is `rsa::PrivateKey::new` (rsa 0.10, two primes, e = 65537) with one change: each
//! prime is searched with `crypto_primes::multicore::sieve_and_find` instead of on one thread.
//! Everything else is as rsa's own generator does it: the candidates come from the same
//! sieve (a random odd start with its top two bits set, so that the modulus has exactly the
//! requested bits), a candidate is accepted by the same test (`is_prime(Flavor::Any, _)`),
//! the first prime has `bits / 2` bits and the second the rest, the key is built by
//! `PrivateKey::from_primes` (n = p·q, d = e⁻¹ mod φ(n), validated, CRT values
//! precomputed), and when e divides p−1 or q−1 both primes are drawn again.
//!
//! DECISION: the prime search, not p and q on a thread each: a prime's search time varies a
//! lot, so two primes on two threads take the longer of the two searches (about 1.5 times one
//! on average), while two threads on one search then on the other take about one.

use std::sync::atomic::{AtomicBool, Ordering};

use crypto_primes::hazmat::{SetBits, SmallFactorsSieveFactory};
use crypto_primes::{Flavor, is_prime, multicore};
use rsa::BoxedUint;
use rsa::traits::PublicKeyParts as _;

/// The public exponent, as `rsa::PrivateKey::new` uses it.
const EXPONENT: u64 = 65537;

/// At most this many threads search for one prime.
const MAX_THREADS: usize = 8;

/// How many times a pair of primes is drawn before giving up; a draw is refused with a
/// probability of about 2/65537 (e divides p−1 or q−1).
const MAX_DRAWS: usize = 64;

/// Generates an RSA private key whose modulus has exactly `bits` bits, giving up (with an
/// error the caller tells apart by `cancel`) soon after `cancel` is set.
pub(super) fn generate(bits: u32, cancel: &AtomicBool) -> Result<rsa::PrivateKey, String> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_THREADS);
    // A CSPRNG that can be forked per candidate, seeded from the thread-local one.
    let mut rng: rand::rngs::StdRng = rand::make_rng();
    let (p_bits, q_bits) = (bits / 2, bits - bits / 2);
    for _ in 0..MAX_DRAWS {
        let p = prime(&mut rng, p_bits, threads, cancel)?;
        let q = prime(&mut rng, q_bits, threads, cancel)?;
        match rsa::PrivateKey::from_primes(vec![p, q], BoxedUint::from(EXPONENT)) {
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
    Err(format!(
        "no valid pair of primes in {MAX_DRAWS} draws for RSA {bits}"
    ))
}

/// A random prime of exactly `bits` bits whose two top bits are set.
///
/// Once `cancel` is set every further candidate is taken, which ends the search at once on
/// every thread; the candidate is then refused here rather than returned.
fn prime(
    rng: &mut rand::rngs::StdRng,
    bits: u32,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<BoxedUint, String> {
    let cancelled = || cancel.load(Ordering::Relaxed);
    let sieve = SmallFactorsSieveFactory::new(Flavor::Any, bits, SetBits::TwoMsb)
        .map_err(|e| e.to_string())?;
    let found = multicore::sieve_and_find(
        rng,
        sieve,
        |_rng, candidate| cancelled() || is_prime(Flavor::Any, candidate),
        threads,
    )
    .map_err(|e| e.to_string())?;
    if cancelled() {
        return Err("cancelled".into());
    }
    found.ok_or_else(|| format!("the sieve ran out of {bits}-bit candidates"))
}

#[cfg(test)]
mod tests {
    use crypto_bigint::ConcatenatingMul as _;
    use rsa::pkcs1::EncodeRsaPrivateKey as _;
    use rsa::traits::{PrivateKeyParts as _, PublicKeyParts as _};

    use super::*;

    fn uint(bytes: &[u8]) -> BoxedUint {
        BoxedUint::from_be_slice_vartime(bytes)
    }

    /// Checks the key as its PKCS#1 encoding carries it: n = p·q with exactly `bits` bits,
    /// p and q of `bits / 2` and the remaining bits, distinct and prime, e = 65537,
    /// d = e⁻¹ mod (p−1)(q−1), and the CRT values dP = d mod (p−1), dQ = d mod (q−1),
    /// qInv = q⁻¹ mod p.
    fn check(bits: u32) {
        let key = generate(bits, &AtomicBool::new(false)).expect("generates");
        let der = key.to_pkcs1_der().expect("PKCS#1");
        let parsed = pkcs1::RsaPrivateKey::try_from(der.as_bytes()).expect("parses");
        let [n, e, d, p, q, dp, dq, qinv] = [
            parsed.modulus,
            parsed.public_exponent,
            parsed.private_exponent,
            parsed.prime1,
            parsed.prime2,
            parsed.exponent1,
            parsed.exponent2,
            parsed.coefficient,
        ]
        .map(|u: pkcs1::UintRef<'_>| uint(u.as_bytes()));
        assert!(parsed.other_prime_infos.is_none(), "two primes");

        assert_eq!(n.bit_width(), bits, "modulus bits");
        assert_eq!(p.bit_width(), bits / 2, "p bits");
        assert_eq!(q.bit_width(), bits - bits / 2, "q bits");
        assert_ne!(p, q);
        assert!(is_prime(Flavor::Any, &p) && is_prime(Flavor::Any, &q));
        assert_eq!(p.concatenating_mul(&q), n, "p·q = n");
        assert_eq!(e, BoxedUint::from(EXPONENT));

        let one = BoxedUint::one();
        let (p1, q1) = (p.wrapping_sub(&one), q.wrapping_sub(&one));
        let phi = p1.concatenating_mul(&q1);
        let nz = |x: &BoxedUint| crypto_bigint::NonZero::new(x.clone()).expect("non-zero");
        // (BoxedUint compares by value whatever the widths.)
        assert_eq!(
            d.concatenating_mul(&e).rem(&nz(&phi)),
            one,
            "e·d = 1 mod φ(n)"
        );
        assert!(
            d < phi,
            "d is reduced mod φ(n), as rsa's own generator makes it"
        );
        assert_eq!(dp, d.rem(&nz(&p1)), "dP");
        assert_eq!(dq, d.rem(&nz(&q1)), "dQ");
        assert_eq!(qinv.concatenating_mul(&q).rem(&nz(&p)), one, "qInv");
        assert!(qinv < p);

        // The typed key agrees, and its own validation passes.
        assert_eq!(key.n().as_ref(), &n);
        assert_eq!(key.d(), &d);
        key.validate().expect("valid");
    }

    #[test]
    fn a_cancelled_search_gives_up() {
        let cancel = AtomicBool::new(true);
        assert_eq!(generate(8192, &cancel).map(drop), Err("cancelled".into()));
    }

    #[test]
    fn keys_have_the_exact_size_and_standard_parameters() {
        check(2048);
    }

    #[test]
    fn odd_sizes_split_the_bits_as_rsa_does() {
        check(2049);
    }

    #[test]
    fn a_key_signs_and_verifies() {
        use rsa::pkcs1v15::{SigningKey, VerifyingKey};
        use rsa::signature::{Keypair as _, SignatureEncoding as _, Signer as _, Verifier as _};
        let key = generate(2048, &AtomicBool::new(false)).expect("generates");
        let signing = SigningKey::<sha2::Sha256>::new(key);
        let signature = signing.sign(b"chart default");
        let verifying: VerifyingKey<sha2::Sha256> = signing.verifying_key();
        assert_eq!(signature.to_bytes().len(), 256);
        verifying
            .verify(b"chart default", &signature)
            .expect("verifies");
    }
}
