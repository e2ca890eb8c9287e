//! The API's in-cluster address: the Service `{name}` in front of the API pods, and the
//! endpoint URL it gives (`http://{name}.{ns}.svc.cluster.local:{port}`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Service as K8sService, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::Service;

/// The Service `{name}` selecting the pods labelled `labels`, port `port_name` on `port`
/// (the same target port, TCP).
pub fn api_service(
    service: &Service<'_>,
    labels: &BTreeMap<String, String>,
    port_name: &str,
    port: i32,
) -> K8sService {
    K8sService {
        metadata: ObjectMeta {
            name: Some(service.name.to_owned()),
            namespace: Some(service.namespace.to_owned()),
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(labels.clone()),
            ports: Some(vec![ServicePort {
                name: Some(port_name.to_owned()),
                port,
                target_port: Some(IntOrString::Int(port)),
                protocol: Some("TCP".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
        status: None,
    }
}

/// `http://{name}.{ns}.svc.cluster.local:{port}`.
pub fn endpoint(service: &Service<'_>, port: i32) -> String {
    format!(
        "http://{}.{}.svc.cluster.local:{port}",
        service.name, service.namespace
    )
}
