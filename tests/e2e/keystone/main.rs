//! The Keystone reconciler end to end (issues 19 and 20): the shipped keystone.wasm, run
//! by the operator against the embedded API server with the workload, mariadb-operator and
//! External Secrets actors (cert-manager, the Gateway API and the Keystone API stand-in
//! where a test asks; Debian's real Keystone for the health check), and its admission
//! called by that server for kubectl.

mod converge;
mod deletion;
mod federation;
mod harness;
mod health;
mod identity;
mod identity_backend_controller;
mod policy;
mod reasons;
mod rotation;
mod targets;
mod upgrade;
