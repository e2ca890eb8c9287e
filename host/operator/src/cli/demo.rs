//! `wasm-operator demo`: the shipped plugins, loaded into the real runtime.

use std::path::Path;

use crate::cli::{inspect, plugin_files};
use crate::runtime::Runtime;

/// Loads every plugin in `dir` and prints what each describes; a file that fails to load is
/// reported on one line and the others still load. Returns how many loaded and failed.
pub async fn run(runtime: &Runtime, dir: &Path) -> std::io::Result<(usize, usize)> {
    let files = plugin_files(dir)?;
    println!("loading {} plugin(s) from {}", files.len(), dir.display());
    let (mut loaded, mut failed) = (0, 0);
    for file in files {
        let started = std::time::Instant::now();
        match runtime.load(&file, None).await {
            Ok(plugin) => {
                loaded += 1;
                println!(
                    "\n{} loaded in {:.1} ms ({:?})\n{}",
                    plugin.name(),
                    started.elapsed().as_secs_f64() * 1e3,
                    plugin.cache_outcome(),
                    inspect::render(&plugin)
                );
            }
            Err(e) => {
                failed += 1;
                println!("\nrefused: {e}");
            }
        }
    }
    Ok((loaded, failed))
}
