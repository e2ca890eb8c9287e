//! The pipeline's steps, one file each (facts §2.2), tests beside them.

#[cfg_attr(not(test), expect(dead_code, reason = "not yet in the step table"))]
pub(crate) mod bootstrap;
pub(crate) mod config;
pub(crate) mod database;
pub(crate) mod database_tls;
pub(crate) mod database_upgrade;
pub(crate) mod db_connection;
pub(crate) mod deployment;
#[cfg_attr(not(test), expect(dead_code, reason = "not yet in the step table"))]
pub(crate) mod health_check;
pub(crate) mod identity_backends;
pub(crate) mod keys;
pub(crate) mod network_policy;
pub(crate) mod policy_validation;
#[cfg_attr(not(test), expect(dead_code, reason = "not yet in the step table"))]
pub(crate) mod prune;
pub(crate) mod secrets;
