//! `plugins.toml`: optional per-plugin settings next to the plugin files.
//!
//! ```toml
//! require_pins = true           # refuse every file (plugin, planner, canary) without a sha256 pin
//!
//! [plugins.fixture]             # the plugin file's stem: fixture.wasm
//! deadline_ms = 5000            # per-pass deadline
//! memory_mib = 64               # per-pass memory cap
//! fuel = 500000000              # per-pass fuel (instructions); turns fuel counting on
//! http_timeout_ms = 10000       # ceiling of each HTTP request's connect/response/between-bytes timeouts
//! http_max_response_kib = 3072  # most bytes of one HTTP response body
//! sha256 = "9f86d0…"            # refuse any other file content
//! source = "oci://ghcr.io/org/fixture:1.0"  # pulled into fixture.wasm (see `crate::oci`)
//! enabled = true                # false: do not run it
//! namespaces = ["shared"]       # namespaces it may reach besides its primary's ("*": all)
//! cluster_scoped = false        # true: it may use the cluster-scoped kinds it declares
//!
//! [plugins.fixture.canary]      # a second version for some objects
//! file = "fixture-next.wasm"
//! selector = "track=canary"     # primaries matching this label selector use it
//! sha256 = "5e1f…"              # the canary's own pin (the primary's does not apply)
//! ```
//!
//! Unknown keys are errors naming the key, so a typo never silently drops a limit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use wasm_operator_types::LabelSelector;

use wasm_operator_runtime::Limits;
use wasm_operator_runtime::backend::access::{Access, Namespaces};

/// The file name looked for in the plugin directory.
pub(crate) const FILE_NAME: &str = "plugins.toml";

/// Every plugin's settings, by file stem.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginsToml {
    /// Refuse every file that has no sha256 pin.
    #[serde(default)]
    pub require_pins: bool,
    #[serde(default)]
    pub plugins: BTreeMap<String, PluginSettings>,
}

/// One plugin's settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginSettings {
    pub deadline_ms: Option<u64>,
    pub memory_mib: Option<u64>,
    pub fuel: Option<u64>,
    /// The ceiling of an HTTP request's timeouts (and the timeout of each one the plugin
    /// leaves unset).
    pub http_timeout_ms: Option<u64>,
    /// The most KiB of one HTTP response body.
    pub http_max_response_kib: Option<u64>,
    pub sha256: Option<String>,
    /// The OCI artifact the file is pulled from (`oci://REGISTRY/REPO:TAG` or `@sha256:`).
    pub source: Option<String>,
    #[serde(default = "enabled")]
    pub enabled: bool,
    /// Namespaces its passes may reach besides their primary's; `["*"]` for all.
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Whether it may use the cluster-scoped kinds it declares.
    #[serde(default)]
    pub cluster_scoped: bool,
    pub canary: Option<Canary>,
    /// Whether the file must have a pin: `require_pins` of the whole file, set by
    /// [`PluginsToml::settings`].
    #[serde(skip)]
    pub require_pin: bool,
}

fn enabled() -> bool {
    true
}

impl Default for PluginSettings {
    fn default() -> Self {
        Self {
            deadline_ms: None,
            memory_mib: None,
            fuel: None,
            http_timeout_ms: None,
            http_max_response_kib: None,
            sha256: None,
            source: None,
            enabled: true,
            namespaces: Vec::new(),
            cluster_scoped: false,
            canary: None,
            require_pin: false,
        }
    }
}

/// A second version of a plugin for the primaries a label selector matches.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Canary {
    /// The canary's file, in the plugin directory.
    pub file: String,
    /// The label selector of the primaries it reconciles.
    pub selector: String,
    /// The canary file's own sha256 pin.
    pub sha256: Option<String>,
}

