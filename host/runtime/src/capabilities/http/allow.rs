//! A plugin's egress allow-list: the `host:port` patterns it declared in `describe()`.
//!
//! A pattern is `HOST:PORT` where `HOST` is a DNS name (e.g. `keystone.openstack.svc`) or
//! `*.` followed by a DNS suffix (e.g. `*.svc.cluster.local`), and `PORT` is 1-65535.
//! Names compare case-insensitively. `*.suffix` matches any name with at least one more
//! label before `suffix`, never `suffix` itself. Nothing else (a bare `*`, a wildcard
//! inside a name, an IP range, a missing or zero port, a path or a scheme) is a pattern.

use wasm_operator_types::is_dns_label;

/// One declared destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Destination {
    /// The lower-cased name, or the lower-cased suffix of a `*.` pattern (without `*.`).
    host: String,
    wildcard: bool,
    port: u16,
}

impl Destination {
    /// Parses one pattern; the message says what is wrong with it.
    pub(crate) fn parse(pattern: &str) -> Result<Self, String> {
        let (host, port) = pattern
            .rsplit_once(':')
            .ok_or_else(|| format!("{pattern:?} is not host:port (no port)"))?;
        let port = port
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| format!("{pattern:?}: port {port:?} is not 1-65535"))?;
        let (wildcard, name) = match host.strip_prefix("*.") {
            Some(suffix) => (true, suffix),
            None => (false, host),
        };
        let name = name.to_ascii_lowercase();
        if !is_dns_name(&name) {
            return Err(format!(
                "{pattern:?}: host {host:?} is neither a DNS name nor '*.' and a DNS suffix"
            ));
        }
        Ok(Self {
            host: name,
            wildcard,
            port,
        })
    }

    /// Whether `host` (a name from a request's authority) at `port` is this destination.
    fn matches(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let host = host.to_ascii_lowercase();
        if self.wildcard {
            host.strip_suffix(&self.host)
                .and_then(|rest| rest.strip_suffix('.'))
                .is_some_and(|rest| !rest.is_empty())
        } else {
            host == self.host
        }
    }
}

/// The destinations one plugin declared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AllowList(Vec<Destination>);

impl AllowList {
    /// Parses every pattern; the first invalid one is named as `egress[i]`.
    pub(crate) fn parse(patterns: &[String]) -> Result<Self, String> {
        patterns
            .iter()
            .enumerate()
            .map(|(i, p)| Destination::parse(p).map_err(|m| format!("egress[{i}]: {m}")))
            .collect::<Result<Vec<_>, _>>()
            .map(Self)
    }

    /// Whether a request to `host:port` is allowed.
    pub(crate) fn permits(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|d| d.matches(host, port))
    }
}

/// Dot-separated DNS labels, ≤ 253 characters, not all digits (an IP address is no name).
fn is_dns_name(name: &str) -> bool {
    name.len() <= 253
        && name.split('.').all(is_dns_label)
        && !name
            .split('.')
            .all(|l| l.chars().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> AllowList {
        AllowList::parse(&patterns.iter().map(|p| p.to_string()).collect::<Vec<_>>())
            .expect("valid patterns")
    }

    #[test]
    fn a_wildcard_pattern_matches_names_below_its_suffix_at_its_port_only() {
        let allow = list(&["*.svc.cluster.local:5000", "api.example.com:443"]);
        assert!(allow.permits("keystone.openstack.svc.cluster.local", 5000));
        assert!(allow.permits("Keystone.OpenStack.svc.cluster.local", 5000));
        assert!(allow.permits("api.example.com", 443));
        for (host, port) in [
            ("keystone.openstack.svc.cluster.local", 5001),
            ("svc.cluster.local", 5000),
            ("evilsvc.cluster.local", 5000),
            ("keystone.svc.cluster.local.evil.com", 5000),
            ("www.api.example.com", 443),
            ("api.example.com", 80),
        ] {
            assert!(!allow.permits(host, port), "{host}:{port} must be refused");
        }
    }

    #[test]
    fn invalid_egress_patterns_are_refused_naming_the_entry() {
        let cases = [
            ("*.svc.cluster.local:5000", None),
            (
                "svc.cluster.local",
                Some("egress[0]: \"svc.cluster.local\" is not host:port"),
            ),
            ("*:443", Some("host \"*\" is neither a DNS name")),
            (
                "a.*.example.com:443",
                Some("host \"a.*.example.com\" is neither"),
            ),
            ("example.com:0", Some("port \"0\" is not 1-65535")),
            ("example.com:65536", Some("port \"65536\" is not 1-65535")),
            ("example.com:*", Some("port \"*\" is not 1-65535")),
            ("10.0.0.1:443", Some("host \"10.0.0.1\" is neither")),
            (
                "https://example.com:443",
                Some("host \"https://example.com\" is neither"),
            ),
            (
                "example.com/path:443",
                Some("host \"example.com/path\" is neither"),
            ),
            (":443", Some("host \"\" is neither")),
        ];
        for (pattern, expected) in cases {
            let result = AllowList::parse(&[pattern.to_owned()]);
            match (expected, result) {
                (None, Ok(_)) => {}
                (Some(fragment), Err(message)) => assert!(
                    message.starts_with("egress[0]: ") && message.contains(fragment),
                    "{pattern}: {message}"
                ),
                (expected, result) => panic!("{pattern}: expected {expected:?}, got {result:?}"),
            }
        }
    }
}
