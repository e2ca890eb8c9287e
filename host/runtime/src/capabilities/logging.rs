//! The `logging` import: guest log lines into the host's `tracing`, tagged with the plugin
//! and the object of the pass.

use crate::bindings::logging::{Host, Level};

/// Who is logging: the plugin and the object of the pass.
#[derive(Debug, Clone)]
pub(crate) struct LogCtx {
    pub plugin: String,
    pub object: String,
}

/// Longest guest log line kept; the rest is cut with a marker.
const MAX_LINE: usize = 8 * 1024;

impl Host for LogCtx {
    async fn log(&mut self, level: Level, message: String) {
        let message = truncate(&message, MAX_LINE);
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

/// `text` cut to at most `max` bytes on a character boundary.
pub fn truncate(text: &str, max: usize) -> std::borrow::Cow<'_, str> {
    if text.len() <= max {
        return text.into();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes cut)", &text[..end], text.len() - end).into()
}

#[cfg(test)]
mod tests {
    use super::truncate;

    #[test]
    fn a_long_line_is_cut_on_a_character_boundary() {
        assert_eq!(truncate("ab", 5), "ab");
        assert_eq!(truncate("äöü", 3), "ä… (4 bytes cut)");
    }
}
