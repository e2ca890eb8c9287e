//! The GitLabSecrets reconciler.
//!
//! Reconciles `apps.gitlab.com/v2alpha1` GitLabSecrets into the Secrets the GitLab chart
//! would otherwise generate with its shared-secrets hook Job ("The reconciler" in
//! `gitlabsecrets-reconciler.txt`). What to add to each Secret is decided by the secretgen
//! planner, reached through [`Planner`](wasm_operator_sdk::Planner).

pub mod types;

#[cfg(test)]
mod crd;

/// The committed CRD, generated from [`types`] (a test fails when it is stale).
pub const CRD_YAML: &str = include_str!("../../../crds/apps.gitlab.com_gitlabsecrets.yaml");
