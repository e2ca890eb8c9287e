//! `bytes`: `length` random bytes, raw or as standard base64 (padded, unwrapped).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rand::Rng as _;

use crate::entries::{Bytes, BytesEncoding};

/// The value of a `bytes` generator.
pub(crate) fn generate(bytes: &Bytes) -> Vec<u8> {
    let mut raw = vec![0u8; bytes.length as usize];
    rand::rng().fill_bytes(&mut raw);
    match bytes.encoding {
        BytesEncoding::Raw => raw,
        BytesEncoding::Base64 => STANDARD.encode(raw).into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_bytes_have_exactly_length_bytes() {
        let value = generate(&Bytes {
            key: "k".into(),
            length: 72,
            encoding: BytesEncoding::Raw,
        });
        assert_eq!(value.len(), 72);
    }

    #[test]
    fn base64_bytes_decode_to_length_bytes_on_one_line() {
        let value = generate(&Bytes {
            key: "k".into(),
            length: 72,
            encoding: BytesEncoding::Base64,
        });
        assert_eq!(value.len(), 96);
        assert!(!value.contains(&b'\n'));
        assert_eq!(STANDARD.decode(&value).map(|v| v.len()).ok(), Some(72));
    }
}
