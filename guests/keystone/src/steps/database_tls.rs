//! Step 2 — DatabaseTLS (facts §2.4): the client Certificate Keystone presents to a managed
//! MariaDB, or the record that none is needed.
//!
//! | Case | Certificate `{name}-db-client` | DatabaseTLSReady |
//! |---|---|---|
//! | TLS off | deleted (when cert-manager is served and the Keystone controls it) | True `NotRequired` |
//! | on, a ref name empty | — | False `MissingCertificateRefs`, error |
//! | on, brownfield | deleted (likewise) | True `ExternallyManaged` |
//! | on, managed, not issued yet | applied | False `CertificatePending`, 15 s |
//! | on, managed, issued | applied | True `CertificateIssued` |
//! | apply failed | — | False `CertificateError`, error |
//! | the kind probe failed | — | False `CapabilityProbeFailed`, error |

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::blocks::optional::{self, WhenAbsent, ensure_or_delete};
use wasm_operator_sdk::blocks::tls::ensure_certificate;
use wasm_operator_sdk::external::certmanager::{Certificate, CertificateSpec, IssuerRef};

use crate::conditions::DATABASE_TLS_READY;
use crate::error::Error;
use crate::labels::common_labels;
use crate::pass::{Pass, SECRET_POLLING, StepResult};

/// The ClusterIssuer of the OpenStack database trust domain.
pub(crate) const DB_CA_ISSUER: &str = "openstack-db-ca-issuer";

/// `{name}-db-client`: the Certificate and the Secret cert-manager issues it into.
pub(crate) fn certificate_name(keystone: &str) -> String {
    format!("{keystone}-db-client")
}

/// The Certificate of a managed database's client key pair.
pub(crate) fn certificate(pass: &Pass<'_>) -> Certificate {
    let name = certificate_name(pass.name());
    Certificate {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(pass.name())),
            ..Default::default()
        },
        spec: CertificateSpec {
            secret_name: name,
            common_name: Some(pass.name().to_owned()),
            issuer_ref: IssuerRef {
                name: DB_CA_ISSUER.into(),
                kind: Some("ClusterIssuer".into()),
                group: Some("cert-manager.io".into()),
            },
            usages: vec![
                "client auth".into(),
                "digital signature".into(),
                "key encipherment".into(),
            ],
            ..Default::default()
        },
        status: None,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let database = pass.keystone.spec.database.clone();
    let Some(tls) = database.tls.as_ref().filter(|t| t.is_enabled()) else {
        delete_managed_certificate(pass)?;
        pass.condition(
            DATABASE_TLS_READY,
            true,
            "NotRequired",
            "Database TLS is not enabled; using plaintext connection",
        );
        return Ok(None);
    };
    if tls.ca_bundle_secret_ref.name.is_empty() || tls.client_cert_secret_ref.name.is_empty() {
        pass.condition(
            DATABASE_TLS_READY,
            false,
            "MissingCertificateRefs",
            "Database TLS is enabled but caBundleSecretRef.name and clientCertSecretRef.name must both be set",
        );
        return Err(Error::Spec(format!(
            "database TLS enabled (mode {:?}) but caBundleSecretRef.name and/or \
             clientCertSecretRef.name are empty; refusing to build an invalid certificate volume",
            tls.mode
        )));
    }
    if !database.is_managed() {
        delete_managed_certificate(pass)?;
        let message = format!(
            "Database TLS uses externally managed client certificate Secret {:?} (brownfield database)",
            tls.client_cert_secret_ref.name
        );
        pass.condition(DATABASE_TLS_READY, true, "ExternallyManaged", &message);
        return Ok(None);
    }
    let certificate = certificate(pass);
    let name = certificate_name(pass.name());
    match ensure_certificate(pass.cluster, &pass.owner, &certificate) {
        Err(source) => {
            let error = Error::Certificate {
                what: pass.key(&name),
                source,
            };
            pass.condition(
                DATABASE_TLS_READY,
                false,
                "CertificateError",
                &error.to_string(),
            );
            Err(error)
        }
        Ok(false) => {
            let message =
                format!("Waiting for cert-manager to issue database client Certificate {name:?}");
            pass.condition(DATABASE_TLS_READY, false, "CertificatePending", &message);
            Ok(Some(SECRET_POLLING))
        }
        Ok(true) => {
            let message =
                format!("Database client Certificate {name:?} issued into Secret {name:?}");
            pass.condition(DATABASE_TLS_READY, true, "CertificateIssued", &message);
            Ok(None)
        }
    }
}

/// Deletes `{name}-db-client` when the cluster serves Certificates (none can exist
/// otherwise) and the Keystone controls it; a failed probe sets `CapabilityProbeFailed`.
fn delete_managed_certificate(pass: &mut Pass<'_>) -> Result<(), Error> {
    let name = certificate_name(pass.name());
    let deleted = ensure_or_delete::<_, Certificate>(
        pass.cluster,
        &pass.owner,
        pass.namespace(),
        &name,
        None,
        WhenAbsent::DeleteIfServed,
    );
    match deleted {
        Ok(_) => Ok(()),
        Err(optional::Error::Served { kind, source }) => {
            let error = Error::Probe { kind, source };
            pass.condition(
                DATABASE_TLS_READY,
                false,
                "CapabilityProbeFailed",
                &error.to_string(),
            );
            Err(error)
        }
        Err(other) => Err(other.into()),
    }
}

#[cfg(test)]
#[path = "database_tls_tests.rs"]
mod tests;
