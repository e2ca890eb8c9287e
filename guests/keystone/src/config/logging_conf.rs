//! `logging.conf`: the Python `logging.config.fileConfig` file keystone.conf's
//! `log_config_append` points at when `spec.logging.format` is `json` — every record to
//! stderr through oslo.log's JSONFormatter (facts §2.7).
//!
//! The sections keep fileConfig's order (the three index sections, then one per logger,
//! handler and formatter); the handler's level is `NOTSET`, so the root logger's level is
//! the only filter.

use wasm_operator_sdk::blocks::types::{LOG_LEVELS, LoggingSpec};

use super::ConfigError;

/// The `format` that ships a `logging.conf`.
pub const JSON: &str = "json";

/// `spec.logging` with its leaf defaults (text, INFO, no debug) — also when the block is
/// absent, as for a Keystone admitted before the defaulting webhook ran.
pub fn effective(logging: Option<&LoggingSpec>) -> LoggingSpec {
    let mut logging = logging.cloned().unwrap_or_default();
    logging.default_leaves();
    logging
}

/// The `logging.conf` of a root logger at `level`.
pub fn render(level: &str) -> Result<String, ConfigError> {
    if !LOG_LEVELS.contains(&level) {
        return Err(ConfigError::LoggingLevel {
            level: level.to_owned(),
        });
    }
    Ok([
        "[loggers]",
        "keys = root",
        "",
        "[handlers]",
        "keys = stderr",
        "",
        "[formatters]",
        "keys = json",
        "",
        "[logger_root]",
        &format!("level = {level}"),
        "handlers = stderr",
        "",
        "[handler_stderr]",
        "class = StreamHandler",
        "args = (sys.stderr,)",
        "level = NOTSET",
        "formatter = json",
        "",
        "[formatter_json]",
        "class = oslo_log.formatters.JSONFormatter",
        "",
    ]
    .join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_logging_conf_sends_every_record_to_stderr_through_the_json_formatter() {
        let expected = "[loggers]\n\
            keys = root\n\
            \n\
            [handlers]\n\
            keys = stderr\n\
            \n\
            [formatters]\n\
            keys = json\n\
            \n\
            [logger_root]\n\
            level = WARNING\n\
            handlers = stderr\n\
            \n\
            [handler_stderr]\n\
            class = StreamHandler\n\
            args = (sys.stderr,)\n\
            level = NOTSET\n\
            formatter = json\n\
            \n\
            [formatter_json]\n\
            class = oslo_log.formatters.JSONFormatter\n";
        assert_eq!(render("WARNING").expect("renders"), expected);
    }

    #[test]
    fn a_level_python_logging_does_not_know_is_refused() {
        let cases: &[(&str, bool)] = &[
            ("INFO", true),
            ("info", false),
            ("TRACE", false),
            ("INFO\n[handler_x]", false),
        ];
        for (level, ok) in cases {
            match render(level) {
                Ok(_) => assert!(ok, "{level:?} rendered"),
                Err(err @ ConfigError::LoggingLevel { .. }) => {
                    assert!(!ok, "{level:?} refused: {err}");
                    assert!(
                        err.to_string()
                            .contains("is not one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
                        "{err}"
                    );
                }
                Err(other) => panic!("{level:?}: {other}"),
            }
        }
    }

    #[test]
    fn absent_logging_is_text_at_info_without_debug() {
        let logging = effective(None);
        assert_eq!(
            (
                logging.format.as_str(),
                logging.level.as_str(),
                logging.debug
            ),
            ("text", "INFO", Some(false))
        );
        let set = LoggingSpec {
            format: JSON.into(),
            ..Default::default()
        };
        let logging = effective(Some(&set));
        assert_eq!(
            (logging.format.as_str(), logging.level.as_str()),
            ("json", "INFO")
        );
    }
}
