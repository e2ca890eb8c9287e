//! cert-manager (`cert-manager.io/v1`) stand-in: Issuers and ClusterIssuers (selfSigned and
//! CA) become `Ready`; a Certificate gets its Secret (`tls.crt`, `tls.key`, `ca.crt`): a
//! real certificate for its names, usages, duration and private key, signed by its issuer,
//! and becomes `Ready`. Renewal is not done.
//!
//! As cert-manager writes them:
//! - Issuer / ClusterIssuer status under `cert-manager-issuers` /
//!   `cert-manager-clusterissuers`: selfSigned `Ready=True`/`IsReady`; CA
//!   `Ready=True`/`KeyPairVerified` "Signing CA verified", or `Ready=False`/`ErrGetKeyPair`
//!   / `ErrInvalidKeyPair` while its Secret (`spec.ca.secretName`, in the Issuer's
//!   namespace; for a ClusterIssuer in [`CLUSTER_RESOURCE_NAMESPACE`]) is missing or holds
//!   no matching `tls.crt`/`tls.key`.
//! - the Certificate's Secret under `cert-manager-certificates-issuing`: type
//!   `kubernetes.io/tls`, the `cert-manager.io/*` annotations (certificate-name,
//!   issuer-name/kind/group, common-name, alt-names, ip-sans, uri-sans, email-sans), the
//!   label `controller.cert-manager.io/fao`, and `spec.secretTemplate`'s labels and
//!   annotations. A Secret whose annotations no longer match the spec is issued again.
//! - Certificate status under `cert-manager-certificates-readiness`: `Ready=True`/`Ready`
//!   "Certificate is up to date and has not expired", `notBefore`, `notAfter`,
//!   `renewalTime`; while not issued `Ready=False`/`DoesNotExist` (or `SecretMismatch`) and
//!   `Issuing=True`. `status.revision` under `cert-manager-certificates-issuing`.
//!
//! [`NOT_READY_ANNOTATION`](super::kit::NOT_READY_ANNOTATION) on an issuer makes it not
//! ready (its Certificates wait); on a Certificate it keeps it from being issued.

use std::sync::Arc;

use kube::Client;
use tokio::sync::Notify;

use super::kit::{self, Kind, Pass};
use super::{Actor, ActorContext, ActorError, Started};

mod certificate;
mod issuers;
pub(crate) mod keys;
pub(crate) mod x509;

const CRDS: &str = include_str!("../../../../../crds/external/cert-manager.yaml");

/// Where a ClusterIssuer's CA Secret lives (cert-manager's `--cluster-resource-namespace`).
pub(crate) const CLUSTER_RESOURCE_NAMESPACE: &str = "cert-manager";

const fn kind(kind: &'static str, plural: &'static str, namespaced: bool) -> Kind {
    Kind {
        group: "cert-manager.io",
        version: "v1",
        kind,
        plural,
        namespaced,
    }
}
pub(crate) const CERTIFICATE: Kind = kind("Certificate", "certificates", true);
pub(crate) const ISSUER: Kind = kind("Issuer", "issuers", true);
pub(crate) const CLUSTER_ISSUER: Kind = kind("ClusterIssuer", "clusterissuers", false);

struct CertManager {
    client: Client,
}

impl Pass for CertManager {
    async fn pass(&self) {
        let issuers = match issuers::reconcile(&self.client).await {
            Ok(issuers) => issuers,
            Err(error) => {
                tracing::warn!(actor = %Actor::CertManager, %error, "listing the issuers failed");
                return;
            }
        };
        if let Err(error) = certificate::reconcile_all(&self.client, &issuers).await {
            tracing::warn!(actor = %Actor::CertManager, %error, "listing the Certificates failed");
        }
    }
}

pub(crate) async fn start(ctx: ActorContext) -> Result<Started, ActorError> {
    kit::install_crds(&ctx.client, Actor::CertManager, "cert-manager", CRDS).await?;
    let wake = Arc::new(Notify::new());
    let mut tasks = kit::spawn_watchers(
        Actor::CertManager,
        &ctx.client,
        &[CERTIFICATE, ISSUER, CLUSTER_ISSUER, kit::SECRET],
        &wake,
    );
    tasks.push(kit::spawn_loop(
        Arc::new(CertManager { client: ctx.client }),
        wake,
    ));
    Ok(Started {
        tasks,
        handle: None,
    })
}
