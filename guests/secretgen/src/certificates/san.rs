//! The subject alternative names of a wildcard certificate, classified as cfssl classifies
//! each host: an IP address (Go's `net.ParseIP`), else an e-mail address (Go's
//! `mail.ParseAddress`), else a URI (Go's `url.ParseRequestURI`), else a DNS name. They are
//! written grouped as Go's `x509` writes them: DNS names, e-mail addresses, IP addresses,
//! URIs.
//!
//! DECISION: the e-mail and URI checks follow Go's grammar for what a domain can be (a bare
//! `local@domain`; an absolute path or a `scheme:` URI with an optional authority and
//! query), and write the URI as Go's `URL.String()` does for those. A display-name address
//! (`Name <a@b>`) or an address with a quoted local part, which Go would also take, is not
//! recognised and becomes a DNS name.

use std::net::IpAddr;

use der::asn1::{Ia5String, OctetString};
use x509_cert::ext::pkix::name::GeneralName;

use crate::cert::CertError;

/// One host, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum San {
    Dns(String),
    Email(String),
    Ip(IpAddr),
    Uri(String),
}

/// Classifies one host as cfssl does.
pub(crate) fn classify(host: &str) -> San {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return San::Ip(ip);
    }
    if is_addr_spec(host) {
        return San::Email(host.to_owned());
    }
    if let Some(uri) = request_uri(host) {
        return San::Uri(uri);
    }
    San::Dns(host.to_owned())
}

/// The general names of `hosts`, grouped in Go's order.
pub(crate) fn general_names(hosts: &[&str]) -> Result<Vec<GeneralName>, CertError> {
    let sans: Vec<San> = hosts.iter().map(|h| classify(h)).collect();
    let mut names = Vec::new();
    for san in sans.iter().filter(|s| matches!(s, San::Dns(_))) {
        if let San::Dns(dns) = san {
            names.push(GeneralName::DnsName(Ia5String::new(dns)?));
        }
    }
    for san in &sans {
        if let San::Email(email) = san {
            names.push(GeneralName::Rfc822Name(Ia5String::new(email)?));
        }
    }
    for san in &sans {
        if let San::Ip(ip) = san {
            // Go writes an IPv4 address (also an IPv4-mapped IPv6 one) in 4 bytes.
            let bytes = match ip {
                IpAddr::V4(v4) => v4.octets().to_vec(),
                IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                    Some(v4) => v4.octets().to_vec(),
                    None => v6.octets().to_vec(),
                },
            };
            names.push(GeneralName::IpAddress(OctetString::new(bytes)?));
        }
    }
    for san in &sans {
        if let San::Uri(uri) = san {
            names.push(GeneralName::UniformResourceIdentifier(Ia5String::new(uri)?));
        }
    }
    Ok(names)
}

/// RFC 5322 `atext`, as Go's `mail` package takes it (non-ASCII included, RFC 6532).
fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c) || !c.is_ascii()
}

/// `local@domain`: a local part of atext and dots, and a domain of dot-separated atext
/// atoms with no empty atom, or a domain literal in brackets.
fn is_addr_spec(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else {
        return false;
    };
    let local_ok = !local.is_empty() && local.chars().all(|c| c == '.' || is_atext(c));
    let literal = domain
        .strip_prefix('[')
        .and_then(|d| d.strip_suffix(']'))
        .is_some_and(|d| {
            d.chars()
                .all(|c| c.is_ascii_graphic() && !"[]\\".contains(c))
        });
    let atoms = !domain.is_empty()
        && domain
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(is_atext));
    local_ok && (literal || atoms)
}

/// `url.ParseRequestURI(s).String()`, when Go would take `s`.
fn request_uri(s: &str) -> Option<String> {
    if s.is_empty() || s.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return None;
    }
    if s == "*" {
        return Some(s.to_owned());
    }
    let (scheme, rest) = scheme(s)?;
    let (rest, query) = match rest.split_once('?') {
        Some((rest, query)) => (rest, Some(query)),
        None => (rest, None),
    };
    let query = query.map(|q| format!("?{q}")).unwrap_or_default();
    let prefix = if scheme.is_empty() {
        String::new()
    } else {
        format!("{scheme}:")
    };
    if !rest.starts_with('/') {
        // `scheme:opaque`, written verbatim; without a scheme, no request URI.
        return (!scheme.is_empty()).then(|| format!("{prefix}{rest}{query}"));
    }
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, path) = after.split_at(after.find('/').unwrap_or(after.len()));
        if !valid_authority(authority) {
            return None;
        }
        return Some(format!(
            "{prefix}//{authority}{}{query}",
            escaped_path(path)?
        ));
    }
    Some(format!("{prefix}{}{query}", escaped_path(rest)?))
}

