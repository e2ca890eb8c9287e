//! The name rules Kubernetes applies to namespaces, resources and label values, for checks
//! made before anything reaches a server.

/// An RFC 1123 label: lower-case alphanumerics and '-', alphanumeric at both ends, at most
/// 63 characters (a namespace name, a resource's plural).
pub fn is_dns_label(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dns_label_is_lower_case_alphanumerics_and_dashes_inside_at_most_63() {
        for ok in ["a", "a-b", "0abc", &"a".repeat(63)] {
            assert!(is_dns_label(ok), "{ok:?}");
        }
        for bad in ["", "-a", "a-", "A", "a.b", "a_b", "*", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad:?}");
        }
    }
}
