//! What a Secret value looks like, without showing it: the demo prints shapes, never
//! values.

/// A one-line description of `value`'s shape, e.g. `64 chars, alphanumeric`,
/// `PEM RSA PRIVATE KEY`, `YAML, 12 lines`, `32 bytes`.
pub(crate) fn describe(value: &[u8]) -> String {
    let Ok(text) = std::str::from_utf8(value) else {
        return format!("{} bytes, binary", value.len());
    };
    if text.is_empty() {
        return "empty".into();
    }
    let pem_labels: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("-----BEGIN ")?.strip_suffix("-----"))
        .collect();
    if !pem_labels.is_empty() {
        let mut labels = pem_labels.clone();
        labels.dedup();
        let count = if pem_labels.len() > 1 {
            format!("{} × ", pem_labels.len())
        } else {
            String::new()
        };
        return format!("PEM {count}{}", labels.join(" + "));
    }
    if text.starts_with("ssh-") || text.starts_with("ecdsa-sha2-") {
        let algorithm = text.split_whitespace().next().unwrap_or_default();
        return format!("OpenSSH public key, {algorithm}");
    }
    let lines = text.lines().count();
    if lines > 1 {
        return format!("text, {lines} lines");
    }
    format!("{} chars, {}", text.chars().count(), charset(text))
}

fn charset(text: &str) -> &'static str {
    let all = |f: fn(char) -> bool| text.chars().all(f);
    if all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c)) {
        "hex"
    } else if all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()) {
        "lowercase alphanumeric"
    } else if all(|c| c.is_ascii_alphanumeric()) {
        "alphanumeric"
    } else if all(|c| c.is_ascii_alphanumeric() || "+/=".contains(c)) {
        "base64"
    } else {
        "text"
    }
}

#[cfg(test)]
mod tests {
    use super::describe;

    #[test]
    fn shapes_name_the_kind_of_value_and_never_the_value() {
        let cases: &[(&str, &[u8], &str)] = &[
            ("a random token", b"aZ09aZ09", "8 chars, alphanumeric"),
            ("a hex token", b"0fa9", "4 chars, hex"),
            ("base64", b"YWJj+/==", "8 chars, base64"),
            ("a key", b"-----BEGIN RSA PRIVATE KEY-----\nMII\n-----END RSA PRIVATE KEY-----\n", "PEM RSA PRIVATE KEY"),
            (
                "a chain",
                b"-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nB\n-----END CERTIFICATE-----\n",
                "PEM 2 × CERTIFICATE",
            ),
            ("an ssh public key", b"ssh-ed25519 AAAA host", "OpenSSH public key, ssh-ed25519"),
            ("yaml", b"production:\n  secret_key_base: x\n", "text, 2 lines"),
            ("binary", &[0xff, 0x00, 0x10], "3 bytes, binary"),
            ("empty", b"", "empty"),
        ];
        for (case, value, expected) in cases {
            assert_eq!(describe(value), *expected, "{case}");
        }
    }
}
