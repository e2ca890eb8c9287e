//! The GitLabSecrets planner: decides what to add to Secrets, with no Kubernetes client.
//!
//! [`plan`] plans one Secret of spec.secrets; [`plan_certificates`] plans the CA, TLS and
//! chain Secrets of one spec.certificates entry as one unit. Both take the objects as JSON
//! and a [`KeySource`] for private keys, and return what to add and what to report; the
//! caller (the gitlabsecrets reconciler) reads the Secrets and writes the result. The rules
//! are those of "Generation" in `gitlabsecrets-reconciler.txt`, and the values are the bytes
//! the chart's Job wrote ("Behavior of the Job"), except where that page lists a difference.
//!
//! Built for wasm32 the crate is the `planner-plugin` component: it exports the WIT
//! `gitlab:secretgen/planner` interface and generates keys through the host's `crypto` import (the shim in
//! `wit.rs`). Natively the same functions run with [`NativeKeys`].
//!
//! ```
//! use secretgen::{NativeKeys, SecretRequest, plan};
//!
//! let request = SecretRequest {
//!     name: "demo-gitaly-secret".into(),
//!     entries: r#"[{"name":"demo-gitaly-secret","type":"Opaque","generators":[
//!         {"type":"random","key":"token","charset":"alphanumeric","length":64}]}]"#.into(),
//!     existing: None,
//!     ready_units: vec![],
//!     generate: true,
//! };
//! let plan = plan(&request, &NativeKeys).expect("plans");
//! assert!(plan.ready);
//! assert_eq!(plan.add[0].key, "token");
//! assert_eq!(plan.add[0].value.len(), 64);
//! assert_eq!(plan.next_ready_units, ["token"]);
//! ```

mod api;
mod cert;
mod certificates;
mod entries;
mod generators;
mod keys;
mod plan;
mod secret;
mod units;
mod yaml;

// The WIT shim is left out of test builds, so a wasm test binary imports no `crypto`.
#[cfg(all(target_arch = "wasm32", not(test)))]
mod wit;

pub use api::{
    CertificateAction, CertificatesPlan, CertificatesRequest, Entry, PlanError, PlanFailure,
    SecretPlan, SecretRequest,
};
pub use cert::CertError;
pub use certificates::{CERTIFICATE_SET_UNIT, CertificateError, plan_certificates};
pub use entries::EntryError;
pub use generators::GenerateError;
pub use generators::rails::RailsError;
pub use keys::{
    Curve, KeyAlgorithm, KeyError, KeySource, MAX_RSA_BITS, MIN_RSA_BITS, NativeKeys, SourceError,
};
pub use plan::{MAX_READY_UNITS, plan};
pub use secret::{MAX_SECRET_BYTES, SecretError};
pub use yaml::YamlError;

/// Where a plan reads the time of issue, called only when a certificate is issued: a plan
/// that issues none reads no clock, so its answer depends on its request alone (the host
/// may give it again for the same request).
pub(crate) type Clock<'a> = &'a dyn Fn() -> std::time::SystemTime;
