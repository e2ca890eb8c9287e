//! The sealed artifact format: `MAGIC`, an HMAC-SHA256 tag, then wasmtime's artifact.
//!
//! The tag is HMAC-SHA256, under the cache key, of a domain string, the engine key, the
//! component's sha256 and the SHA-256 of the artifact. Binding the engine key and the
//! sha256 means a genuine artifact of another component (or another engine) copied under
//! this name does not verify.

use sha2::{Digest, Sha256};

use super::key::CacheKey;

/// The first bytes of a sealed artifact (format version 1).
const MAGIC: &[u8; 8] = b"WOPSEAL1";
/// The length of the tag.
const TAG_LEN: usize = 32;
/// The length of what precedes the artifact.
pub(super) const HEADER_LEN: usize = MAGIC.len() + TAG_LEN;
/// Separates the message of a tag from any other use of the key.
const DOMAIN: &[u8] = b"wasm-operator precompiled artifact v1\0";

/// What an artifact is for, besides its bytes: both are covered by its tag.
pub(super) struct Context<'a> {
    /// The engine's precompile-compatibility key, as in the file name.
    pub engine_key: &'a str,
    /// The hex sha256 of the component the artifact was compiled from.
    pub sha256: &'a str,
}

/// The message the tag of `artifact` is computed over.
fn message(context: &Context<'_>, artifact: &[u8]) -> Vec<u8> {
    let mut message = Vec::with_capacity(DOMAIN.len() + 128);
    message.extend_from_slice(DOMAIN);
    message.extend_from_slice(context.engine_key.as_bytes());
    message.push(0);
    message.extend_from_slice(context.sha256.as_bytes());
    message.push(0);
    message.extend_from_slice(&Sha256::digest(artifact));
    message
}

/// The header that seals `artifact`: written before it.
pub(super) fn header(key: &CacheKey, context: &Context<'_>, artifact: &[u8]) -> [u8; HEADER_LEN] {
    let mut header = [0; HEADER_LEN];
    header[..MAGIC.len()].copy_from_slice(MAGIC);
    header[MAGIC.len()..].copy_from_slice(&key.tag(&message(context, artifact)));
    header
}

/// The artifact in `file` when its tag verifies; otherwise why not.
/// Why [`open`] refuses an artifact sealed under another key (or tampered with).
pub(super) const TAG_MISMATCH: &str = "its tag does not verify under this cache's key";

pub(super) fn open<'f>(
    key: &CacheKey,
    context: &Context<'_>,
    file: &'f [u8],
) -> Result<&'f [u8], &'static str> {
    let (header, artifact) = file
        .split_at_checked(HEADER_LEN)
        .ok_or("too short to be a sealed artifact")?;
    let (magic, tag) = header.split_at(MAGIC.len());
    if magic != MAGIC {
        return Err("not a sealed artifact");
    }
    if !key.verify(&message(context, artifact), tag) {
        return Err(TAG_MISMATCH);
    }
    Ok(artifact)
}
