//! The pipeline's steps, one file each (facts §2.2), tests beside them.

pub(crate) mod bootstrap;
pub(crate) mod config;
pub(crate) mod database;
pub(crate) mod database_tls;
pub(crate) mod database_upgrade;
pub(crate) mod db_connection;
pub(crate) mod deployment;
pub(crate) mod health_check;
pub(crate) mod hpa;
pub(crate) mod http_route;
pub(crate) mod identity_backends;
pub(crate) mod keys;
pub(crate) mod network_policy;
pub(crate) mod password_rotation;
pub(crate) mod policy_validation;
pub(crate) mod prune;
pub(crate) mod secrets;
pub(crate) mod trust_flush;
