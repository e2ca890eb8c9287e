//! The steps of a pass, one module each (the table is in [`crate::reconcile`]).

pub(crate) mod backends;
pub(crate) mod backup_backend;
pub(crate) mod backup_service;
pub(crate) mod config;
pub(crate) mod database;
pub(crate) mod db_connection;
pub(crate) mod deployment;
pub(crate) mod not_required;
pub(crate) mod secrets;
pub(crate) mod volume_services;