/// `plugins.toml` cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists and cannot be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file is not valid TOML of this shape (the message names the key and line).
    #[error("{}: {message}", path.display())]
    Parse { path: PathBuf, message: String },
    /// A value is out of range or malformed.
    #[error("{}: plugins.{plugin}.{field}: {message}", path.display())]
    Invalid {
        path: PathBuf,
        plugin: String,
        field: &'static str,
        message: String,
    },
}

impl PluginsToml {
    /// Reads `dir/plugins.toml`; no file means no settings.
    pub fn read(dir: &Path) -> Result<Self, ConfigError> {
        Self::read_file(&dir.join(FILE_NAME))
    }

    /// Reads `path` (`run --plugins-config`); no file means no settings.
    pub fn read_file(path: &Path) -> Result<Self, ConfigError> {
        let path = path.to_owned();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(source) => return Err(ConfigError::Read { path, source }),
        };
        Self::parse(&path, &text)
    }

    /// Parses and checks the text of `path`.
    pub(crate) fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let parsed: Self = toml::from_str(text).map_err(|e| ConfigError::Parse {
            path: path.to_owned(),
            message: e.to_string().trim_end().to_owned(),
        })?;
        for (plugin, settings) in &parsed.plugins {
            let invalid = |field: &'static str, message: String| ConfigError::Invalid {
                path: path.to_owned(),
                plugin: plugin.clone(),
                field,
                message,
            };
            if settings.deadline_ms == Some(0) {
                return Err(invalid("deadline_ms", "must be at least 1".into()));
            }
            if settings.memory_mib == Some(0) {
                return Err(invalid("memory_mib", "must be at least 1".into()));
            }
            if settings.http_timeout_ms == Some(0) {
                return Err(invalid("http_timeout_ms", "must be at least 1".into()));
            }
            if settings.http_max_response_kib == Some(0) {
                return Err(invalid(
                    "http_max_response_kib",
                    "must be at least 1".into(),
                ));
            }
            if let Some(sha) = &settings.sha256 {
                check_sha256(sha).map_err(|m| invalid("sha256", m))?;
            }
            if let Some(source) = &settings.source {
                source
                    .parse::<crate::oci::OciRef>()
                    .map_err(|e| invalid("source", e.to_string()))?;
                // The pull writes `NAME.wasm` into the plugin directory: a name is a file
                // stem, never a path.
                let stem = !plugin.is_empty()
                    && !plugin.starts_with('.')
                    && plugin
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
                if !stem {
                    return Err(invalid(
                        "source",
                        format!(
                            "{plugin:?} is not a plugin file stem (letters, digits, '-', '_', '.'), so no file can be pulled for it"
                        ),
                    ));
                }
            }
            for ns in &settings.namespaces {
                let valid = ns == "*" || wasm_operator_types::is_dns_label(ns);
                if !valid {
                    return Err(invalid(
                        "namespaces",
                        format!("{ns:?} is neither a namespace name nor \"*\""),
                    ));
                }
            }
            if let Some(canary) = &settings.canary {
                if let Some(sha) = &canary.sha256 {
                    check_sha256(sha).map_err(|m| invalid("canary.sha256", m))?;
                }
                LabelSelector::parse(&canary.selector)
                    .map_err(|e| invalid("canary.selector", e.to_string()))?;
                if !canary.file.ends_with(".wasm") || canary.file.contains('/') {
                    return Err(invalid(
                        "canary.file",
                        format!("{:?} is not a .wasm file name", canary.file),
                    ));
                }
            }
        }
        Ok(parsed)
    }

    /// The settings of the plugin in file `stem`.wasm.
    pub(crate) fn settings(&self, stem: &str) -> PluginSettings {
        let mut settings = self.plugins.get(stem).cloned().unwrap_or_default();
        settings.require_pin = self.require_pins;
        settings
    }

    /// The files that are canaries of another plugin (not plugins of their own).
    pub(crate) fn canary_files(&self) -> BTreeSet<&str> {
        self.plugins
            .values()
            .filter_map(|s| s.canary.as_ref().map(|c| c.file.as_str()))
            .collect()
    }

    /// Whether any plugin has a fuel limit (the runtime must count fuel).
    pub fn uses_fuel(&self) -> bool {
        self.plugins.values().any(|s| s.fuel.is_some())
    }
}

