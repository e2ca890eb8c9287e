//! `rsa` (and the `pem` shape of `railsSecrets`): an RSA private key as PKCS#8 PEM
//! (`PRIVATE KEY`, 64-character lines, LF, trailing newline), as `openssl genrsa` writes it in
//! OpenSSL 3.

use pkcs8::EncodePrivateKey as _;

use super::GenerateError;
use crate::keys::{self, KeyAlgorithm, KeySource, PrivateKey};

/// A fresh RSA key of `bits` as PKCS#8 PEM.
pub(crate) fn generate(keys: &dyn KeySource, bits: u32) -> Result<String, GenerateError> {
    let key = keys::generate(keys, KeyAlgorithm::Rsa(bits))?;
    pkcs8_pem(&key)
}

/// The PKCS#8 PEM of a key.
pub(crate) fn pkcs8_pem(key: &PrivateKey) -> Result<String, GenerateError> {
    let lf = pkcs8::LineEnding::LF;
    let pem = match key {
        PrivateKey::Rsa(k) => k.to_pkcs8_pem(lf),
        PrivateKey::P256(k) => k.to_pkcs8_pem(lf),
        PrivateKey::P384(k) => k.to_pkcs8_pem(lf),
        PrivateKey::P521(k) => k.to_pkcs8_pem(lf),
        PrivateKey::Ed25519(k) => k.to_pkcs8_pem(lf),
    }
    .map_err(|e| GenerateError::encode("PKCS#8 key", e))?;
    Ok(pem.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::testing::PooledKeys;

    #[test]
    fn an_rsa_key_is_pkcs8_pem_in_64_character_lines() {
        let pem = generate(&PooledKeys, 2048).expect("generates");
        assert!(pem.starts_with("-----BEGIN PRIVATE KEY-----\n"));
        assert!(pem.ends_with("-----END PRIVATE KEY-----\n"));
        let body: Vec<&str> = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let (last, full) = body.split_last().expect("has a body");
        assert!(full.iter().all(|l| l.len() == 64));
        assert!(last.len() <= 64);
        let key = <rsa::PrivateKey as pkcs8::DecodePrivateKey>::from_pkcs8_pem(&pem);
        assert!(key.is_ok());
    }
}
