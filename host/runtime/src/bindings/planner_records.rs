//! The records of `gitlab:secretgen/planner`, to and from the Rust types of
//! `wasm-operator-planner`: one `From` per record and direction, for each of the two
//! bindgen modules that hold them.
//!
//! The host generates the planner's records twice, as the export of the planner world
//! ([`planner`](super::planner)) and as the import of the planning reconciler world
//! ([`planner_import`](super::planner_import)); the two have the same fields. A value moves
//! from one to the other through the `wasm-operator-planner` record:
//! `export::SecretRequest::from(planner::SecretRequest::from(request))`.

use wasm_operator_planner as planner;

use super::planner as export;
use super::planner_import as import;

/// Both directions between `wasm-operator-planner`'s records and those of the bindgen
/// module `$wit`.
macro_rules! conversions {
    ($wit:ident) => {
        impl From<planner::Entry> for $wit::Entry {
            fn from(e: planner::Entry) -> Self {
                Self {
                    key: e.key,
                    value: e.value,
                }
            }
        }

        impl From<$wit::Entry> for planner::Entry {
            fn from(e: $wit::Entry) -> Self {
                Self {
                    key: e.key,
                    value: e.value,
                }
            }
        }

        impl From<planner::SecretRequest> for $wit::SecretRequest {
            fn from(r: planner::SecretRequest) -> Self {
                Self {
                    name: r.name,
                    entries: r.entries,
                    existing: r.existing,
                    ready_units: r.ready_units,
                    generate: r.generate,
                }
            }
        }

        impl From<$wit::SecretRequest> for planner::SecretRequest {
            fn from(r: $wit::SecretRequest) -> Self {
                Self {
                    name: r.name,
                    entries: r.entries,
                    existing: r.existing,
                    ready_units: r.ready_units,
                    generate: r.generate,
                }
            }
        }

        impl From<planner::SecretPlan> for $wit::SecretPlan {
            fn from(p: planner::SecretPlan) -> Self {
                Self {
                    name: p.name,
                    secret_type: p.secret_type,
                    add: p.add.into_iter().map(Into::into).collect(),
                    reports: p.reports,
                    declared_units: p.declared_units,
                    next_ready_units: p.next_ready_units,
                    type_kept: p.type_kept,
                    ready: p.ready,
                }
            }
        }

        impl From<$wit::SecretPlan> for planner::SecretPlan {
            fn from(p: $wit::SecretPlan) -> Self {
                Self {
                    name: p.name,
                    secret_type: p.secret_type,
                    add: p.add.into_iter().map(Into::into).collect(),
                    reports: p.reports,
                    declared_units: p.declared_units,
                    next_ready_units: p.next_ready_units,
                    type_kept: p.type_kept,
                    ready: p.ready,
                }
            }
        }

        impl From<planner::CertificateAction> for $wit::CertificateAction {
            fn from(action: planner::CertificateAction) -> Self {
                match action {
                    planner::CertificateAction::None => Self::None,
                    planner::CertificateAction::Issue => Self::Issue,
                    planner::CertificateAction::DeriveChain => Self::DeriveChain,
                    planner::CertificateAction::Report => Self::Report,
                }
            }
        }

        impl From<$wit::CertificateAction> for planner::CertificateAction {
            fn from(action: $wit::CertificateAction) -> Self {
                match action {
                    $wit::CertificateAction::None => Self::None,
                    $wit::CertificateAction::Issue => Self::Issue,
                    $wit::CertificateAction::DeriveChain => Self::DeriveChain,
                    $wit::CertificateAction::Report => Self::Report,
                }
            }
        }

        impl From<planner::CertificatesRequest> for $wit::CertificatesRequest {
            fn from(r: planner::CertificatesRequest) -> Self {
                Self {
                    certificate: r.certificate,
                    ca_secret: r.ca_secret,
                    tls_secret: r.tls_secret,
                    chain_secret: r.chain_secret,
                    ready_units: r.ready_units,
                    generate: r.generate,
                }
            }
        }

        impl From<$wit::CertificatesRequest> for planner::CertificatesRequest {
            fn from(r: $wit::CertificatesRequest) -> Self {
                Self {
                    certificate: r.certificate,
                    ca_secret: r.ca_secret,
                    tls_secret: r.tls_secret,
                    chain_secret: r.chain_secret,
                    ready_units: r.ready_units,
                    generate: r.generate,
                }
            }
        }

        impl From<planner::CertificatesPlan> for $wit::CertificatesPlan {
            fn from(p: planner::CertificatesPlan) -> Self {
                Self {
                    action: p.action.into(),
                    secrets: p.secrets.into_iter().map(Into::into).collect(),
                }
            }
        }

        impl From<$wit::CertificatesPlan> for planner::CertificatesPlan {
            fn from(p: $wit::CertificatesPlan) -> Self {
                Self {
                    action: p.action.into(),
                    secrets: p.secrets.into_iter().map(Into::into).collect(),
                }
            }
        }

        impl From<planner::PlanError> for $wit::PlanError {
            fn from(e: planner::PlanError) -> Self {
                Self {
                    subject: e.subject,
                    message: e.message,
                }
            }
        }

        impl From<$wit::PlanError> for planner::PlanError {
            fn from(e: $wit::PlanError) -> Self {
                Self {
                    subject: e.subject,
                    message: e.message,
                }
            }
        }
    };
}

conversions!(export);
conversions!(import);

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(name: &str) -> planner::SecretPlan {
        planner::SecretPlan {
            name: name.into(),
            secret_type: "Opaque".into(),
            add: vec![planner::Entry {
                key: "password".into(),
                value: b"x".to_vec(),
            }],
            reports: vec!["r".into()],
            declared_units: vec!["u".into()],
            next_ready_units: vec!["n".into()],
            type_kept: Some(("kubernetes.io/tls".into(), "Opaque".into())),
            ready: true,
        }
    }

    #[test]
    fn a_record_crosses_from_the_import_to_the_export_and_back_unchanged() {
        let request = planner::SecretRequest {
            name: "s".into(),
            entries: "[]".into(),
            existing: Some("{}".into()),
            ready_units: vec!["u".into()],
            generate: true,
        };
        let crossed = export::SecretRequest::from(planner::SecretRequest::from(
            import::SecretRequest::from(request.clone()),
        ));
        assert_eq!(planner::SecretRequest::from(crossed), request);

        let certificates = planner::CertificatesPlan {
            action: planner::CertificateAction::DeriveChain,
            secrets: vec![plan("ca"), plan("tls"), plan("chain")],
        };
        let crossed = import::CertificatesPlan::from(planner::CertificatesPlan::from(
            export::CertificatesPlan::from(certificates.clone()),
        ));
        assert_eq!(planner::CertificatesPlan::from(crossed), certificates);

        let error = planner::PlanError {
            subject: "s".into(),
            message: "m".into(),
        };
        let crossed = import::PlanError::from(planner::PlanError::from(export::PlanError::from(
            error.clone(),
        )));
        assert_eq!(planner::PlanError::from(crossed), error);
    }
}
