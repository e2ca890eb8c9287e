//! The Keystone reconciler end to end (issue 19): the shipped keystone.wasm, run by the
//! operator against the embedded API server with the workload, mariadb-operator and
//! External Secrets actors (cert-manager where a test asks), and its admission called by
//! that server for kubectl.

mod converge;
mod deletion;
mod harness;
mod health;
mod identity;
mod policy;
mod reasons;
mod rotation;
mod upgrade;
