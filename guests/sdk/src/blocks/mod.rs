//! The CobaltCore building blocks: what a reconciler's pipeline steps call.
//!
//! One module per package of `spec/cobaltcore-common-packages.txt`, each written against
//! [`Cluster`](crate::Cluster). Every Ensure/Run/Prune function is a thin wrapper around a
//! pure decision function (what to do given the existing and the desired object, which
//! objects to prune, whether an object is ready) so the decisions are tested without a
//! cluster.
//!
//! - [`apply`]: server-side apply under [`apply::FIELD_MANAGER`] (EnsureObject).
//! - [`config`]: INI rendering, immutable content-hashed ConfigMaps and their pruning.
//! - [`database`]: mariadb-operator Database, User and Grant.
//! - [`deployment`]: Deployments, Services and Deployment readiness.
//! - [`job`]: run-once Jobs with a re-run key, and CronJobs.
//! - [`optional`]: objects applied while their spec block is set and deleted once it is
//!   not.
//! - [`policy`]: oslo.policy rules: load, merge, validate, render.
//! - [`remote_children`]: children on a target cluster: opening the target, the gate and
//!   deletion decisions, the owner-label sweep.
//! - [`targeted_parent`]: those decisions carried out through a parent's pass.
//! - [`satellite`]: resolving a satellite's parent, observing its projection, collecting
//!   a parent's satellites.
//! - [`secrets`]: ExternalSecrets, Secrets, PushSecrets and secret-store gates.
//! - [`service`]: the steps a minimal OpenStack API service parent shares: credentials,
//!   connection Secret, database and schema sync, `[keystone_authtoken]`.
//! - [`tls`]: cert-manager Certificates.
//! - [`types`]: the spec blocks OpenStack service CRs share (image, database, cache, …).
//! - [`pipeline`]: steps, parallel groups, and the status write that ends every pass.
//! - [`conditions`]: setting `metav1.Condition`s the way `meta.SetStatusCondition` does.

pub mod apply;
pub mod conditions;
pub mod config;
pub mod database;
pub mod deployment;
pub mod job;
pub mod optional;
pub mod pipeline;
pub mod policy;
pub mod remote_children;
pub mod satellite;
pub mod secrets;
pub mod service;
pub mod targeted_parent;
pub mod tls;
pub mod types;
