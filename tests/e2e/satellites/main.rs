//! The satellite handshake end to end (`cobaltcore-common-packages.txt`, "Package:
//! satellite"): the shipped parent and satellite plugins, run by the operator against the
//! embedded API server with the workload, mariadb-operator and OpenBao actors, for each
//! parent and its satellite kind.

mod barbican;
mod barbican_targets;
mod cinder;
mod glance;
mod glance_targets;
mod harness;
