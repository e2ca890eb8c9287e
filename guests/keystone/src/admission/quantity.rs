//! Kubernetes resource quantities (`500m`, `256Mi`, `1e3`), read as apimachinery's
//! `resource.ParseQuantity` reads them, so requests and limits can be compared.
//!
//! A quantity is a signed decimal number and a suffix: a binary SI one (`Ki` … `Ei`), a
//! decimal SI one (`n`, `u`, `m`, none, `k`, `M` … `E`) or a decimal exponent (`e3`,
//! `E-2`). It is held exactly in nano-units, rounded up as Kubernetes rounds values finer
//! than `1n`; one beyond ±10^30 of them (10^21 units, a thousand exa) is refused as too
//! large.

/// The grammar apimachinery names when a quantity does not parse.
const GRAMMAR: &str = "quantities must match the regular expression \
    '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// The largest magnitude held, in nano-units.
const LIMIT: i128 = 10i128.pow(30);
/// The largest number its digits may spell before it is scaled.
const DIGITS_LIMIT: i128 = 10i128.pow(36);

/// Why a quantity does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum QuantityError {
    #[error("{GRAMMAR}")]
    Format,
    #[error("unable to parse quantity's suffix")]
    Suffix,
    #[error("quantity is too large to compare")]
    TooLarge,
}

/// A quantity in nano-units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Quantity(i128);

/// Parses `text`.
pub(crate) fn parse(text: &str) -> Result<Quantity, QuantityError> {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let number_len = unsigned
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(unsigned.len());
    let (number, suffix) = unsigned.split_at(number_len);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if number.is_empty() || fraction.contains('.') || (whole.is_empty() && fraction.is_empty()) {
        return Err(QuantityError::Format);
    }
    let (ten, two) = suffix_exponents(suffix)?;
    // digits × 10^(ten − len(fraction) + 9) × 2^two nano-units.
    let mut value: i128 = 0;
    for digit in whole.bytes().chain(fraction.bytes()) {
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(i128::from(digit - b'0')))
            .ok_or(QuantityError::TooLarge)?;
        if value > DIGITS_LIMIT {
            return Err(QuantityError::TooLarge);
        }
    }
    let mut scale = ten - fraction.len() as i64 + 9;
    let mut remainder = false;
    while scale < 0 && value != 0 {
        remainder |= value % 10 != 0;
        value /= 10;
        scale += 1;
    }
    if remainder {
        value += 1;
    }
    if value != 0 {
        for _ in 0..scale.max(0) {
            value = value.checked_mul(10).ok_or(QuantityError::TooLarge)?;
            if value > LIMIT {
                return Err(QuantityError::TooLarge);
            }
        }
        for _ in 0..two {
            value = value.checked_mul(2).ok_or(QuantityError::TooLarge)?;
        }
    }
    if value > LIMIT {
        return Err(QuantityError::TooLarge);
    }
    Ok(Quantity(if negative { -value } else { value }))
}

/// The base-10 and base-2 exponents of a suffix.
fn suffix_exponents(suffix: &str) -> Result<(i64, u32), QuantityError> {
    let exponents = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        _ => {
            let exponent = suffix
                .strip_prefix(['e', 'E'])
                .ok_or_else(|| suffix_error(suffix))?;
            let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(suffix_error(suffix));
            }
            let ten: i64 = exponent.parse().map_err(|_| QuantityError::TooLarge)?;
            if !(-60..=60).contains(&ten) {
                return Err(QuantityError::TooLarge);
            }
            (ten, 0)
        }
    };
    Ok(exponents)
}

/// A suffix outside the grammar is a format error; one inside it that names no unit is a
/// suffix error (apimachinery's two answers).
fn suffix_error(suffix: &str) -> QuantityError {
    let grammatical = suffix
        .trim_end_matches(|c: char| c.is_ascii_digit())
        .trim_end_matches(['+', '-'])
        .chars()
        .all(|c| "eEinumkKMGTP".contains(c));
    if grammatical {
        QuantityError::Suffix
    } else {
        QuantityError::Format
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_by_value_whatever_their_suffix() {
        let equal = [
            ("1", "1000m"),
            ("0.5", "500m"),
            ("1Ki", "1024"),
            ("1Gi", "1073741824"),
            ("1k", "1e3"),
            ("1E-3", "1m"),
            ("+2", "2"),
            ("1Ei", "1152921504606846976"),
            (".5", "0.5"),
            ("1.", "1"),
        ];
        for (a, b) in equal {
            assert_eq!(parse(a), parse(b), "{a} = {b}");
            assert!(parse(a).is_ok(), "{a}");
        }
        let ordered = [
            ("100m", "500m"),
            ("256Mi", "512Mi"),
            ("1G", "1Gi"),
            ("-1", "0"),
            ("1n", "2n"),
        ];
        for (small, large) in ordered {
            assert!(
                parse(small).expect(small) < parse(large).expect(large),
                "{small} < {large}"
            );
        }
        // Finer than a nano-unit rounds up.
        assert_eq!(parse("0.1n"), parse("1n"));
    }

    #[test]
    fn text_that_is_no_quantity_is_refused_as_apimachinery_refuses_it() {
        let table: &[(&str, Option<QuantityError>)] = &[
            ("512Mi", None),
            ("", Some(QuantityError::Format)),
            ("abc", Some(QuantityError::Format)),
            ("1..2", Some(QuantityError::Format)),
            (".", Some(QuantityError::Format)),
            ("1 Gi", Some(QuantityError::Format)),
            ("1Gb", Some(QuantityError::Format)),
            ("1Mii", Some(QuantityError::Suffix)),
            ("1e", Some(QuantityError::Suffix)),
            ("1e400", Some(QuantityError::TooLarge)),
            (
                "99999999999999999999999999999999999999999",
                Some(QuantityError::TooLarge),
            ),
            ("2000Ei", Some(QuantityError::TooLarge)),
        ];
        for (text, expected) in table {
            assert_eq!(parse(text).err(), *expected, "{text:?}");
        }
        assert!(
            QuantityError::Format
                .to_string()
                .starts_with("quantities must match")
        );
    }
}
