//! The Keystone's admission (facts §1.4–1.6): defaulting and validation of writes of
//! Keystones, as the plugin's `default_object` and `validate_object`.
//!
//! - [`default_object`] fills the defaults of §1.5 ([`defaulting`]).
//! - [`validate_object`] checks every rule of §1.6 and, on update, the immutables of §1.4
//!   (the schema's CEL rules too, for an API server that does not evaluate them),
//!   answering with kube-apiserver-worded field errors and warnings ([`validation`]).
//! - [`owned_keys_overridden`] names the operator-owned `keystone.conf` keys
//!   `spec.extraConfig` overrides, for the Config step's `ExtraConfigHealthy` condition.
//!
//! Admission reads only a Keystone's `spec`: the status is the reconciler's, so a status
//! admission cannot read never blocks a spec edit, and defaulting never patches it.

// Until the plugin's Reconciler calls the entry points, only the tests use them.

mod blocks;
mod catalog;
mod cron;
mod defaulting;
mod exposure;
mod extra_config;
mod immutables;
mod owned_keys;
mod quantity;
mod release;
mod schedules;
mod url;
mod validation;
mod workload;

#[cfg(test)]
mod tests;

use serde::{Deserialize, Serialize};

use crate::types::KeystoneSpec;

pub(crate) use defaulting::default_object;
pub(crate) use owned_keys::owned_keys_overridden;
pub(crate) use validation::validate_object;

/// What admission reads and writes of a Keystone.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Admitted {
    #[serde(default)]
    spec: KeystoneSpec,
}
