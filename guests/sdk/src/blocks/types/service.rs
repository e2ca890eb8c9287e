//! `logging` and `uwsgi`: how the API process logs and serves.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The oslo.log levels.
pub const LOG_LEVELS: &[&str] = &["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"];

/// oslo.log output.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
pub struct LoggingSpec {
    /// `text` (oslo.log's line format) or `json` (one object per record).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(extend("enum" = ["text", "json"], "default" = "text"))
    )]
    pub format: String,
    /// The root logger's level.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(
        feature = "schemars",
        schemars(extend("enum" = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"], "default" = "INFO"))
    )]
    pub level: String,
    /// oslo.log's `debug` flag (false when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
    /// Logger name to level (`sqlalchemy.engine: WARNING`), as `default_log_levels`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
        {"rule": "self.all(k, k != '')", "message": "logger name must not be empty"},
        {"rule": "self.all(k, self[k] in ['DEBUG','INFO','WARNING','ERROR','CRITICAL'])",
         "message": "per-logger level must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"}])))]
    pub per_logger_levels: BTreeMap<String, String>,
}

impl LoggingSpec {
    /// The leaf defaults: format `text`, level `INFO`, debug false.
    pub fn default_leaves(&mut self) {
        if self.format.is_empty() {
            self.format = "text".into();
        }
        if self.level.is_empty() {
            self.level = "INFO".into();
        }
        self.debug.get_or_insert(false);
    }
}

/// The uWSGI server of the API container.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[cfg_attr(feature = "schemars", schemars(extend("x-kubernetes-validations" = [
    {"rule": "!has(self.httpKeepAliveTimeout) || !has(self.httpKeepAlive) || self.httpKeepAlive",
     "message": "httpKeepAliveTimeout may only be set when httpKeepAlive is true"}])))]
pub struct UwsgiSpec {
    /// Worker processes (2 when unset).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1), extend("default" = 2)))]
    pub processes: i32,
    /// Threads per worker (1 when unset).
    #[serde(default, skip_serializing_if = "super::is_zero")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1), extend("default" = 1)))]
    pub threads: i32,
    /// `--http-keepalive` (true when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_keep_alive: Option<bool>,
    /// `--harakiri`: the longest a request may run, in seconds (no limit when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub harakiri: Option<i32>,
    /// `--http-keepalive-timeout`, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "schemars", schemars(range(min = 1)))]
    pub http_keep_alive_timeout: Option<i32>,
}

impl UwsgiSpec {
    /// The leaf defaults: 2 processes, 1 thread, keep-alive on.
    pub fn default_leaves(&mut self) {
        if self.processes == 0 {
            self.processes = 2;
        }
        if self.threads == 0 {
            self.threads = 1;
        }
        self.http_keep_alive.get_or_insert(true);
    }

    /// The values a pass runs with: those of `spec` (leaf defaults filled), or the
    /// defaults when the block is absent.
    pub fn effective(spec: Option<&Self>) -> Self {
        let mut effective = spec.cloned().unwrap_or_default();
        effective.default_leaves();
        effective
    }
}
