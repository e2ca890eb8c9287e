//! The embedded API server, driven over HTTP with kube-rs (and kubectl), asserting on what
//! kube-apiserver would answer: status codes, Status bodies, resourceVersions,
//! managedFields.

mod support;

mod apply;
mod auth;
mod cel;
mod cert_manager;
mod crds;
mod crud;
mod defaults;
mod durability;
mod events;
mod external_secrets;
mod gateway;
mod hooks;
mod keystone;
mod kubectl;
mod lifecycle;
mod mariadb;
mod openbao;
mod patches;
mod serving;
mod tables;
mod tokens;
mod watch;
mod webhooks;
mod workloads;
