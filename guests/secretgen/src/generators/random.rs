//! `random`: exactly `length` characters drawn uniformly from the charset, then encoded, then
//! wrapped (the Job encodes first, then wraps).
//!
//! Characters are drawn with rand's `Uniform` distribution (Lemire's widening multiply with
//! rejection), so every character is equally likely: no modulo bias. Unlike the Job, whose
//! `tr` filter of 4096 random bytes could return fewer characters for a narrow charset, the
//! value always has `length` characters.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rand::RngExt as _;
use rand::distr::Uniform;

use crate::entries::{Charset, Random, RandomEncoding, Wrap};

/// `length` characters of `charset`, uniformly at random.
pub(crate) fn random_string(charset: Charset, length: usize) -> String {
    let characters = charset.characters();
    // The charsets are non-empty constants, so the range is never empty.
    let uniform = Uniform::new(0, characters.len()).unwrap_or_else(|_| unreachable!());
    rand::rng()
        .sample_iter(uniform)
        .take(length)
        .map(|i| char::from(characters[i]))
        .collect()
}

/// The value of a `random` generator: drawn, then encoded, then wrapped.
pub(crate) fn generate(random: &Random) -> Vec<u8> {
    let value = random_string(random.charset, random.length as usize);
    encode_and_wrap(&value, random.encoding, random.wrap).into_bytes()
}

/// Encodes `value` (standard base64, padded, never wrapped: the Job's `base64` output up to
/// 57 characters, which validation enforces, equals its `base64-nowrap` output), then wraps it.
pub(crate) fn encode_and_wrap(value: &str, encoding: RandomEncoding, wrap: Wrap) -> String {
    let encoded = match encoding {
        RandomEncoding::None => value.to_owned(),
        RandomEncoding::Base64 | RandomEncoding::Base64NoWrap => STANDARD.encode(value),
    };
    match wrap {
        Wrap::None => encoded,
        Wrap::JsonArray => format!("[\"{encoded}\"]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_random_value_has_exactly_length_characters_of_its_charset() {
        for charset in [
            Charset::Alphanumeric,
            Charset::Hex,
            Charset::LowerAlphanumeric,
        ] {
            for length in [1, 2, 57, 64, 128, 4097] {
                let value = random_string(charset, length);
                assert_eq!(value.len(), length);
                assert!(value.bytes().all(|b| charset.characters().contains(&b)));
            }
        }
    }

    #[test]
    fn every_character_of_a_charset_is_drawn_about_equally_often() {
        // 36 characters x ~2800 draws each; a modulo-biased draw from bytes would favour the
        // first 4 characters by 1/7 (256 = 7 * 36 + 4). The bound is 6 standard deviations.
        let charset = Charset::LowerAlphanumeric;
        let n = 100_000usize;
        let value = random_string(charset, n);
        let expected = n as f64 / 36.0;
        let bound = 6.0 * expected.sqrt();
        for &c in charset.characters() {
            let count = value.bytes().filter(|&b| b == c).count() as f64;
            assert!(
                (count - expected).abs() < bound,
                "{} drawn {count} times",
                c as char
            );
        }
    }

    #[test]
    fn encodings_and_wraps_match_the_job() {
        let cases = [
            ("none", RandomEncoding::None, Wrap::None, "abc"),
            ("base64", RandomEncoding::Base64, Wrap::None, "YWJj"),
            (
                "base64-nowrap",
                RandomEncoding::Base64NoWrap,
                Wrap::None,
                "YWJj",
            ),
            (
                "jsonArray",
                RandomEncoding::None,
                Wrap::JsonArray,
                "[\"abc\"]",
            ),
            (
                "base64 then jsonArray",
                RandomEncoding::Base64,
                Wrap::JsonArray,
                "[\"YWJj\"]",
            ),
        ];
        for (name, encoding, wrap, expected) in cases {
            assert_eq!(encode_and_wrap("abc", encoding, wrap), expected, "{name}");
        }
    }

    #[test]
    fn base64_of_57_characters_is_one_unwrapped_line() {
        let value = random_string(Charset::Alphanumeric, 57);
        let encoded = encode_and_wrap(&value, RandomEncoding::Base64, Wrap::None);
        assert_eq!(encoded.len(), 76);
        assert!(!encoded.contains('\n'));
    }

    #[test]
    fn long_base64_nowrap_values_are_never_wrapped() {
        let value = random_string(Charset::LowerAlphanumeric, 128);
        let encoded = encode_and_wrap(&value, RandomEncoding::Base64NoWrap, Wrap::None);
        assert_eq!(encoded.len(), 172);
        assert!(!encoded.contains('\n'));
    }
}
