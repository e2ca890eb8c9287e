//! `wasm-operator plugin check FILE`: every load-time check, without a cluster.
//!
//! The file is read, hashed (and compared with its `plugins.toml` pin when the directory
//! has one), compiled, checked against the contract, pre-instantiated and described, with
//! the limits `plugins.toml` gives it — what the operator does before it lets a file serve.

use std::fmt::Write as _;
use std::path::Path;

use crate::cli::inspect;
use crate::operator::loader;
use wasm_operator_runtime::Runtime;

/// The report of a check, and whether every check passed.
pub async fn run(runtime: &Runtime, file: &Path) -> (String, bool) {
    let mut out = String::new();
    let file = match loader::plugin_file(file) {
        Ok(file) => file,
        Err(error) => {
            let _ = writeln!(out, "refused: {error}");
            return (out, false);
        }
    };
    let settings = &file.settings;
    let limits = settings.limits(runtime.config().default_limits);
    match loader::check(runtime, &file).await {
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
