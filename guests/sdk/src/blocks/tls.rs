//! cert-manager Certificates (EnsureCertificate).
//!
//! DECISION: CobaltCore creates on first sight and overwrites `spec` on update; here both
//! are one server-side apply through [`ensure_object`], which creates, or sets exactly the
//! spec the builder built. Readiness is read off the server's response: a Certificate just
//! created has no `Ready` condition yet, so the first call reports not ready, as
//! CobaltCore's create path does.

use crate::blocks::apply::{ensure_object, name_of};
use crate::cluster::{Cluster, Owner};
use crate::external::certmanager::Certificate;
use crate::external::status_ready;
use crate::object::object_key;

/// Why ensuring a Certificate failed.
#[derive(Debug, thiserror::Error)]
#[error("applying {what}: {source}")]
pub struct Error {
    /// `Certificate <namespace>/<name>`.
    pub what: String,
    #[source]
    pub source: crate::Error,
}

fn is_certificate_ready(certificate: &Certificate) -> bool {
    status_ready(certificate.status.as_ref())
}

/// Creates or updates `certificate` under `owner`; `Ok(true)` once cert-manager reports it
/// `Ready=True` (and has written its Secret).
pub fn ensure_certificate<C: Cluster + ?Sized>(
    cluster: &C,
    owner: &Owner,
    certificate: &Certificate,
) -> Result<bool, Error> {
    let stored = ensure_object(cluster, owner, certificate).map_err(|source| Error {
        what: match name_of(certificate) {
            Ok((namespace, name)) => format!("Certificate {}", object_key(namespace, name)),
            Err(_) => "Certificate".to_owned(),
        },
        source,
    })?;
    Ok(is_certificate_ready(&stored))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::external::certmanager::{CertificateSpec, IssuerRef};
    use crate::object::ObjectRef;
    use crate::testing::{FakeCluster, owner};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use serde_json::json;

    fn certificate(common_name: &str) -> Certificate {
        Certificate {
            metadata: ObjectMeta {
                name: Some("keystone-db-client".into()),
                namespace: Some("ns".into()),
                ..Default::default()
            },
            spec: CertificateSpec {
                secret_name: "keystone-db-client".into(),
                common_name: Some(common_name.into()),
                issuer_ref: IssuerRef {
                    name: "openstack-db-ca-issuer".into(),
                    kind: Some("ClusterIssuer".into()),
                    group: Some("cert-manager.io".into()),
                },
                usages: vec!["client auth".into()],
                ..Default::default()
            },
            status: None,
        }
    }

    fn the_certificate(cluster: &FakeCluster) -> serde_json::Value {
        cluster
            .object(&ObjectRef::of::<Certificate>(
                Some("ns"),
                "keystone-db-client",
            ))
            .expect("stored")
    }

    #[test]
    fn a_new_certificate_is_created_owned_and_not_ready() {
        let cluster = FakeCluster::new();
        assert!(!ensure_certificate(&cluster, &owner(), &certificate("keystone")).expect("ok"));
        let stored = the_certificate(&cluster);
        assert_eq!(stored["metadata"]["ownerReferences"][0]["uid"], "owner-uid");
        assert_eq!(stored["spec"]["issuerRef"]["kind"], "ClusterIssuer");
    }

    #[test]
    fn an_update_sets_the_desired_spec_and_readiness_follows_the_ready_condition() {
        let cluster = FakeCluster::new().with(json!({
            "apiVersion": "cert-manager.io/v1", "kind": "Certificate",
            "metadata": {"name": "keystone-db-client", "namespace": "ns"},
            "spec": {"secretName": "keystone-db-client", "commonName": "old",
                "issuerRef": {"name": "openstack-db-ca-issuer"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
        assert!(ensure_certificate(&cluster, &owner(), &certificate("keystone")).expect("ok"));
        assert_eq!(the_certificate(&cluster)["spec"]["commonName"], "keystone");
    }
}
