//! Logging into the host's `tracing`, tagged by the host with the plugin and the object.
//!
//! Inside wasm a line crosses the WIT `logging` interface; natively it is a `tracing` event.
//! Never log secret values.

/// The severity of a log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Logs `message` at `level`.
pub fn log(level: Level, message: &str) {
    #[cfg(target_arch = "wasm32")]
    crate::wit::log(level, message);
    #[cfg(not(target_arch = "wasm32"))]
    match level {
        Level::Trace => tracing::trace!(target: "plugin", "{message}"),
        Level::Debug => tracing::debug!(target: "plugin", "{message}"),
        Level::Info => tracing::info!(target: "plugin", "{message}"),
        Level::Warn => tracing::warn!(target: "plugin", "{message}"),
        Level::Error => tracing::error!(target: "plugin", "{message}"),
    }
}

/// Logs at debug level.
pub fn debug(message: &str) {
    log(Level::Debug, message)
}

/// Logs at info level.
pub fn info(message: &str) {
    log(Level::Info, message)
}

/// Logs at warn level.
pub fn warn(message: &str) {
    log(Level::Warn, message)
}

/// Logs at error level.
pub fn error(message: &str) {
    log(Level::Error, message)
}
