//! `wasm-operator plugin new NAME`: a reconciler crate that builds, tests natively and
//! under wasmtime, and loads, as generated.
//!
//! The crate depends on the SDK by path (this checkout's `guests/sdk`, or `--sdk`), and its
//! `.cargo/config.toml` runs `cargo test --target wasm32-wasip2` under the wasmtime of the
//! binary that generated it. Nothing is written when the directory exists.

use std::path::{Path, PathBuf};

/// The templates, with `{{name}}`, `{{crate}}`, `{{sdk}}` and `{{runner}}` to fill.
const FILES: &[(&str, &str)] = &[
    ("Cargo.toml", include_str!("template/Cargo.toml.tmpl")),
    (
        ".cargo/config.toml",
        include_str!("template/config.toml.tmpl"),
    ),
    ("src/lib.rs", include_str!("template/lib.rs.tmpl")),
    ("README.md", include_str!("template/README.md.tmpl")),
    (
        "scenarios/copies-a-configmap/scenario.yaml",
        include_str!("template/scenario.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/given.yaml",
        include_str!("template/scenario-given.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/expect.yaml",
        include_str!("template/scenario-expect.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/absent.yaml",
        include_str!("template/scenario-absent.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/01-a-changed-source-is-copied-again/apply.yaml",
        include_str!("template/scenario-step1-apply.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/01-a-changed-source-is-copied-again/expect.yaml",
        include_str!("template/scenario-step1-expect.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/02-the-copy-goes-with-its-source/delete.yaml",
        include_str!("template/scenario-step2-delete.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/02-the-copy-goes-with-its-source/absent.yaml",
        include_str!("template/scenario-step2-absent.yaml.tmpl"),
    ),
    (".gitignore", "/target\n"),
];

/// Why `plugin new` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// NAME is not a plugin name.
    #[error(
        "plugin name {0:?}: use lowercase letters, digits and '-', starting with a letter, \
         at most 63 characters (it names the crate, the plugin and its field manager)"
    )]
    Name(String),
    /// The crate's directory is there already.
    #[error("{0} exists: nothing was written")]
    Exists(PathBuf),
    /// No SDK where one was looked for.
    #[error(
        "no wasm-operator SDK at {0} (its Cargo.toml is missing): pass --sdk PATH, a checkout's guests/sdk"
    )]
    NoSdk(PathBuf),
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The SDK of the checkout this binary was built from.
pub fn default_sdk() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../guests/sdk")
}

/// Writes the crate `name` into `parent/name`, depending on the SDK at `sdk` and testing
/// under `runner` (a `wasm-operator` binary); returns its directory.
pub fn new_plugin(
    name: &str,
    parent: &Path,
    sdk: &Path,
    runner: &Path,
) -> Result<PathBuf, ScaffoldError> {
    if !valid_name(name) {
        return Err(ScaffoldError::Name(name.to_owned()));
    }
    let sdk = sdk
        .join("Cargo.toml")
        .canonicalize()
        .ok()
        .and_then(|manifest| manifest.parent().map(Path::to_path_buf))
        .ok_or_else(|| ScaffoldError::NoSdk(sdk.to_owned()))?;
    let dir = parent.join(name);
    if dir.exists() {
        return Err(ScaffoldError::Exists(dir));
    }
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", &name.replace('-', "_"))
            .replace("{{sdk}}", &toml_string(&sdk))
            .replace("{{runner}}", &toml_string(runner))
    };
    for (file, template) in FILES {
        let path = dir.join(file);
        let io = |source| ScaffoldError::Io {
            path: path.clone(),
            source,
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        std::fs::write(&path, fill(template)).map_err(io)?;
    }
    Ok(dir)
}

fn valid_name(name: &str) -> bool {
    name.len() <= 63
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
}

/// `path` as a TOML basic string, quoted and escaped.
fn toml_string(path: &Path) -> String {
    toml::Value::String(path.display().to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plugin_name_is_a_lowercase_dns_label() {
        let cases = [
            ("copier", true),
            ("config-copier2", true),
            ("Copier", false),
            ("2copier", false),
            ("copier-", false),
            ("copier_x", false),
            ("", false),
            (&"a".repeat(64), false),
        ];
        for (name, valid) in cases {
            assert_eq!(valid_name(name), valid, "{name:?}");
        }
    }

    #[test]
    fn an_existing_directory_or_a_missing_sdk_writes_nothing() {
        let parent = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(parent.path().join("taken")).expect("mkdir");
        let runner = Path::new("/bin/wasm-operator");
        let error = new_plugin("taken", parent.path(), &default_sdk(), runner)
            .expect_err("the directory exists");
        assert!(matches!(error, ScaffoldError::Exists(_)), "{error}");
        let error = new_plugin(
            "fresh",
            parent.path(),
            Path::new("/nonexistent/sdk"),
            runner,
        )
        .expect_err("no SDK");
        assert!(error.to_string().contains("pass --sdk PATH"), "{error}");
        assert!(!parent.path().join("fresh").exists());
        let error = new_plugin("Bad", parent.path(), &default_sdk(), runner).expect_err("name");
        assert!(error.to_string().contains("plugin name \"Bad\""), "{error}");
    }

    #[test]
    fn paths_are_written_as_toml_strings_that_read_back_as_the_path() {
        for path in ["/work/sdk", "/a b/\"c\"", "/it's/here", r"C:\sdk"] {
            let line = format!("x = {}", toml_string(Path::new(path)));
            let read: toml::Table = toml::from_str(&line).expect("valid TOML");
            assert_eq!(read["x"].as_str(), Some(path), "{line}");
        }
    }
}