/// Go's `getScheme`: letters, then letters, digits, `+-.`, up to a `:`; none when a
/// character outside that set comes first.
fn scheme(s: &str) -> Option<(String, &str)> {
    for (i, b) in s.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((s[..i].to_ascii_lowercase(), &s[i + 1..])),
            _ => return Some((String::new(), s)),
        }
    }
    Some((String::new(), s))
}

/// `[userinfo@]host[:port]` of characters Go neither refuses nor escapes.
fn valid_authority(authority: &str) -> bool {
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((userinfo, hostport)) => (Some(userinfo), hostport),
        None => (None, authority),
    };
    let sub_delim = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=".contains(c);
    let userinfo_ok = userinfo.is_none_or(|u| u.chars().all(|c| sub_delim(c) || c == ':'));
    let (host, port) = match hostport.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (hostport, None),
    };
    userinfo_ok
        && host.chars().all(sub_delim)
        && port.is_none_or(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `EscapedPath`: the path as written when it is validly encoded, else re-escaped
/// from its decoded form; none when a `%` escape is malformed (Go refuses those).
fn escaped_path(path: &str) -> Option<String> {
    let bytes = path.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = path.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    let valid_encoded = path
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@/%[]".contains(c));
    if valid_encoded {
        return Some(path.to_owned());
    }
    let mut out = String::new();
    for b in decoded {
        if b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_classified_as_cfssl_classifies_them() {
        let ip = |s: &str| San::Ip(s.parse().expect("ip"));
        let cases = [
            ("example.com", San::Dns("example.com".into())),
            ("*.example.com", San::Dns("*.example.com".into())),
            ("192.0.2.10", ip("192.0.2.10")),
            ("*.192.0.2.10", San::Dns("*.192.0.2.10".into())),
            ("2001:db8::1", ip("2001:db8::1")),
            ("user@example.com", San::Email("user@example.com".into())),
            (
                "*.user@example.com",
                San::Email("*.user@example.com".into()),
            ),
            ("urn:example:gitlab", San::Uri("urn:example:gitlab".into())),
            (
                "*.urn:example:gitlab",
                San::Dns("*.urn:example:gitlab".into()),
            ),
            ("/path", San::Uri("/path".into())),
            ("*./path", San::Dns("*./path".into())),
            ("host:8443", San::Uri("host:8443".into())),
            (
                "HTTPS://Example.com/a",
                San::Uri("https://Example.com/a".into()),
            ),
            (
                "https://example.com:8443/x?y=1",
                San::Uri("https://example.com:8443/x?y=1".into()),
            ),
            (
                "mailto:user@example.com",
                San::Uri("mailto:user@example.com".into()),
            ),
            ("/pa th", San::Uri("/pa%20th".into())),
            ("/bad%zz", San::Dns("/bad%zz".into())),
            (":8443", San::Dns(":8443".into())),
            ("1host:x", San::Dns("1host:x".into())),
            ("https://bad host/", San::Dns("https://bad host/".into())),
            ("user@", San::Dns("user@".into())),
            ("a@b..c", San::Dns("a@b..c".into())),
        ];
        for (host, expected) in cases {
            assert_eq!(classify(host), expected, "{host}");
        }
    }

    #[test]
    fn names_are_grouped_dns_email_ip_uri_as_go_writes_them() {
        let names = general_names(&["192.0.2.10", "*.192.0.2.10"]).expect("encodes");
        assert!(matches!(&names[0], GeneralName::DnsName(d) if d.as_str() == "*.192.0.2.10"));
        assert!(
            matches!(&names[1], GeneralName::IpAddress(ip) if ip.as_bytes() == [192, 0, 2, 10])
        );
    }

    #[test]
    fn an_ipv4_mapped_address_is_written_in_4_bytes() {
        let names = general_names(&["::ffff:192.0.2.1"]).expect("encodes");
        assert!(matches!(&names[0], GeneralName::IpAddress(ip) if ip.as_bytes().len() == 4));
    }

    #[test]
    fn a_name_that_is_not_ascii_fails_as_in_go() {
        assert!(general_names(&["bücher.example"]).is_err());
    }
}
