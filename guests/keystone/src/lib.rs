//! The Keystone reconciler.
//!
//! Reconciles `keystone.openstack.c5c3.io/v1alpha1` Keystones into a running OpenStack
//! Keystone (`cobaltcore-common-packages.txt`, "Reconciler Integration Pattern", and
//! `cobaltcore-facts.md` §1–2). [`types`] is the resource and the CRD is generated from it
//! ([`CRD_YAML`]).

pub mod types;

/// The rendered configuration files (public for the crate's tests against the real oslo
/// tools, not an interface).
#[doc(hidden)]
pub mod config;

#[cfg(test)]
mod crd;

pub use types::Keystone;

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/keystone.openstack.c5c3.io_keystones.yaml");
