//! The one way the plugins of a directory are found and loaded: `run` (through the
//! [plugin directory](super::plugin_dir)), `rbac`, `plugin check`, `plugin inspect` and
//! `demo` all see the same files with the same settings.
//!
//! - [`list`]: the files `plugins.toml` enables, each with its settings; canary files
//!   apart, with the primary plugin they stand in for; disabled files left out.
//! - [`load`]: one file with the limits and the sha256 pin its settings give (refused
//!   without one when `require_pins` is set); [`check`] the same checks for one file on its
//!   own; [`plugin_file`] a file's settings.
//! - [`load_directory`]: every listed file once, planners linked before the reconcilers
//!   that import them, then the canaries.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasm_operator_runtime::{LoadError, Plugin, PluginKind, Runtime};

use super::plugin_config::{ConfigError, FILE_NAME, PluginSettings, PluginsToml};
use crate::cli::plugin_files;

/// A plugin file and the settings `plugins.toml` gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginFile {
    /// The file stem, which names the plugin in `plugins.toml`.
    pub stem: String,
    /// The `.wasm` file.
    pub path: PathBuf,
    /// Its settings (the defaults when `plugins.toml` does not name it).
    pub settings: PluginSettings,
}

/// A canary file: a second version of the plugin `primary` for some primaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryFile {
    /// The stem of the plugin it stands in for.
    pub primary: String,
    /// The canary's file; it runs with the primary plugin's limits and its own pin.
    pub file: PluginFile,
    /// The label selector of the primaries it reconciles.
    pub selector: String,
}

/// The plugin files of a directory, as `plugins.toml` has them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// Enabled plugin files, sorted by name; no canary file is among them.
    pub plugins: Vec<PluginFile>,
    /// The canaries of enabled plugins whose files exist.
    pub canaries: Vec<CanaryFile>,
}

/// The stem of `path`.
pub fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The file name of `path`, as `plugins.toml` names canary files.
fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The plugin files of `dir` as `config` has them.
pub fn list(dir: &Path, config: &PluginsToml) -> std::io::Result<Listing> {
    let canary_files = config.canary_files();
    let mut listing = Listing::default();
    for path in plugin_files(dir)? {
        let name = file_name(&path);
        let stem = stem(&path);
        let settings = config.settings(&stem);
        if canary_files.contains(name.as_str()) || !settings.enabled {
            continue;
        }
        if let Some(canary) = &settings.canary {
            let file = dir.join(&canary.file);
            if file.is_file() {
                listing.canaries.push(CanaryFile {
                    primary: stem.clone(),
                    file: PluginFile {
                        stem: self::stem(&file),
                        path: file,
                        settings: settings.for_canary(),
                    },
                    selector: canary.selector.clone(),
                });
            }
        }
        listing.plugins.push(PluginFile {
            stem,
            path,
            settings,
        });
    }
    Ok(listing)
}

/// The sha256 pin of `file`; refused when pins are required and it has none.
fn pin(file: &PluginFile) -> Result<Option<&str>, LoadError> {
    match file.settings.sha256.as_deref() {
        None if file.settings.require_pin => Err(LoadError::Unpinned {
            path: file.path.clone(),
        }),
        pin => Ok(pin),
    }
}

/// Loads `file` with the limits and the sha256 pin of its settings.
pub async fn load(runtime: &Runtime, file: &PluginFile) -> Result<Plugin, LoadError> {
    let limits = file.settings.limits(runtime.config().default_limits);
    runtime
        .load_pinned(&file.path, Some(limits), pin(file)?)
        .await
        .map(|plugin| plugin.with_access(file.settings.access()))
}

/// Every load-time check of [`load`] on one file, without a planner linked for a
/// reconciler that imports one (`plugin check`, `plugin inspect`).
pub async fn check(runtime: &Runtime, file: &PluginFile) -> Result<Plugin, LoadError> {
    let limits = file.settings.limits(runtime.config().default_limits);
    runtime
        .check(&file.path, Some(limits), pin(file)?)
        .await
        .map(|plugin| plugin.with_access(file.settings.access()))
}

