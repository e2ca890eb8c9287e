//! Service names off-cluster: `{service}.{namespace}.svc[.cluster.local]:{port}` resolved to
//! the endpoints the API server records for the Service, as kube-proxy reads them.
//!
//! The Service's port `port` names (or, unnamed, is) one port; the EndpointSlices labelled
//! `kubernetes.io/service-name={service}` give, for the port of the same name, the
//! addresses of the endpoints not marked unready. Where a cluster's DNS serves these names
//! (in-cluster, `--cluster-dns`), this resolver is not used.

use std::net::{IpAddr, SocketAddr};

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::discovery::v1::EndpointSlice;
use kube::Api;
use kube::api::ListParams;
use wasm_operator_runtime::{ResolveError, ServiceResolver};

/// Resolves Service names through the API server's Services and EndpointSlices.
pub struct EndpointSliceResolver {
    client: kube::Client,
}

impl EndpointSliceResolver {
    /// A resolver reading through `client`.
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }
}

#[async_trait::async_trait]
impl ServiceResolver for EndpointSliceResolver {
    async fn resolve(
        &self,
        namespace: &str,
        service: &str,
        port: u16,
    ) -> Result<Vec<SocketAddr>, ResolveError> {
        let lookup = |e: kube::Error| ResolveError::Lookup {
            namespace: namespace.to_owned(),
            service: service.to_owned(),
            message: e.to_string(),
        };
        let no_service = || ResolveError::NoService {
            namespace: namespace.to_owned(),
            service: service.to_owned(),
            port,
        };
        let found = Api::<Service>::namespaced(self.client.clone(), namespace)
            .get_opt(service)
            .await
            .map_err(lookup)?
            .ok_or_else(no_service)?;
        let port_name = found
            .spec
            .and_then(|s| s.ports)
            .unwrap_or_default()
            .into_iter()
            .find(|p| u16::try_from(p.port).ok() == Some(port))
            .ok_or_else(no_service)?
            .name
            .unwrap_or_default();
        let slices = Api::<EndpointSlice>::namespaced(self.client.clone(), namespace)
            .list(&ListParams::default().labels(&format!("kubernetes.io/service-name={service}")))
            .await
            .map_err(lookup)?;
        let addresses = addresses(&slices.items, &port_name);
        if addresses.is_empty() {
            return Err(ResolveError::NoEndpoints {
                namespace: namespace.to_owned(),
                service: service.to_owned(),
                port,
            });
        }
        Ok(addresses)
    }
}

/// The ready endpoints' addresses for the port named `port_name` ("" for an unnamed one).
fn addresses(slices: &[EndpointSlice], port_name: &str) -> Vec<SocketAddr> {
    let mut out = Vec::new();
    for slice in slices {
        let Some(target) = slice
            .ports
            .iter()
            .flatten()
            .find(|p| p.name.as_deref().unwrap_or_default() == port_name)
            .and_then(|p| p.port)
            .and_then(|p| u16::try_from(p).ok())
        else {
            continue;
        };
        for endpoint in slice.endpoints.iter().flatten() {
            let ready = endpoint
                .conditions
                .as_ref()
                .and_then(|c| c.ready)
                .unwrap_or(true);
            if !ready {
                continue;
            }
            out.extend(
                endpoint
                    .addresses
                    .iter()
                    .filter_map(|a| a.parse::<IpAddr>().ok())
                    .map(|ip| SocketAddr::new(ip, target)),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_ready_endpoints_of_the_named_port_are_addresses() {
        let slice: EndpointSlice = serde_json::from_value(json!({
            "metadata": {"name": "keystone-abc"},
            "addressType": "IPv4",
            "ports": [{"name": "api", "port": 15000}, {"name": "admin", "port": 15001}],
            "endpoints": [
                {"addresses": ["10.0.0.1"]},
                {"addresses": ["10.0.0.2"], "conditions": {"ready": false}},
                {"addresses": ["10.0.0.3"], "conditions": {"ready": true}},
            ],
        }))
        .expect("an EndpointSlice");
        assert_eq!(
            addresses(std::slice::from_ref(&slice), "api"),
            [
                "10.0.0.1:15000".parse().unwrap(),
                "10.0.0.3:15000".parse().unwrap()
            ] as [SocketAddr; 2]
        );
        assert!(addresses(&[slice], "other").is_empty());
    }
}
