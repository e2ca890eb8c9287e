//! The `logging` import: guest log lines into the host's `tracing`, tagged with the plugin
//! and the object of the pass, escaped and capped ([`crate::text`]).

use crate::bindings::logging::{Host, Level};

/// Who is logging: the plugin and the object of the pass.
#[derive(Debug, Clone)]
pub(crate) struct LogCtx {
    pub plugin: String,
    pub object: String,
}

/// Longest guest log line kept (escaped); the rest is cut with a marker.
const MAX_LINE: usize = 8 * 1024;

impl Host for LogCtx {
    async fn log(&mut self, level: Level, message: String) {
        let enabled = match level {
            Level::Trace => tracing::enabled!(target: "plugin", tracing::Level::TRACE),
            Level::Debug => tracing::enabled!(target: "plugin", tracing::Level::DEBUG),
            Level::Info => tracing::enabled!(target: "plugin", tracing::Level::INFO),
            Level::Warn => tracing::enabled!(target: "plugin", tracing::Level::WARN),
            Level::Error => tracing::enabled!(target: "plugin", tracing::Level::ERROR),
        };
        if !enabled {
            // Nobody reads the line: it is not escaped.
            return;
        }
        let message = crate::text::escape(&message, MAX_LINE);
        let (plugin, object) = (self.plugin.as_str(), self.object.as_str());
        match level {
            Level::Trace => tracing::trace!(target: "plugin", plugin, object, "{message}"),
            Level::Debug => tracing::debug!(target: "plugin", plugin, object, "{message}"),
            Level::Info => tracing::info!(target: "plugin", plugin, object, "{message}"),
            Level::Warn => tracing::warn!(target: "plugin", plugin, object, "{message}"),
            Level::Error => tracing::error!(target: "plugin", plugin, object, "{message}"),
        }
    }
}
