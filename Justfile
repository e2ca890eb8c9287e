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
