//! ServiceAccount tokens whose signature, expiry and audience were checked, remembered
//! until they expire, so a client's every request is not another ECDSA verification (about
//! as costly as the rest of an apply). kube-apiserver caches token authentication the
//! same way. What the cache keeps is what the token says (the ServiceAccount's namespace,
//! name and uid); that the ServiceAccount still exists with that uid is checked on every
//! request, so deleting it still refuses its tokens at once. Keyed by the SHA-256 of the
//! token, not the token.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

/// At most this many tokens are remembered; a full cache is emptied.
const CAPACITY: usize = 4096;

/// Who a verified token names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    /// The token's `exp` (seconds since the epoch).
    pub expires: i64,
}

/// The verified tokens.
#[derive(Default)]
pub(crate) struct VerifiedTokens {
    entries: Mutex<HashMap<[u8; 32], Claims>>,
}

impl VerifiedTokens {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Claims>> {
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What `token` names, when it was verified before and has not expired by `now`.
    pub(crate) fn get(&self, token: &str, now: i64) -> Option<Claims> {
        let key = digest(token);
        let mut entries = self.entries();
        match entries.get(&key) {
            Some(claims) if claims.expires > now => Some(claims.clone()),
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// Remembers a verified `token`.
    pub(crate) fn insert(&self, token: &str, claims: Claims) {
        let mut entries = self.entries();
        if entries.len() >= CAPACITY {
            entries.clear();
        }
        entries.insert(digest(token), claims);
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claims(expires: i64) -> Claims {
        Claims {
            namespace: "ns".into(),
            name: "robot".into(),
            uid: "u".into(),
            expires,
        }
    }

    #[test]
    fn a_token_is_remembered_until_it_expires_and_a_full_cache_starts_over() {
        let cache = VerifiedTokens::default();
        cache.insert("a.b.c", claims(100));
        assert_eq!(cache.get("a.b.c", 99), Some(claims(100)));
        assert_eq!(cache.get("a.b.d", 99), None, "another token");
        assert_eq!(cache.get("a.b.c", 100), None, "expired");
        assert_eq!(cache.get("a.b.c", 50), None, "an expired entry is dropped");
        for i in 0..CAPACITY {
            cache.insert(&format!("t{i}"), claims(100));
        }
        cache.insert("last", claims(100));
        assert_eq!(cache.entries().len(), 1, "emptied when full");
        assert_eq!(cache.get("last", 0), Some(claims(100)));
    }
}
