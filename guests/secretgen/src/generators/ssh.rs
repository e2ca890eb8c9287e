//! `sshHostKeys`: the files of `ssh-keygen -A` (OpenSSH 10.0p2): `ssh_host_rsa_key` (RSA
//! 3072), `ssh_host_ecdsa_key` (ECDSA P-256) and `ssh_host_ed25519_key`, each with its `.pub`.
//!
//! Private keys are `OPENSSH PRIVATE KEY` with cipher and KDF `none`, base64 in lines of 70
//! characters, LF, trailing newline; public keys are `<algorithm> <base64>` and a newline.
//! Unlike the Job's, neither carries a comment (the Job's was `<user>@<pod>`, an accepted
//! difference of the shape test).

use ssh_key::LineEnding;
use ssh_key::private::{EcdsaKeypair, Ed25519Keypair, KeypairData, PrivateKey, RsaKeypair};

use super::GenerateError;
use crate::keys::{self, Curve, KeyAlgorithm, KeySource, PrivateKey as Key};

/// One host key type; each is one data-bearing unit of two keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostKey {
    Rsa,
    Ecdsa,
    Ed25519,
}

impl HostKey {
    /// The types `ssh-keygen -A` makes, in its order.
    pub(crate) const ALL: [Self; 3] = [Self::Rsa, Self::Ecdsa, Self::Ed25519];

    /// The private key's file name, which is also the unit's name.
    pub(crate) fn private_file(self) -> &'static str {
        match self {
            Self::Rsa => "ssh_host_rsa_key",
            Self::Ecdsa => "ssh_host_ecdsa_key",
            Self::Ed25519 => "ssh_host_ed25519_key",
        }
    }

    /// The public key's file name.
    pub(crate) fn public_file(self) -> String {
        format!("{}.pub", self.private_file())
    }

    fn algorithm(self) -> KeyAlgorithm {
        match self {
            Self::Rsa => KeyAlgorithm::Rsa(3072),
            Self::Ecdsa => KeyAlgorithm::Ecdsa(Curve::P256),
            Self::Ed25519 => KeyAlgorithm::Ed25519,
        }
    }
}

/// A generated host key: the private and the public file.
pub(crate) struct HostKeyFiles {
    pub(crate) private: String,
    pub(crate) public: String,
}

/// Generates one host key.
pub(crate) fn generate(keys: &dyn KeySource, kind: HostKey) -> Result<HostKeyFiles, GenerateError> {
    let encode = |e: ssh_key::Error| GenerateError::encode("OpenSSH key", e);
    let data = match keys::generate(keys, kind.algorithm())? {
        Key::Rsa(key) => KeypairData::from(RsaKeypair::try_from(key).map_err(encode)?),
        Key::P256(key) => KeypairData::from(EcdsaKeypair::NistP256 {
            public: key.public_key().into(),
            private: key.into(),
        }),
        Key::Ed25519(key) => KeypairData::from(Ed25519Keypair::from(key)),
        Key::P384(_) | Key::P521(_) => {
            return Err(GenerateError::encode("OpenSSH key", "unexpected curve"));
        }
    };
    let private = PrivateKey::new(data, "").map_err(encode)?;
    let private_pem = private.to_openssh(LineEnding::LF).map_err(encode)?;
    let public = private.public_key().to_openssh().map_err(encode)?;
    Ok(HostKeyFiles {
        private: private_pem.to_string(),
        public: format!("{public}\n"),
    })
}

#[cfg(test)]
mod tests {
    use ssh_key::{Algorithm, Cipher, EcdsaCurve, HashAlg, Kdf, PublicKey};

    use super::*;
    use crate::keys::testing::PooledKeys;

    #[test]
    fn host_keys_are_what_ssh_keygen_a_makes_without_comments() {
        let cases = [
            (
                HostKey::Rsa,
                Algorithm::Rsa { hash: None },
                "ssh-rsa ",
                3072,
            ),
            (
                HostKey::Ecdsa,
                Algorithm::Ecdsa {
                    curve: EcdsaCurve::NistP256,
                },
                "ecdsa-sha2-nistp256 ",
                256,
            ),
            (HostKey::Ed25519, Algorithm::Ed25519, "ssh-ed25519 ", 256),
        ];
        for (kind, algorithm, prefix, bits) in cases {
            let files = generate(&PooledKeys, kind).expect("generates");
            let private = PrivateKey::from_openssh(&files.private).expect("parses");
            assert_eq!(private.algorithm(), algorithm, "{kind:?}");
            assert_eq!(private.cipher(), Cipher::None);
            assert_eq!(private.kdf(), &Kdf::None);
            assert!(private.comment().is_empty());

            let lines: Vec<&str> = files.private.lines().collect();
            assert_eq!(lines.first(), Some(&"-----BEGIN OPENSSH PRIVATE KEY-----"));
            assert_eq!(lines.last(), Some(&"-----END OPENSSH PRIVATE KEY-----"));
            let body = &lines[1..lines.len() - 1];
            let (last, full) = body.split_last().expect("body");
            assert!(full.iter().all(|l| l.len() == 70), "{kind:?}");
            assert!(last.len() <= 70);
            assert!(files.private.ends_with("-----\n"));

            assert!(files.public.starts_with(prefix), "{kind:?}");
            assert!(files.public.ends_with('\n'));
            assert_eq!(files.public.trim_end().split(' ').count(), 2, "no comment");
            let public = PublicKey::from_openssh(&files.public).expect("parses");
            assert_eq!(public.key_data(), private.public_key().key_data());
            assert_eq!(
                public.fingerprint(HashAlg::Sha256),
                private.fingerprint(HashAlg::Sha256)
            );
            if let Some(rsa) = public.key_data().rsa() {
                let n = rsa.n().as_positive_bytes().expect("modulus");
                assert_eq!(n.len() * 8, bits);
            }
        }
    }
}
