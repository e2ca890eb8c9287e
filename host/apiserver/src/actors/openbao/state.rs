//! The OpenBao stand-in's data: ACL policies and their evaluation, tokens, AppRoles and
//! their secret-ids, Kubernetes auth roles, KV v2 mounts.

use std::collections::{BTreeMap, HashMap};

use serde_json::Value;

/// One rule of an ACL policy: a path pattern (`*` at the end is a prefix glob, `+` one
/// segment) and its capabilities.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    pub path: String,
    pub capabilities: Vec<String>,
}

/// An issued token.
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub accessor: String,
    pub policies: Vec<String>,
    pub metadata: BTreeMap<String, String>,
    /// Epoch seconds; `None` never expires (the root token).
    pub expires_at: Option<i64>,
    pub ttl: i64,
}

/// An AppRole.
#[derive(Clone, Debug)]
pub(crate) struct AppRole {
    pub role_id: String,
    pub policies: Vec<String>,
    /// Seconds a new secret-id is valid; 0 = forever.
    pub secret_id_ttl: i64,
    pub token_ttl: i64,
}

/// A minted secret-id.
#[derive(Clone, Debug)]
pub(crate) struct SecretId {
    pub role: String,
    /// Epoch seconds; `None` never expires.
    pub expires_at: Option<i64>,
}

/// A Kubernetes auth role.
#[derive(Clone, Debug)]
pub(crate) struct KubernetesRole {
    pub service_account_names: Vec<String>,
    pub service_account_namespaces: Vec<String>,
    /// The audience the JWT must carry, when set.
    pub audience: Option<String>,
    pub policies: Vec<String>,
    pub token_ttl: i64,
}

/// One version of a KV v2 secret.
#[derive(Clone, Debug)]
pub(crate) struct Version {
    pub data: Value,
    pub created_time: String,
    /// Empty while not deleted.
    pub deletion_time: String,
    pub destroyed: bool,
}

/// A KV v2 secret: its versions (1-based).
#[derive(Clone, Debug, Default)]
pub(crate) struct Secret {
    pub versions: Vec<Version>,
    pub created_time: String,
    pub updated_time: String,
}

/// Everything the stand-in holds.
#[derive(Default)]
pub(crate) struct Vault {
    pub policies: BTreeMap<String, Vec<Rule>>,
    pub tokens: HashMap<String, Token>,
    pub approles: BTreeMap<String, AppRole>,
    pub secret_ids: HashMap<String, SecretId>,
    pub kubernetes_roles: BTreeMap<String, KubernetesRole>,
    /// KV v2 mounts by path (no slashes), each its secrets by path.
    pub kv: BTreeMap<String, BTreeMap<String, Secret>>,
}

/// Whether `pattern` (an ACL path) matches `path`, and how specific the match is: an
/// exact match beats every glob, a longer glob beats a shorter one.
fn matches(pattern: &str, path: &str) -> Option<(bool, usize)> {
    let (body, glob) = pattern
        .strip_suffix('*')
        .map_or((pattern, false), |body| (body, true));
    let want: Vec<&str> = body.split('/').collect();
    let have: Vec<&str> = path.split('/').collect();
    if want.len() > have.len() || (!glob && want.len() != have.len()) {
        return None;
    }
    for (i, (w, h)) in want.iter().zip(&have).enumerate() {
        let ok = if glob && i + 1 == want.len() {
            h.starts_with(w)
        } else {
            *w == "+" || w == h
        };
        if !ok {
            return None;
        }
    }
    Some((!glob, body.len()))
}

impl Vault {
    /// The capabilities `policies` grant on `path`: for each policy its most specific
    /// matching rule, united; `deny` anywhere wins; nothing matching is `["deny"]`; the
    /// `root` policy is `["root"]`.
    pub(crate) fn capabilities(&self, policies: &[String], path: &str) -> Vec<String> {
        if policies.iter().any(|p| p == "root") {
            return vec!["root".into()];
        }
        let mut granted: Vec<String> = Vec::new();
        for rules in policies.iter().filter_map(|p| self.policies.get(p)) {
            let best = rules
                .iter()
                .filter_map(|r| matches(&r.path, path).map(|score| (score, r)))
                .max_by_key(|(score, _)| *score);
            if let Some((_, rule)) = best {
                for capability in &rule.capabilities {
                    if !granted.contains(capability) {
                        granted.push(capability.clone());
                    }
                }
            }
        }
        if granted.is_empty() || granted.iter().any(|c| c == "deny") {
            return vec!["deny".into()];
        }
        granted.sort();
        granted
    }

    /// Whether `policies` grant `capability` on `path` (root grants everything).
    pub(crate) fn allows(&self, policies: &[String], path: &str, capability: &str) -> bool {
        let granted = self.capabilities(policies, path);
        granted.iter().any(|c| c == "root" || c == capability)
    }
}

/// Parses the policy language's `path "…" { capabilities = [ … ] }` blocks (other stanzas
/// inside a block are ignored).
pub(crate) fn parse_policy(text: &str) -> Result<Vec<Rule>, String> {
    let block =
        regex::Regex::new(r#"path\s+"([^"]+)"\s*\{[^{}]*?capabilities\s*=\s*\[([^\]]*)\][^{}]*\}"#)
            .map_err(|e| e.to_string())?;
    let rules: Vec<Rule> = block
        .captures_iter(text)
        .map(|c| Rule {
            path: c[1].to_owned(),
            capabilities: c[2]
                .split(',')
                .map(|s| s.trim().trim_matches('"').to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        })
        .collect();
    let paths = text.matches("path").count();
    if rules.is_empty() || rules.len() != paths {
        return Err(format!(
            "failed to parse policy: {} path blocks, {} with capabilities",
            paths,
            rules.len()
        ));
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_specific_rule_of_a_policy_decides() {
        let mut vault = Vault::default();
        vault.policies.insert(
            "p".into(),
            parse_policy(
                r#"path "barbican/*" { capabilities = ["read", "list"] }
                   path "barbican/data/probe" { capabilities = ["create", "read", "update", "delete", "list"] }
                   path "sys/+/barbican" { capabilities = ["read"] }"#,
            )
            .expect("a policy"),
        );
        let p = ["p".to_owned()];
        assert_eq!(
            vault.capabilities(&p, "barbican/data/probe"),
            ["create", "delete", "list", "read", "update"]
        );
        assert_eq!(vault.capabilities(&p, "barbican/data/x"), ["list", "read"]);
        assert_eq!(vault.capabilities(&p, "sys/mounts/barbican"), ["read"]);
        assert_eq!(vault.capabilities(&p, "secret/data/x"), ["deny"]);
        assert!(parse_policy("path \"x\" { policy = \"read\" }").is_err());
    }
}
