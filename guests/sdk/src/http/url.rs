//! The URLs the HTTP client sends to: `http` or `https`, a host, an optional port, a path and
//! query. No user info, no fragment sent.

use super::HttpError;

/// A parsed request URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    /// `true` for `https`.
    pub https: bool,
    /// The host, lower-cased (an IPv6 literal keeps its brackets).
    pub host: String,
    /// The port, explicit or the scheme's (80, 443).
    pub port: u16,
    /// The path and query, starting with `/`.
    pub path_and_query: String,
}

impl Url {
    /// Parses an absolute `http://` or `https://` URL.
    pub fn parse(url: &str) -> Result<Self, HttpError> {
        let invalid = |message: &str| HttpError::Invalid {
            url: url.to_owned(),
            message: message.to_owned(),
        };
        let (https, rest) = if let Some(rest) = strip_prefix_ignore_case(url, "https://") {
            (true, rest)
        } else if let Some(rest) = strip_prefix_ignore_case(url, "http://") {
            (false, rest)
        } else {
            return Err(invalid("not an http:// or https:// URL"));
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let split = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, path) = rest.split_at(split);
        if authority.contains('@') {
            return Err(invalid("user info in a URL is not sent"));
        }
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => {
                let port = port
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| invalid("the port is not 1-65535"))?;
                (host, port)
            }
            _ => (authority, if https { 443 } else { 80 }),
        };
        if host.is_empty()
            || !host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c))
        {
            return Err(invalid("the host is not a name or an address"));
        }
        if path.chars().any(|c| c.is_ascii_control() || c == ' ') {
            return Err(invalid("the path holds spaces or control characters"));
        }
        let path_and_query = if path.starts_with('/') {
            path.to_owned()
        } else {
            format!("/{path}")
        };
        Ok(Self {
            https,
            host: host.to_ascii_lowercase(),
            port,
            path_and_query,
        })
    }

    /// `host:port`, as the host's egress check sees it.
    pub fn authority(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// Resolves a `Location` against this URL: absolute, scheme-relative (`//host/…`),
    /// absolute-path (`/…`) or relative to this path's directory.
    pub fn join(&self, location: &str) -> Result<Self, HttpError> {
        let scheme = if self.https { "https" } else { "http" };
        if strip_prefix_ignore_case(location, "http://").is_some()
            || strip_prefix_ignore_case(location, "https://").is_some()
        {
            return Self::parse(location);
        }
        if let Some(rest) = location.strip_prefix("//") {
            return Self::parse(&format!("{scheme}://{rest}"));
        }
        let path = if location.starts_with('/') {
            location.to_owned()
        } else {
            let base = self.path_and_query.split('?').next().unwrap_or("/");
            let dir = &base[..base.rfind('/').map_or(0, |i| i + 1)];
            format!("{dir}{location}")
        };
        Self::parse(&format!("{scheme}://{}{path}", self.authority()))
    }
}

impl std::fmt::Display for Url {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (scheme, default) = if self.https {
            ("https", 443)
        } else {
            ("http", 80)
        };
        if self.port == default {
            write!(f, "{scheme}://{}{}", self.host, self.path_and_query)
        } else {
            write!(f, "{scheme}://{}{}", self.authority(), self.path_and_query)
        }
    }
}

fn strip_prefix_ignore_case<'a>(value: &'a str, prefix: &str) -> Option<&'a str> {
    (value.len() >= prefix.len() && value[..prefix.len()].eq_ignore_ascii_case(prefix))
        .then(|| &value[prefix.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_scheme_host_port_and_path() {
        let url =
            Url::parse("HTTPS://Keystone.OpenStack.svc.cluster.local/v3?x=1#frag").expect("parses");
        assert!(url.https);
        assert_eq!(url.authority(), "keystone.openstack.svc.cluster.local:443");
        assert_eq!(url.path_and_query, "/v3?x=1");
        let url = Url::parse("http://a.b:5000").expect("parses");
        assert_eq!((url.port, url.path_and_query.as_str()), (5000, "/"));
    }

    #[test]
    fn urls_that_cannot_be_sent_are_invalid_with_the_reason() {
        for (url, reason) in [
            ("http://a.b:5000/x", None),
            ("ftp://a.b/", Some("not an http:// or https:// URL")),
            ("http://user:pw@a.b/", Some("user info")),
            ("http://a.b:0/", Some("the port is not 1-65535")),
            ("http://a.b:99999/", Some("the port is not 1-65535")),
            ("http:///x", Some("the host is not")),
            ("http://a b/", Some("the host is not")),
            ("http://a.b/x y", Some("spaces or control")),
        ] {
            match (Url::parse(url), reason) {
                (Ok(_), None) => {}
                (Err(HttpError::Invalid { message, .. }), Some(reason)) => {
                    assert!(message.contains(reason), "{url}: {message}");
                }
                (other, reason) => panic!("{url}: expected {reason:?}, got {other:?}"),
            }
        }
    }

    #[test]
    fn a_location_is_resolved_against_the_url_that_redirected() {
        let base = Url::parse("http://a.ns.svc.cluster.local:5000/v3/auth/tokens?x").expect("url");
        for (location, expected) in [
            ("https://b.example.com/z", "https://b.example.com/z"),
            (
                "https://b.example.com:8443/z",
                "https://b.example.com:8443/z",
            ),
            ("//c.example.com:8080/p", "http://c.example.com:8080/p"),
            ("/root", "http://a.ns.svc.cluster.local:5000/root"),
            ("other", "http://a.ns.svc.cluster.local:5000/v3/auth/other"),
        ] {
            assert_eq!(base.join(location).expect(location).to_string(), expected);
        }
    }
}