/// The settings of the file `path` from the `plugins.toml` beside it: the file as the
/// operator would load it, for commands that take one file (`plugin check`, `inspect`).
pub fn plugin_file(path: &Path) -> Result<PluginFile, ConfigError> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let config = PluginsToml::read(dir)?;
    let stem = stem(path);
    // A canary runs with the limits of the plugin it stands in for, and its own pin.
    let name = file_name(path);
    let owner = config
        .plugins
        .iter()
        .find(|(_, s)| s.canary.as_ref().is_some_and(|c| c.file == name))
        .map(|(owner, _)| owner.clone());
    let settings = match owner {
        Some(owner) => config.settings(&owner).for_canary(),
        None => config.settings(&stem),
    };
    Ok(PluginFile {
        stem,
        path: path.to_owned(),
        settings,
    })
}

/// A file that did not load, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The file (`plugins.toml` itself when it is the one refused).
    pub file: PathBuf,
    /// The reason, naming the file and the check it failed.
    pub reason: String,
}

/// Every plugin of a directory, loaded once.
#[derive(Default)]
pub struct Loaded {
    /// The plugins that loaded, with their files; planners are linked into the runtime.
    pub plugins: Vec<(PluginFile, Arc<Plugin>)>,
    /// The canaries that loaded.
    pub canaries: Vec<(CanaryFile, Arc<Plugin>)>,
    /// The files that did not.
    pub refused: Vec<Refusal>,
}

/// The plugin directory cannot be read at all.
#[derive(Debug, thiserror::Error)]
pub enum LoaderError {
    /// `plugins.toml` is broken: nothing is loaded with guessed settings.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The directory cannot be listed.
    #[error("cannot read plugin directory {dir}: {source}")]
    Dir {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Loads every file [`list`] names, once: planners are linked into the runtime as they
/// load, and a reconciler that imports the planner is loaded again after every other
/// file, so it finds one wherever it sorts. `config_file` is the `plugins.toml` to use when
/// it is not the directory's own.
pub async fn load_directory(
    runtime: &Runtime,
    dir: &Path,
    config_file: Option<&Path>,
) -> Result<Loaded, LoaderError> {
    let config = match config_file {
        Some(file) => PluginsToml::read_file(file)?,
        None => PluginsToml::read(dir)?,
    };
    let listing = list(dir, &config).map_err(|source| LoaderError::Dir {
        dir: dir.to_owned(),
        source,
    })?;
    let mut loaded = Loaded::default();
    let mut deferred = Vec::new();
    for file in listing.plugins {
        match load(runtime, &file).await {
            Ok(plugin) => loaded.accept(runtime, file, plugin),
            Err(LoadError::NoPlanner { .. }) => deferred.push(file),
            Err(error) => loaded.refuse(&file.path, &error),
        }
    }
    for file in deferred {
        match load(runtime, &file).await {
            Ok(plugin) => loaded.accept(runtime, file, plugin),
            Err(error) => loaded.refuse(&file.path, &error),
        }
    }
    for canary in listing.canaries {
        match load(runtime, &canary.file).await {
            Ok(plugin) => loaded.canaries.push((canary, Arc::new(plugin))),
            Err(error) => loaded.refuse(&canary.file.path, &error),
        }
    }
    Ok(loaded)
}

impl Loaded {
    fn accept(&mut self, runtime: &Runtime, file: PluginFile, plugin: Plugin) {
        let plugin = Arc::new(plugin);
        if plugin.kind() == PluginKind::Planner
            && let Err(error) = runtime.link_planner(plugin.clone())
        {
            self.refuse(&file.path, &error);
            return;
        }
        self.plugins.push((file, plugin));
    }

    fn refuse(&mut self, file: &Path, error: &LoadError) {
        tracing::error!(file = %file.display(), %error, "plugin refused");
        self.refused.push(Refusal {
            file: file.to_owned(),
            reason: error.to_string(),
        });
    }

    /// The reconcilers' descriptions, each canary's after its primary's.
    pub fn descriptions(&self) -> Vec<wasm_operator_types::Description> {
        self.granted().into_iter().map(|(d, _)| d).collect()
    }

    /// Each reconciler's and canary's description with what `plugins.toml` grants it.
    pub(crate) fn granted(
        &self,
    ) -> Vec<(
        wasm_operator_types::Description,
        wasm_operator_runtime::backend::access::Access,
    )> {
        let plugins = self.plugins.iter().map(|(_, p)| p);
        let canaries = self.canaries.iter().map(|(_, p)| p);
        plugins
            .chain(canaries)
            .filter_map(|p| Some((p.description()?.clone(), p.access().clone())))
            .collect()
    }
}

/// A plugin directory's own `plugins.toml` (what [`Refusal::file`] names when it is refused,
/// and what `--plugins-config` replaces).
pub fn config_file(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}
