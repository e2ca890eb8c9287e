//! `cache`: the Memcached servers a service caches in.

use serde::{Deserialize, Serialize};

use super::refs::LocalObjectReference;

/// The oslo.cache backend when `cache.backend` is empty.
pub const DEFAULT_CACHE_BACKEND: &str = "dogpile.cache.pymemcache";
/// The port of a managed Memcached cluster, and of a server named without one.
pub const MEMCACHED_PORT: u16 = 11211;

/// The cache: a managed Memcached (`clusterRef`) or explicit `servers`, exactly one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "has(self.clusterRef) != (has(self.servers) && size(self.servers) > 0)",
     "message": "exactly one of clusterRef or servers must be set"},
    {"rule": "!has(self.clusterRef) || !self.clusterRef.name.matches('[\\\\n\\\\r]')",
     "message": "clusterRef.name must not contain a newline or carriage return"}])))]
pub struct CacheSpec {
    /// A Memcached cluster in the CR's namespace (managed mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster_ref: Option<LocalObjectReference>,
    /// The oslo.cache backend (admission sets `dogpile.cache.pymemcache` when empty).
    #[serde(default)]
    #[cfg_attr(feature = "schemars", schemars(extend("x-required" = true)))]
    pub backend: String,
    /// `host:port` of each cache server (brownfield mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(inner(regex(pattern = r"^[^\n\r]*$"))))]
    pub servers: Vec<String>,
    /// The managed cluster's replica count.
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(
        feature = "schemars",
        schemars(range(min = 1), extend("default" = 3))
    )]
    pub replicas: i32,
}

impl CacheSpec {
    /// The servers as oslo.cache takes them: `servers` joined by `,`, else
    /// `<clusterRef.name>:11211`, else empty.
    pub fn resolved_servers(&self) -> String {
        if !self.servers.is_empty() {
            return self.servers.join(",");
        }
        match &self.cluster_ref {
            Some(r) if !r.name.is_empty() => format!("{}:{MEMCACHED_PORT}", r.name),
            _ => String::new(),
        }
    }

    /// The TCP ports of the cache servers, deduplicated in order (a server without a
    /// port, and a managed cluster, use 11211).
    pub fn ports(&self) -> Vec<u16> {
        let mut ports = Vec::new();
        if self.servers.is_empty() {
            if self.cluster_ref.is_some() {
                ports.push(MEMCACHED_PORT);
            }
            return ports;
        }
        for server in &self.servers {
            let port = server
                .rsplit_once(':')
                .and_then(|(host, port)| {
                    // An IPv6 literal without a port has colons but no brackets.
                    (!host.contains(':') || host.ends_with(']'))
                        .then(|| port.parse().ok())
                        .flatten()
                })
                .unwrap_or(MEMCACHED_PORT);
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        ports
    }
}
