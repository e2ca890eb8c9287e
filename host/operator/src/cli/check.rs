//! `wasm-operator plugin check FILE`: every load-time check, without a cluster.
//!
//! The file is read, hashed (and compared with its `plugins.toml` pin when the directory
//! has one), compiled, checked against the contract, pre-instantiated and described, with
//! the limits `plugins.toml` gives it — what the operator does before it lets a file serve.

use std::fmt::Write as _;
use std::path::Path;

use crate::cli::inspect;
use crate::operator::plugin_config::PluginsToml;
use crate::runtime::Runtime;

/// The report of a check, and whether every check passed.
pub async fn run(runtime: &Runtime, file: &Path) -> (String, bool) {
    let mut out = String::new();
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    let config = match PluginsToml::read(dir) {
        Ok(config) => config,
        Err(error) => {
            let _ = writeln!(out, "refused: {error}");
            return (out, false);
        }
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let settings = config.settings(&stem);
    let limits = settings.limits(runtime.config().default_limits);
    match runtime
        .check(file, Some(limits), settings.sha256.as_deref())
        .await
    {
        Ok(plugin) => {
            out.push_str(&inspect::render(&plugin));
            let _ = writeln!(
                out,
                "limits:    deadline {:?}, memory {} MiB{}",
                limits.deadline,
                limits.memory_bytes >> 20,
                limits
                    .fuel
                    .map(|f| format!(", fuel {f}"))
                    .unwrap_or_default()
            );
            if settings.sha256.is_some() {
                let _ = writeln!(out, "pinned:    the sha256 matches plugins.toml");
            }
            if plugin.imports_planner() {
                let _ = writeln!(
                    out,
                    "links:     imports planner: served by the planner plugin of its directory"
                );
            }
            let _ = writeln!(out, "ok: every load-time check passed");
            (out, true)
        }
        Err(error) => {
            let _ = writeln!(out, "refused: {error}");
            (out, false)
        }
    }
}
