//! `cargo bench -p wasm-operator-bench`: the in-process scenarios of `wasm-operator bench`
//! (boundary costs, secretgen native vs in-guest), written to
//! `target/bench/cargo-bench/report.{md,json}`. `wasm-operator bench` (or `just bench`)
//! runs these and the end-to-end scenarios into one report.

use wasm_operator_bench::{BenchOptions, Scenario, run};

fn main() -> anyhow::Result<()> {
    // In-process scenarios only: no operator process is started.
    let mut options = BenchOptions::new(std::path::PathBuf::new());
    options.scenarios = vec![Scenario::Boundary, Scenario::Secretgen];
    options.out = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../target/bench/cargo-bench"
    )
    .into();
    // `cargo bench` passes `--bench`; a filter argument picks the scenarios by name.
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !filters.is_empty() {
        options.scenarios.retain(|s| {
            filters
                .iter()
                .any(|f| format!("{s:?}").to_lowercase().contains(&f.to_lowercase()))
        });
    }
    tokio::runtime::Runtime::new()?.block_on(run(&options))?;
    Ok(())
}
