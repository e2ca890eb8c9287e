//! The parts of an absolute URL the Keystone's rules look at, read as Go's `net/url.Parse`
//! reads them (the CobaltCore webhook's parser), with its error wording.
//!
//! Only what the rules need is parsed: the scheme (lowercased, as Go does) and the
//! authority's host and port. Go's refusals that matter for a URL a dashboard or a client
//! is sent to are kept: control characters, a malformed scheme, a port that is not
//! digits, a character a host may not contain, a bad `%` escape, an unclosed `[`.

/// Why a URL does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("parse {url:?}: {reason}")]
pub(crate) struct UrlError {
    url: String,
    reason: String,
}

/// A parsed URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Url {
    /// Lowercased; empty when the text has none.
    pub(crate) scheme: String,
    /// `host[:port]` of the authority (`//…`); empty without one.
    pub(crate) host: String,
}

impl Url {
    /// The host without its port and without the brackets of an IPv6 literal.
    pub(crate) fn hostname(&self) -> &str {
        let host = self.host.as_str();
        if let Some(rest) = host.strip_prefix('[') {
            return rest.split(']').next().unwrap_or_default();
        }
        host.split(':').next().unwrap_or_default()
    }
}

/// Parses `raw`.
pub(crate) fn parse(raw: &str) -> Result<Url, UrlError> {
    let error = |reason: String| UrlError {
        url: raw.to_owned(),
        reason,
    };
    if raw.chars().any(|c| c.is_ascii_control()) {
        return Err(error("net/url: invalid control character in URL".into()));
    }
    let without_fragment = raw.split('#').next().unwrap_or_default();
    let (scheme, rest) = scheme(without_fragment).map_err(error)?;
    let Some(authority_and_path) = rest.strip_prefix("//") else {
        return Ok(Url {
            scheme,
            host: String::new(),
        });
    };
    let authority = authority_and_path
        .split(['/', '?'])
        .next()
        .unwrap_or_default();
    let host = match authority.rfind('@') {
        Some(at) => &authority[at + 1..],
        None => authority,
    };
    check_host(host).map_err(error)?;
    Ok(Url {
        scheme,
        host: host.to_owned(),
    })
}

/// Go's `getScheme`: letters, then letters, digits, `+`, `-`, `.` up to a `:`. Text that
/// breaks the grammar before any `:` has no scheme.
fn scheme(raw: &str) -> Result<(String, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme".into()),
            ':' => return Ok((raw[..i].to_ascii_lowercase(), &raw[i + 1..])),
            _ => return Ok((String::new(), raw)),
        }
    }
    Ok((String::new(), raw))
}

/// Go's `parseHost` and its host unescaping.
fn check_host(host: &str) -> Result<(), String> {
    let (name, port) = if host.starts_with('[') {
        let Some(close) = host.find(']') else {
            return Err("missing ']' in host".into());
        };
        (&host[..=close], &host[close + 1..])
    } else {
        match host.rfind(':') {
            Some(colon) => (&host[..colon], &host[colon..]),
            None => (host, ""),
        }
    };
    let digits = |p: &str| p.bytes().all(|b| b.is_ascii_digit());
    if !port.is_empty() && !port.strip_prefix(':').is_some_and(digits) {
        return Err(format!("invalid port {port:?} after host"));
    }
    let bytes = name.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let escape = name.get(i..i + 3).unwrap_or(&name[i..]);
            if escape.len() < 3 || !escape[1..].bytes().all(|h| h.is_ascii_hexdigit()) {
                return Err(format!("invalid URL escape {escape:?}"));
            }
            i += 3;
            continue;
        }
        let allowed =
            b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:[]<>\"".contains(&b) || b >= 0x80;
        if !allowed {
            let c = name[i..].chars().next().unwrap_or_default();
            return Err(format!(
                "invalid character {:?} in host name",
                c.to_string()
            ));
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_as_go_reads_them() {
        type Expected<'a> = Result<(&'a str, &'a str, &'a str), &'a str>;
        let table: &[(&str, Expected<'_>)] = &[
            (
                "https://horizon.example.com/auth/websso/",
                Ok(("https", "horizon.example.com", "horizon.example.com")),
            ),
            (
                "HTTP://a.example:8443/x?y#z",
                Ok(("http", "a.example:8443", "a.example")),
            ),
            (
                "https://user:pw@b.example/",
                Ok(("https", "b.example", "b.example")),
            ),
            ("https://[::1]:5000/v3", Ok(("https", "[::1]:5000", "::1"))),
            ("https:///path", Ok(("https", "", ""))),
            ("ftp://c.example", Ok(("ftp", "c.example", "c.example"))),
            ("mailto:x@y", Ok(("mailto", "", ""))),
            ("://x", Err("parse \"://x\": missing protocol scheme")),
            (
                "https://a.example:x/",
                Err("parse \"https://a.example:x/\": invalid port \":x\" after host"),
            ),
            (
                "https://a b/",
                Err("parse \"https://a b/\": invalid character \" \" in host name"),
            ),
            (
                "https://a{b/",
                Err("parse \"https://a{b/\": invalid character \"{\" in host name"),
            ),
            (
                "https://a%zz/",
                Err("parse \"https://a%zz/\": invalid URL escape \"%zz\""),
            ),
            (
                "https://[::1/",
                Err("parse \"https://[::1/\": missing ']' in host"),
            ),
            (
                "https://a\n/",
                Err("parse \"https://a\\n/\": net/url: invalid control character in URL"),
            ),
        ];
        for (raw, expected) in table {
            let got = parse(raw);
            match expected {
                Ok((scheme, host, hostname)) => {
                    let url = got.unwrap_or_else(|e| panic!("{raw}: {e}"));
                    assert_eq!(
                        (url.scheme.as_str(), url.host.as_str(), url.hostname()),
                        (*scheme, *host, *hostname),
                        "{raw}"
                    );
                }
                Err(message) => {
                    assert_eq!(
                        got.map_err(|e| e.to_string()),
                        Err((*message).to_owned()),
                        "{raw}"
                    );
                }
            }
        }
    }
}
