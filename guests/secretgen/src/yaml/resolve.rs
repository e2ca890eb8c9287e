//! Which plain scalars a YAML reader takes for something other than a string.
//!
//! Rails reads secrets.yml with Psych (YAML 1.1 with Ruby's scalar scanner); other readers
//! use YAML 1.2's core schema. A generated value is quoted when either would read it as
//! null, a boolean, a number, a timestamp, or a Ruby symbol; an existing plain value is
//! written plain again whatever it reads as, so its meaning never changes. The check is
//! deliberately broad: quoting a string needlessly changes nothing about what it reads as.

/// Whether a plain scalar with this text reads as anything but a string in YAML 1.1 (Psych)
/// or YAML 1.2 (core schema).
pub(crate) fn reads_as_non_string(text: &str) -> bool {
    is_null(text) || is_bool(text) || is_special(text) || is_number_like(text) || is_date(text)
}

/// Whether a plain scalar with this text reads as null.
pub(crate) fn is_null(text: &str) -> bool {
    matches!(text, "" | "~" | "null" | "Null" | "NULL")
}

fn is_bool(text: &str) -> bool {
    matches!(
        text,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// YAML 1.1's value (`=`) and merge (`<<`) keys, infinities, not-a-number, Ruby symbols.
fn is_special(text: &str) -> bool {
    let unsigned = text.trim_start_matches(['-', '+']);
    text == "="
        || text == "<<"
        || (text.starts_with(':') && text.len() > 1)
        || matches!(unsigned, ".inf" | ".Inf" | ".INF")
        || matches!(text, ".nan" | ".NaN" | ".NAN")
}

/// Integers and floats of either version, in any base, with `_` or `,` separators or
/// sexagesimal parts: a sign, then digits and only the characters numbers use, with at least
/// one digit and a digit or `.` first.
fn is_number_like(text: &str) -> bool {
    let unsigned = text.strip_prefix(['-', '+']).unwrap_or(text);
    let radix_body = ["0x", "0X", "0o", "0O", "0b", "0B"]
        .iter()
        .find_map(|prefix| unsigned.strip_prefix(prefix));
    if let Some(body) = radix_body {
        return !body.is_empty()
            && body
                .bytes()
                .all(|b| b.is_ascii_hexdigit() || b == b'_' || b == b',');
    }
    let first_ok = unsigned
        .bytes()
        .next()
        .is_some_and(|b| b.is_ascii_digit() || b == b'.');
    first_ok
        && unsigned.bytes().any(|b| b.is_ascii_digit())
        && unsigned
            .bytes()
            .all(|b| b.is_ascii_digit() || b"_,.:eE+-".contains(&b))
}

/// YAML 1.1 timestamps start with `YYYY-M-D`.
fn is_date(text: &str) -> bool {
    let mut parts = text.splitn(3, '-');
    let year = parts.next().unwrap_or_default();
    let month = parts.next().unwrap_or_default();
    let day: String = parts
        .next()
        .unwrap_or_default()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    let digits = |s: &str, range: std::ops::RangeInclusive<usize>| {
        range.contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit())
    };
    digits(year, 4..=4) && digits(month, 1..=2) && digits(&day, 1..=2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_that_read_as_another_type_are_recognised() {
        let non_strings = [
            "",
            "~",
            "null",
            "NULL",
            "y",
            "n",
            "yes",
            "No",
            "on",
            "OFF",
            "true",
            "False",
            "0",
            "123",
            "-5",
            "+7",
            "0123",
            "1_000",
            "1,000",
            "0x1F",
            "0xdeadbeef",
            "0o17",
            "0b101",
            "1.5",
            ".5",
            "1e5",
            "1E+5",
            "3e10",
            "1:20",
            "190:20:30",
            ".inf",
            "-.Inf",
            ".NaN",
            "2001-12-14",
            "2001-12-14t21:59:43.10-05:00",
            "2001-1-2 3:04:05",
            "=",
            "<<",
            ":symbol",
        ];
        for text in non_strings {
            assert!(
                reads_as_non_string(text),
                "{text:?} should read as non-string"
            );
        }
    }

    #[test]
    fn ordinary_secret_values_read_as_strings() {
        let strings = [
            "abc",
            "a1b2",
            "deadbeefcafe0123x",
            "e5",
            "x10",
            "0xg",
            "1a",
            "ffff",
            "NaN",
            "Infinity",
            "yess",
            "nope",
            "12345678901234567890123456789012a",
            "abcdef0123456789abcdef0123456789",
            ":",
        ];
        for text in strings {
            assert!(
                !reads_as_non_string(text),
                "{text:?} should read as a string"
            );
        }
    }
}
