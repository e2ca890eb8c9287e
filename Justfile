# Short names for the common commands. Each is a plain cargo command underneath.

# The main job on the embedded default.
demo:
    cargo run --release -- demo

# Every test.
test:
    cargo test --workspace

# Guest unit tests under wasmtime only.
test-wasm:
    cargo test --target wasm32-wasip2 --lib -p wasm-operator-sdk -p secretgen

# Formatting and lints, as CI wants them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Describe a plugin file.
inspect file:
    cargo run --release -- plugin inspect {{file}}

# Every benchmark scenario (release build, under 10 minutes on 2 cores):
# target/bench/report.md and target/bench/report.json.
bench:
    cargo run --release --features bench -- bench

# The in-process scenarios alone (boundary costs, secretgen), and the API server's and
# secretgen's own benchmarks.
bench-micro:
    cargo bench -p wasm-operator --features bench
    cargo bench -p wasm-operator-apiserver
    cargo bench -p secretgen
