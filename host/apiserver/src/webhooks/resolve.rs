//! Where a webhook is: its `clientConfig.url`, or its `clientConfig.service` resolved
//! through the server's own Services and EndpointSlices, as kube-proxy would route it (the
//! Service port numbered `service.port` names the EndpointSlice port; the first ready
//! endpoint address is called), with `{service}.{namespace}.svc` as the TLS server name.

use std::net::IpAddr;

use serde_json::Value;

use crate::server::State;
use crate::store::StoreKey;

/// One webhook's address.
#[derive(Debug, Clone)]
pub(crate) struct Endpoint {
    /// The URL as kube-apiserver names it in errors (`https://svc.ns.svc:443/path`).
    pub url: String,
    /// `host:port` to connect to.
    pub connect: String,
    /// The TLS server name the certificate must be valid for.
    pub server_name: String,
    /// The request path (no query).
    pub path: String,
}

/// Resolves `client_config`; `Err` with the reason kube-apiserver gives when it cannot.
pub(crate) fn resolve(state: &State, client_config: &Value) -> Result<Endpoint, String> {
    if let Some(url) = client_config["url"].as_str() {
        return from_url(url);
    }
    let service = &client_config["service"];
    let name = service["name"].as_str().unwrap_or_default();
    let namespace = service["namespace"].as_str().unwrap_or_default();
    let port = service["port"].as_i64().unwrap_or(443);
    let path = service["path"].as_str().unwrap_or("/").to_owned();
    let server_name = format!("{name}.{namespace}.svc");
    let url = format!("https://{server_name}:{port}{path}");
    let found = state
        .store
        .get(&StoreKey {
            group: String::new(),
            plural: "services".into(),
            namespace: namespace.into(),
            name: name.into(),
        })
        .ok_or_else(|| format!("service \"{name}\" not found"))?;
    let port_name = found
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|p| p["port"].as_i64() == Some(port))
        .map(|p| p["name"].as_str().unwrap_or_default().to_owned())
        .ok_or_else(|| format!("no service port {port} found for service \"{name}\""))?;
    let address = state
        .store
        .list("discovery.k8s.io", "endpointslices", Some(namespace))
        .map(|(_, slice)| slice)
        .filter(|slice| {
            slice.pointer("/metadata/labels/kubernetes.io~1service-name")
                == Some(&Value::from(name))
        })
        .find_map(|slice| ready_address(slice, &port_name))
        .ok_or_else(|| format!("no endpoints available for service \"{name}\""))?;
    Ok(Endpoint {
        url,
        connect: address,
        server_name,
        path,
    })
}

/// The first ready endpoint of `slice` with the port named `port_name`, as `ip:port`.
fn ready_address(slice: &Value, port_name: &str) -> Option<String> {
    let target = slice["ports"]
        .as_array()?
        .iter()
        .find(|p| p["name"].as_str().unwrap_or_default() == port_name)?["port"]
        .as_u64()?;
    slice["endpoints"]
        .as_array()?
        .iter()
        .filter(|e| e.pointer("/conditions/ready").and_then(Value::as_bool) != Some(false))
        .flat_map(|e| e["addresses"].as_array().cloned().unwrap_or_default())
        .filter_map(|a| a.as_str().and_then(|a| a.parse::<IpAddr>().ok()))
        .map(|ip| match ip {
            IpAddr::V4(_) => format!("{ip}:{target}"),
            IpAddr::V6(_) => format!("[{ip}]:{target}"),
        })
        .next()
}

/// An `https://host[:port]/path` URL (validated on write).
fn from_url(url: &str) -> Result<Endpoint, String> {
    let rest = url
        .strip_prefix("https://")
        .ok_or_else(|| format!("unsupported URL {url:?}"))?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, has_port) = if let Some(v6) = authority.strip_prefix('[') {
        let end = v6.find(']').ok_or_else(|| format!("bad host in {url:?}"))?;
        (&v6[..end], v6[end + 1..].starts_with(':'))
    } else {
        match authority.rsplit_once(':') {
            Some((h, _)) => (h, true),
            None => (authority, false),
        }
    };
    let connect = if has_port {
        authority.to_owned()
    } else {
        format!("{authority}:443")
    };
    Ok(Endpoint {
        url: url.to_owned(),
        connect,
        server_name: host.to_owned(),
        path: path.to_owned(),
    })
}
