//! What a staged rotation must hold before it is committed (facts §2.11): the completion
//! annotation is an RFC 3339 time; staged keys number 3 to N+1, each exactly 44 characters
//! of URL-safe base64 decoding to 32 bytes, no two alike; a staged admin password is
//! present, non-empty and at least the configured length.
//!
//! A [`Rejection`] says what is wrong without ever quoting a staged value: it becomes the
//! note of a Warning event.

use std::collections::BTreeMap;

use k8s_openapi::ByteString;
use k8s_openapi::jiff::Timestamp;

/// The data key of a staged admin password.
pub const PASSWORD_KEY: &str = "password";

/// The fewest keys a staged key set may hold.
pub const MIN_KEYS: usize = 3;

/// How long a key is: 32 bytes in URL-safe base64 with its padding.
const KEY_LENGTH: usize = 44;

/// How many bytes a key decodes to.
const KEY_BYTES: usize = 32;

/// Why a staged rotation is rejected. The text never holds a staged value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    #[error("the staged rotation holds {count} keys, want {min} to {max}")]
    KeyCount {
        count: usize,
        min: usize,
        max: usize,
    },
    #[error("key {key:?} is {length} characters long, want 44")]
    KeyLength { key: String, length: usize },
    #[error("key {key:?} is not URL-safe base64")]
    KeyNotBase64 { key: String },
    #[error("key {key:?} decodes to {bytes} bytes, want 32")]
    KeyBytes { key: String, bytes: usize },
    #[error("keys {first:?} and {second:?} hold the same value")]
    DuplicateKeys { first: String, second: String },
    #[error("the staged rotation has no key \"password\"")]
    PasswordMissing,
    #[error("the staged password is empty")]
    PasswordEmpty,
    #[error("the staged password is {length} characters long, want at least {min}")]
    PasswordTooShort { length: usize, min: usize },
}

/// The time `value` names when it is an RFC 3339 date-time (`2026-03-01T12:00:00Z`, with
/// an optional fraction of a second and `Z` or a `±hh:mm` offset); `None` otherwise.
///
/// DECISION: the shape is checked here, strictly (upper-case `T` and `Z`, seconds
/// required), as Go's `time.Parse(time.RFC3339, …)` does; jiff's parser, which also takes
/// other ISO 8601 forms, then checks the values (month 13, February 30).
pub fn parse_rfc3339(value: &str) -> Option<Timestamp> {
    let b = value.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        b.get(range.clone())
            .is_some_and(|s| s.len() == range.len() && s.iter().all(u8::is_ascii_digit))
    };
    let shape = digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && b.get(10) == Some(&b'T')
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut rest = &b[19..];
    if let Some(fraction) = rest.strip_prefix(b".") {
        let n = fraction.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        rest = &fraction[n..];
    }
    let zone = match rest {
        b"Z" => true,
        [sign, h1, h2, b':', m1, m2] => {
            matches!(sign, b'+' | b'-') && [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit())
        }
        _ => false,
    };
    if !zone {
        return None;
    }
    value.parse().ok()
}

/// Checks a staged key set against `max_active_keys` (N, normalized): 3 to N+1 keys, each
/// 44 characters of URL-safe base64 decoding to 32 bytes, no two alike.
pub fn validate_keys(
    data: &BTreeMap<String, ByteString>,
    max_active_keys: usize,
) -> Result<(), Rejection> {
    let max = max_active_keys + 1;
    if !(MIN_KEYS..=max).contains(&data.len()) {
        return Err(Rejection::KeyCount {
            count: data.len(),
            min: MIN_KEYS,
            max,
        });
    }
    let mut seen: BTreeMap<&[u8], &String> = BTreeMap::new();
    for (key, value) in data {
        let value = value.0.as_slice();
        if value.len() != KEY_LENGTH {
            return Err(Rejection::KeyLength {
                key: key.clone(),
                length: value.len(),
            });
        }
        let decoded =
            decode_url_safe(value).ok_or_else(|| Rejection::KeyNotBase64 { key: key.clone() })?;
        if decoded.len() != KEY_BYTES {
            return Err(Rejection::KeyBytes {
                key: key.clone(),
                bytes: decoded.len(),
            });
        }
        if let Some(first) = seen.insert(value, key) {
            return Err(Rejection::DuplicateKeys {
                first: first.clone(),
                second: key.clone(),
            });
        }
    }
    Ok(())
}

/// Checks a staged admin password: the key `password` present, non-empty, at least
/// `min_length` bytes long (normalized).
pub fn validate_password(
    data: &BTreeMap<String, ByteString>,
    min_length: usize,
) -> Result<(), Rejection> {
    let password = data.get(PASSWORD_KEY).ok_or(Rejection::PasswordMissing)?;
    match password.0.len() {
        0 => Err(Rejection::PasswordEmpty),
        length if length < min_length => Err(Rejection::PasswordTooShort {
            length,
            min: min_length,
        }),
        _ => Ok(()),
    }
}

/// Decodes URL-safe base64 with padding (`A–Z a–z 0–9 - _`, at most two `=` at the end,
/// a length that is a multiple of 4); `None` when `text` is not that. Unused low bits of
/// the last character are ignored, as Go's non-strict decoder does.
fn decode_url_safe(text: &[u8]) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(4) {
        return None;
    }
    let padding = text.iter().rev().take_while(|&&c| c == b'=').count();
    if padding > 2 {
        return None;
    }
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let (mut bits, mut count) = (0u32, 0u32);
    for &c in &text[..text.len() - padding] {
        let sextet = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(sextet);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
#[path = "validate_tests.rs"]
mod tests;
