//! `wasm-operator plugin new NAME`: a reconciler crate that builds, tests natively and
//! under wasmtime, and loads, as generated.
//!
//! The crate depends on the SDK by path (this checkout's `guests/sdk`, or `--sdk`), and its
//! `.cargo/config.toml` runs `cargo test --target wasm32-wasip2` under the wasmtime of the
//! binary that generated it. Nothing is written when the directory exists.

use std::path::{Path, PathBuf};

/// The files every generated crate has, with `{{name}}`, `{{crate}}`, `{{sdk}}`,
/// `{{runner}}` and the [`Kind`]'s placeholders to fill.
const COMMON: &[(&str, &str)] = &[
    (
        ".cargo/config.toml",
        include_str!("template/config.toml.tmpl"),
    ),
    ("README.md", include_str!("template/README.md.tmpl")),
    (".gitignore", "/target\n"),
];

/// The ConfigMap copier (no `--kind`).
const CONFIG_MAP: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("template/configmap/Cargo.toml.tmpl"),
    ),
    ("src/lib.rs", include_str!("template/configmap/lib.rs.tmpl")),
    (
        "scenarios/copies-a-configmap/scenario.yaml",
        include_str!("template/configmap/scenario.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/given.yaml",
        include_str!("template/configmap/scenario-given.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/expect.yaml",
        include_str!("template/configmap/scenario-expect.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/absent.yaml",
        include_str!("template/configmap/scenario-absent.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/01-a-changed-source-is-copied-again/apply.yaml",
        include_str!("template/configmap/scenario-step1-apply.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/01-a-changed-source-is-copied-again/expect.yaml",
        include_str!("template/configmap/scenario-step1-expect.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/02-the-copy-goes-with-its-source/delete.yaml",
        include_str!("template/configmap/scenario-step2-delete.yaml.tmpl"),
    ),
    (
        "scenarios/copies-a-configmap/steps/02-the-copy-goes-with-its-source/absent.yaml",
        include_str!("template/configmap/scenario-step2-absent.yaml.tmpl"),
    ),
];

/// A reconciler of a custom resource (`--kind GROUP/VERSION/KIND`).
const CUSTOM: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        include_str!("template/custom/Cargo.toml.tmpl"),
    ),
    ("src/lib.rs", include_str!("template/custom/lib.rs.tmpl")),
    (
        "src/types.rs",
        include_str!("template/custom/types.rs.tmpl"),
    ),
    ("src/crd.rs", include_str!("template/custom/crd.rs.tmpl")),
    (
        "crds/{{plural}}.{{group}}.yaml",
        include_str!("template/custom/crd.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/scenario.yaml",
        include_str!("template/custom/scenario.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/given.yaml",
        include_str!("template/custom/scenario-given.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/expect.yaml",
        include_str!("template/custom/scenario-expect.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/steps/01-a-changed-message-is-written-again/apply.yaml",
        include_str!("template/custom/scenario-step1-apply.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/steps/01-a-changed-message-is-written-again/expect.yaml",
        include_str!("template/custom/scenario-step1-expect.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/steps/02-the-configmap-goes-with-it/delete.yaml",
        include_str!("template/custom/scenario-step2-delete.yaml.tmpl"),
    ),
    (
        "scenarios/writes-its-configmap/steps/02-the-configmap-goes-with-it/absent.yaml",
        include_str!("template/custom/scenario-step2-absent.yaml.tmpl"),
    ),
];

/// What the generated reconciler reconciles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// ConfigMaps: a copier.
    ConfigMap,
    /// A custom resource of its own, with a CRD generated from its types.
    Custom {
        group: String,
        version: String,
        kind: String,
        plural: String,
    },
}

impl std::str::FromStr for Kind {
    type Err = ScaffoldError;

    /// `ConfigMap`, or `GROUP/VERSION/KIND` (`example.com/v1/Widget`).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if text == "ConfigMap" {
            return Ok(Self::ConfigMap);
        }
        let bad = |why: &str| ScaffoldError::Kind(text.to_owned(), why.to_owned());
        let [group, version, kind] = text.split('/').collect::<Vec<_>>()[..] else {
            return Err(bad("not ConfigMap or GROUP/VERSION/KIND"));
        };
        let label = |s: &str| {
            !s.is_empty()
                && s.len() <= 63
                && s.starts_with(|c: char| c.is_ascii_alphanumeric())
                && s.ends_with(|c: char| c.is_ascii_alphanumeric())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        };
        if !group.contains('.') || group.len() > 253 || !group.split('.').all(label) {
            return Err(bad(
                "the group is a lowercase DNS name with a dot, such as example.com",
            ));
        }
        let versioned = version
            .strip_prefix('v')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
        if !versioned || !label(version) {
            return Err(bad("the version is v1, v1alpha1, v2beta3 and the like"));
        }
        if !kind.starts_with(|c: char| c.is_ascii_uppercase())
            || !kind.chars().all(|c| c.is_ascii_alphanumeric())
            || kind.len() > 63
        {
            return Err(bad("the kind is UpperCamelCase letters and digits"));
        }
        Ok(Self::Custom {
            group: group.to_owned(),
            version: version.to_owned(),
            kind: kind.to_owned(),
            plural: plural_of(kind),
        })
    }
}

/// The lowercase plural the CRD serves `kind` as (`Widget` → `widgets`, `Policy` →
/// `policies`, `Box` → `boxes`).
fn plural_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    let consonant_y =
        lower.ends_with('y') && !lower[..lower.len() - 1].ends_with(['a', 'e', 'i', 'o', 'u']);
    if consonant_y {
        format!("{}ies", &lower[..lower.len() - 1])
    } else if lower.ends_with(['s', 'x', 'z']) || lower.ends_with("ch") || lower.ends_with("sh") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}

impl Kind {
    fn files(&self) -> impl Iterator<Item = &'static (&'static str, &'static str)> {
        let own = match self {
            Self::ConfigMap => CONFIG_MAP,
            Self::Custom { .. } => CUSTOM,
        };
        own.iter().chain(COMMON)
    }

    /// The placeholders this kind fills.
    fn placeholders(&self) -> Vec<(&'static str, String)> {
        match self {
            Self::ConfigMap => vec![
                (
                    "{{summary}}",
                    "it copies every ConfigMap into `<name>-copy`, owned by the source, and \
                     records a `Copied` event when the copy changed."
                        .into(),
                ),
                ("{{primary}}", "ConfigMap".into()),
                ("{{install}}", String::new()),
            ],
            Self::Custom {
                group,
                version,
                kind,
                plural,
            } => vec![
                (
                    "{{summary}}",
                    format!(
                        "it reconciles `{kind}`s (`{group}/{version}`, CRD in `crds/`), \
                         writing each one's `spec.message` into a ConfigMap it owns and \
                         setting its `Ready` condition."
                    ),
                ),
                ("{{primary}}", kind.clone()),
                (
                    "{{install}}",
                    format!(" and `kubectl --kubeconfig kc apply -f crds/{plural}.{group}.yaml`"),
                ),
                ("{{api_version}}", format!("{group}/{version}")),
                ("{{group}}", group.clone()),
                ("{{version}}", version.clone()),
                ("{{plural}}", plural.clone()),
                ("{{singular}}", kind.to_ascii_lowercase()),
                ("{{kind}}", kind.clone()),
            ],
        }
    }
}

/// Why `plugin new` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum ScaffoldError {
    /// NAME is not a plugin name.
    #[error(
        "plugin name {0:?}: use lowercase letters, digits and '-', starting with a letter, \
         at most 63 characters (it names the crate, the plugin and its field manager)"
    )]
    Name(String),
    /// `--kind` is not a kind a crate can be generated for.
    #[error("--kind {0:?}: {1}")]
    Kind(String, String),
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

/// Writes the crate `name` reconciling `kind` into `parent/name`, depending on the SDK at
/// `sdk` and testing under `runner` (a `wasm-operator` binary); returns its directory.
pub fn new_plugin(
    name: &str,
    kind: &Kind,
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
    let mut placeholders = kind.placeholders();
    placeholders.extend([
        ("{{name}}", name.to_owned()),
        ("{{crate}}", name.replace('-', "_")),
        ("{{sdk}}", toml_string(&sdk)),
        ("{{runner}}", toml_string(runner)),
    ]);
    let fill = |template: &str| {
        placeholders
            .iter()
            .fold(template.to_owned(), |text, (key, value)| {
                text.replace(key, value)
            })
    };
    for (file, template) in kind.files() {
        let path = dir.join(fill(file));
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
        let error = new_plugin(
            "taken",
            &Kind::ConfigMap,
            parent.path(),
            &default_sdk(),
            runner,
        )
        .expect_err("the directory exists");
        assert!(matches!(error, ScaffoldError::Exists(_)), "{error}");
        let error = new_plugin(
            "fresh",
            &Kind::ConfigMap,
            parent.path(),
            Path::new("/nonexistent/sdk"),
            runner,
        )
        .expect_err("no SDK");
        assert!(error.to_string().contains("pass --sdk PATH"), "{error}");
        assert!(!parent.path().join("fresh").exists());
        let error = new_plugin(
            "Bad",
            &Kind::ConfigMap,
            parent.path(),
            &default_sdk(),
            runner,
        )
        .expect_err("name");
        assert!(error.to_string().contains("plugin name \"Bad\""), "{error}");
    }

    #[test]
    fn a_kind_is_config_map_or_group_version_kind_with_its_plural() {
        let custom = |group: &str, version: &str, kind: &str, plural: &str| Kind::Custom {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        let cases: Vec<(&str, Result<Kind, &str>)> = vec![
            ("ConfigMap", Ok(Kind::ConfigMap)),
            (
                "example.com/v1/Widget",
                Ok(custom("example.com", "v1", "Widget", "widgets")),
            ),
            (
                "example.com/v1alpha1/Policy",
                Ok(custom("example.com", "v1alpha1", "Policy", "policies")),
            ),
            (
                "example.com/v1/Box",
                Ok(custom("example.com", "v1", "Box", "boxes")),
            ),
            (
                "example.com/v1/Gateway",
                Ok(custom("example.com", "v1", "Gateway", "gateways")),
            ),
            ("Secret", Err("not ConfigMap or GROUP/VERSION/KIND")),
            (
                "example/v1/Widget",
                Err("the group is a lowercase DNS name"),
            ),
            (
                "Example.com/v1/Widget",
                Err("the group is a lowercase DNS name"),
            ),
            ("example.com/1/Widget", Err("the version is v1")),
            ("example.com/v1/widget", Err("the kind is UpperCamelCase")),
            ("example.com/v1/Wid-get", Err("the kind is UpperCamelCase")),
        ];
        for (text, expected) in cases {
            match (text.parse::<Kind>(), expected) {
                (Ok(kind), Ok(wanted)) => assert_eq!(kind, wanted, "{text}"),
                (Err(error), Err(wanted)) => {
                    let message = error.to_string();
                    assert!(
                        message.starts_with(&format!("--kind {text:?}: {wanted}")),
                        "{message}"
                    );
                }
                (result, _) => panic!("{text}: {result:?}"),
            }
        }
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
