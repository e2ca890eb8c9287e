//! Builds every guest component for `wasm32-wasip2`, so `cargo run`, `cargo test` and the
//! binary's `demo` find the `.wasm` plugins without a manual step.
//!
//! The guests are compiled by a nested
//! `cargo build --locked --release --target wasm32-wasip2` into their own target directory
//! (`<target>/wasm-guests`), then copied: shipped plugins
//! (`guests/*`) to `<target>/wasm-guests/plugins`, test-only plugins (`tests/guests/*`) to
//! `<target>/wasm-guests/test-plugins`. The directories reach the crate as the
//! `WASM_OPERATOR_PLUGIN_DIR` and `WASM_OPERATOR_TEST_PLUGIN_DIR` environment variables.
//! A missing `wasm32-wasip2` target is installed with rustup first (a `targets` list in
//! rust-toolchain.toml does not install it when the toolchain is already present).

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// Environment of this build script that must not leak into the nested cargo.
const DROPPED_VARS: &[&str] = &[
    "OUT_DIR",
    "TARGET",
    "HOST",
    "PROFILE",
    "OPT_LEVEL",
    "DEBUG",
    "NUM_JOBS",
    "RUSTC",
    "RUSTDOC",
    "RUSTC_LINKER",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_PRIMARY_PACKAGE",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_TARGET",
    "CARGO_MAKEFLAGS",
    "MAKEFLAGS",
    "MFLAGS",
];
const DROPPED_PREFIXES: &[&str] = &[
    "CARGO_FEATURE_",
    "CARGO_CFG_",
    "CARGO_PKG_",
    "CARGO_MANIFEST_",
    "DEP_",
];

fn main() {
    let manifest_dir = PathBuf::from(env("CARGO_MANIFEST_DIR"));
    let workspace = manifest_dir
        .join("../..")
        .canonicalize()
        .unwrap_or_else(|e| fail(&format!("workspace root: {e}")));
    let target_root = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace.join("target"));
    let out = target_root.join("wasm-guests");
    for watched in ["wit", "crates", "guests", "tests/guests", "Cargo.lock"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    println!("cargo:rerun-if-env-changed=WASM_OPERATOR_SKIP_GUEST_BUILD");
    let shipped = guest_packages(&workspace.join("guests"));
    let test_only = guest_packages(&workspace.join("tests/guests"));
    let plugins = out.join("plugins");
    let test_plugins = out.join("test-plugins");
    println!(
        "cargo:rustc-env=WASM_OPERATOR_PLUGIN_DIR={}",
        plugins.display()
    );
    println!(
        "cargo:rustc-env=WASM_OPERATOR_TEST_PLUGIN_DIR={}",
        test_plugins.display()
    );
    if std::env::var_os("WASM_OPERATOR_SKIP_GUEST_BUILD").is_some() {
        return;
    }

    ensure_target();
    let mut cargo = Command::new(env("CARGO"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if DROPPED_VARS.contains(&key.as_ref())
            || DROPPED_PREFIXES.iter().any(|p| key.starts_with(p))
        {
            cargo.env_remove(key.as_ref());
        }
    }
    cargo
        .current_dir(&workspace)
        // --locked: the guests are built from exactly the workspace's Cargo.lock.
        .args([
            "build",
            "--locked",
            "--release",
            "--target",
            TARGET,
            "--target-dir",
        ])
        .arg(&out);
    for package in shipped.iter().chain(&test_only) {
        cargo.args(["-p", package]);
    }
    run(&mut cargo, "building the guests for wasm32-wasip2");

    let built = out.join(TARGET).join("release");
    for (packages, dir) in [(&shipped, &plugins), (&test_only, &test_plugins)] {
        std::fs::create_dir_all(dir).unwrap_or_else(|e| fail(&format!("{}: {e}", dir.display())));
        for package in packages {
            let from = built.join(format!("{}.wasm", package.replace('-', "_")));
            let to = dir.join(format!("{package}.wasm"));
            copy_if_changed(&from, &to);
        }
    }
}

/// The names of the cdylib packages in the subdirectories of `dir`.
fn guest_packages(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut packages: Vec<String> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("Cargo.toml")).ok())
        .filter(|manifest| manifest.contains("cdylib"))
        .filter_map(|manifest| {
            manifest.lines().find_map(|l| {
                let value = l
                    .trim()
                    .strip_prefix("name")?
                    .trim()
                    .strip_prefix('=')?
                    .trim();
                Some(value.trim_matches('"').to_owned())
            })
        })
        .collect();
    packages.sort();
    packages
}

/// Installs the wasm32-wasip2 standard library with rustup when it is missing.
fn ensure_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", TARGET])
        .output();
    let installed = libdir.ok().filter(|o| o.status.success()).is_some_and(|o| {
        let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        std::fs::read_dir(dir)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    });
    if !installed {
        println!("cargo:warning=installing the {TARGET} target with rustup");
        let mut rustup = Command::new("rustup");
        rustup.args(["target", "add", TARGET]);
        if let Ok(toolchain) = std::env::var("RUSTUP_TOOLCHAIN") {
            rustup.args(["--toolchain", &toolchain]);
        }
        run(&mut rustup, "installing the wasm32-wasip2 target");
    }
}

fn copy_if_changed(from: &Path, to: &Path) {
    let new = std::fs::read(from).unwrap_or_else(|e| fail(&format!("{}: {e}", from.display())));
    if std::fs::read(to).ok().as_deref() != Some(new.as_slice()) {
        std::fs::write(to, new).unwrap_or_else(|e| fail(&format!("{}: {e}", to.display())));
    }
}

fn run(command: &mut Command, what: &str) {
    match command.status() {
        Ok(status) if status.success() => {}
        Ok(status) => fail(&format!("{what} failed ({status}); see the output above")),
        Err(e) => fail(&format!(
            "{what}: cannot run {:?}: {e}",
            command.get_program()
        )),
    }
}

fn env(key: &str) -> String {
    std::env::var(key).unwrap_or_else(|_| fail(&format!("{key} is not set")))
}

fn fail(message: &str) -> ! {
    eprintln!("wasm-operator build: {message}");
    std::process::exit(1)
}
