//! The satellite handshake end to end (`cobaltcore-common-packages.txt`, "Package:
//! satellite"): the shipped parent and satellite plugins, run by the operator against the
//! embedded API server with the workload and mariadb-operator actors, for each parent and
//! its satellite kind.

mod glance;
mod harness;
