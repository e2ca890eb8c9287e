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
        // tracing evaluates an event's arguments only when a subscriber takes the event, so
        // a line nobody reads is never escaped.
        let line = || crate::text::escape(&message, MAX_LINE);
        let (plugin, object) = (self.plugin.as_str(), self.object.as_str());
        match level {
            Level::Trace => tracing::trace!(target: "plugin", plugin, object, "{}", line()),
            Level::Debug => tracing::debug!(target: "plugin", plugin, object, "{}", line()),
            Level::Info => tracing::info!(target: "plugin", plugin, object, "{}", line()),
            Level::Warn => tracing::warn!(target: "plugin", plugin, object, "{}", line()),
            Level::Error => tracing::error!(target: "plugin", plugin, object, "{}", line()),
        }
    }
}