/// Refuses anything but 64 hex digits.
fn check_sha256(sha: &str) -> Result<(), String> {
    if sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()) {
        Ok(())
    } else {
        Err(format!("{sha:?} is not 64 hex digits"))
    }
}

impl PluginSettings {
    /// What these settings grant beyond the primary's namespace.
    pub(crate) fn access(&self) -> Access {
        let namespaces = if self.namespaces.iter().any(|ns| ns == "*") {
            Namespaces::All
        } else if self.namespaces.is_empty() {
            Namespaces::Primary
        } else {
            Namespaces::Also(self.namespaces.iter().cloned().collect())
        };
        Access {
            namespaces,
            cluster_scoped: self.cluster_scoped,
        }
    }

    /// The settings the canary of this plugin runs with: these limits and grants, the
    /// canary's own pin (none when it sets none) and the same `require_pin`.
    pub(crate) fn for_canary(&self) -> PluginSettings {
        PluginSettings {
            sha256: self.canary.as_ref().and_then(|c| c.sha256.clone()),
            canary: None,
            ..self.clone()
        }
    }

    /// These settings over `defaults`.
    pub(crate) fn limits(&self, defaults: Limits) -> Limits {
        Limits {
            deadline: self
                .deadline_ms
                .map_or(defaults.deadline, Duration::from_millis),
            memory_bytes: self
                .memory_mib
                .and_then(|mib| usize::try_from(mib.saturating_mul(1 << 20)).ok())
                .unwrap_or(defaults.memory_bytes),
            fuel: self.fuel.or(defaults.fuel),
            http_timeout: self
                .http_timeout_ms
                .map_or(defaults.http_timeout, Duration::from_millis),
            http_response_bytes: self
                .http_max_response_kib
                .and_then(|kib| usize::try_from(kib.saturating_mul(1 << 10)).ok())
                .unwrap_or(defaults.http_response_bytes),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PluginsToml, ConfigError> {
        PluginsToml::parse(Path::new("plugins.toml"), text)
    }

    #[test]
    fn settings_override_the_default_limits() {
        let config = parse(
            "[plugins.fixture]\ndeadline_ms = 500\nmemory_mib = 64\nfuel = 1000\n\
             http_timeout_ms = 250\nhttp_max_response_kib = 16\n\
             [plugins.fixture.canary]\nfile = \"next.wasm\"\nselector = \"track=canary\"\n",
        )
        .expect("parses");
        assert!(!config.require_pins);
        let limits = config.settings("fixture").limits(Limits::default());
        assert_eq!(limits.deadline, Duration::from_millis(500));
        assert_eq!(limits.memory_bytes, 64 << 20);
        assert_eq!(limits.fuel, Some(1000));
        assert_eq!(limits.http_timeout, Duration::from_millis(250));
        assert_eq!(limits.http_response_bytes, 16 << 10);
        assert!(config.settings("fixture").enabled);
        assert_eq!(config.canary_files(), BTreeSet::from(["next.wasm"]));
        assert!(config.uses_fuel());
        assert_eq!(config.settings("other"), PluginSettings::default());
        assert_eq!(config.settings("other").access(), Access::default());
    }

    #[test]
    fn namespaces_and_cluster_scoped_grant_access_beyond_the_primarys_namespace() {
        let config = parse(
            "[plugins.a]\nnamespaces = [\"shared\", \"infra\"]\ncluster_scoped = true\n\
             [plugins.b]\nnamespaces = [\"*\"]\n",
        )
        .expect("parses");
        assert_eq!(
            config.settings("a").access(),
            Access {
                namespaces: Namespaces::Also(BTreeSet::from(["infra".into(), "shared".into()])),
                cluster_scoped: true,
            }
        );
        assert_eq!(config.settings("b").access().namespaces, Namespaces::All);
        assert!(!config.settings("b").access().cluster_scoped);
    }

    #[test]
    fn bad_settings_are_refused_naming_the_plugin_and_the_field() {
        let cases = [
            (
                "an unknown key",
                "[plugins.a]\ndeadline = 5\n",
                "unknown field `deadline`",
            ),
            (
                "a zero deadline",
                "[plugins.a]\ndeadline_ms = 0\n",
                "plugins.a.deadline_ms: must be at least 1",
            ),
            (
                "a zero HTTP timeout",
                "[plugins.a]\nhttp_timeout_ms = 0\n",
                "plugins.a.http_timeout_ms: must be at least 1",
            ),
            (
                "a zero HTTP response cap",
                "[plugins.a]\nhttp_max_response_kib = 0\n",
                "plugins.a.http_max_response_kib: must be at least 1",
            ),
            (
                "a short sha256",
                "[plugins.a]\nsha256 = \"abc\"\n",
                "plugins.a.sha256: \"abc\" is not 64 hex digits",
            ),
            (
                "a short canary sha256",
                "[plugins.a.canary]\nfile = \"b.wasm\"\nselector = \"x\"\nsha256 = \"abc\"\n",
                "plugins.a.canary.sha256: \"abc\" is not 64 hex digits",
            ),
            (
                "a require_pins that is not a boolean",
                "require_pins = \"yes\"\n",
                "require_pins",
            ),
            (
                "a bad canary selector",
                "[plugins.a.canary]\nfile = \"b.wasm\"\nselector = \"x in y\"\n",
                "plugins.a.canary.selector:",
            ),
            (
                "a namespace that is not a name",
                "[plugins.a]\nnamespaces = [\"Kube System\"]\n",
                "plugins.a.namespaces: \"Kube System\" is neither a namespace name nor \"*\"",
            ),
            (
                "a canary path",
                "[plugins.a.canary]\nfile = \"../b.wasm\"\nselector = \"x\"\n",
                "plugins.a.canary.file:",
            ),
            (
                "a source for a name that is a path",
                "[plugins.\"../a\"]\nsource = \"oci://r.io/a:1.0\"\n",
                "plugins.../a.source: \"../a\" is not a plugin file stem",
            ),
            (
                "a source without a registry host",
                "[plugins.a]\nsource = \"oci://org/a:1.0\"\n",
                "plugins.a.source: \"oci://org/a:1.0\" names no registry host",
            ),
        ];
        for (case, text, expected) in cases {
            let error = parse(text).expect_err(case).to_string();
            assert!(error.contains(expected), "{case}: {error}");
        }
        let valid = format!(
            "require_pins = true\n[plugins.a]\nsha256 = \"{0}\"\nsource = \"oci://r.io/a:1.0\"\n\
             [plugins.a.canary]\nfile = \"b.wasm\"\nselector = \"x\"\nsha256 = \"{0}\"\n",
            "ab".repeat(32)
        );
        parse(&valid).expect("the valid row parses");
    }

    #[test]
    fn a_canary_runs_with_its_own_pin_and_its_primarys_limits() {
        let (primary, canary) = ("aa".repeat(32), "bb".repeat(32));
        let config = parse(&format!(
            "require_pins = true\n[plugins.a]\nsha256 = \"{primary}\"\ndeadline_ms = 7\n\
             [plugins.a.canary]\nfile = \"b.wasm\"\nselector = \"x\"\nsha256 = \"{canary}\"\n"
        ))
        .expect("parses");
        let settings = config.settings("a");
        let for_canary = settings.for_canary();

        assert_eq!(settings.sha256.as_deref(), Some(primary.as_str()));
        assert_eq!(for_canary.sha256.as_deref(), Some(canary.as_str()));
        assert_eq!(for_canary.deadline_ms, Some(7));
        assert!(settings.require_pin && for_canary.require_pin);
        assert!(
            config.settings("unnamed").require_pin,
            "require_pins covers every file"
        );
    }
}
