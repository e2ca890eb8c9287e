# Short names for the common commands. Each is a plain cargo command underneath.

# The main job on the embedded default.
demo:
    cargo run --release -- demo

# Every test.
test:
    cargo test --workspace

# Guest unit tests under wasmtime only.
test-wasm:
    cargo test --target wasm32-wasip2 --lib -p wasm-operator-types -p wasm-operator-planner -p wasm-operator-sdk -p secretgen

# Formatting and lints, as CI wants them.
lint:
    cargo fmt --all -- --check
    cargo clippy --workspace --all-targets -- -D warnings

# Describe a plugin file.
inspect file:
    cargo run --release -- plugin inspect {{file}}

# Every benchmark scenario (release build, under 10 minutes on 2 cores):
# target/bench/report.md and target/bench/report.json. `wasm-operator bench` runs the
# wasm-operator-bench binary beside it; both must come from the same build.
bench *args:
    cargo build --release -p wasm-operator -p wasm-operator-bench
    target/release/wasm-operator bench {{args}}

# The in-process scenarios alone (boundary costs, secretgen), and the API server's and
# secretgen's own benchmarks.
bench-micro:
    cargo bench -p wasm-operator-bench
    cargo bench -p wasm-operator-apiserver
    cargo bench -p secretgen
