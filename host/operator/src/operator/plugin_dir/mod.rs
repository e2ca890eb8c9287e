//! The plugin directory, kept in step with the running controllers.
//!
//! [`PluginDirectory::sync`] runs at start and then on every poll:
//! 1. `plugins.toml` is read (a broken one is refused with the reason and the previous
//!    settings stay);
//! 2. every `.wasm` whose size, mtime or settings changed is loaded — compiled into the
//!    artifact cache, instantiated once, its contract and `describe()` checked, its sha256
//!    compared with a pin. Only then does it replace the running version:
//!    - a planner is linked into the runtime (its importers use it from their next call);
//!    - a reconciler of the same shape is swapped into its controller: passes in flight
//!      finish on the old version, new passes run the new one;
//!    - a reconciler whose watches, indexes or predicates changed gets a new controller
//!      once the old one has drained (never two passes of one object at once);
//! 3. a file that fails any check is refused — in the log, the `plugin_info` metric and a
//!    `PluginRefused` Warning event — and the previous version keeps serving; it is tried
//!    again when it changes;
//! 4. a removed or disabled plugin's controller is stopped after draining; a removed file's
//!    refusal is forgotten (and leaves `plugin_info`), as it is when the file recovers.
//!
//! A planner copied over a reconciler's file is refused and the reconciler keeps serving,
//! and so is a second planner while the file of the linked one is present. A reconciler in
//! the planner's file is accepted (the linked planner stays, as for a removed planner file)
//! and the planners refused as second ones are tried again. What serves and what is
//! refused is published for `/readyz`, which is not ready while no reconciler serves.
//!
//! DECISION: the directory is polled (every 250 ms by default) rather than watched with
//! inotify: polling sees ConfigMap and Secret volume updates (an atomic symlink swap) and
//! any filesystem alike, and one `stat` per file is nothing next to a compile.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;
use wasm_operator_types::{Event, EventType, ObjectRef};

mod canary;

use super::kinds::KindResolver;
use super::loader::{self, PluginFile};
use super::plugin_config::{PluginSettings, PluginsToml};
use crate::controller::plugin_controller::same_shape;
use crate::controller::{Controller, ControllerConfig, Running};
use crate::informer::Informers;
use crate::metrics::Metrics;
use wasm_operator_runtime::backend::{Caller, ClusterBackend};
use wasm_operator_runtime::{LoadError, Plugin, PluginKind, Runtime};

/// How long a plugin refused for a kind the cluster does not serve yet waits before it is
/// tried again.
const RETRY_KINDS: Duration = Duration::from_secs(5);

/// What the controllers are built from.
pub(crate) struct Context {
    pub runtime: Runtime,
    pub server: Arc<dyn ClusterBackend>,
    pub informers: Arc<Informers>,
    /// Checks every declared kind against API discovery before a plugin runs.
    pub kinds: Arc<KindResolver>,
    pub metrics: Arc<Metrics>,
    pub controller: ControllerConfig,
    pub leading: watch::Receiver<bool>,
    /// The object events about plugins (refusals) are recorded on, e.g. the operator's Pod.
    pub report_to: Option<ObjectRef>,
    /// The target clusters plugins that write to targets open.
    pub targets: Arc<crate::targets::TargetRegistry>,
}

/// How a file looked when last loaded or refused.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Seen {
    len: u64,
    modified: Option<SystemTime>,
    settings: PluginSettings,
}

struct Serving {
    running: Running,
    seen: Seen,
    canary: Option<(String, Seen)>,
}

/// The plugins of one directory and their controllers.
pub(crate) struct PluginDirectory {
    dir: PathBuf,
    /// Its `plugins.toml`.
    config_file: PathBuf,
    context: Context,
    config: PluginsToml,
    /// Running reconcilers by file stem.
    serving: BTreeMap<String, Serving>,
    /// The loaded planner's file stem and how it looked.
    planner: Option<(String, Seen)>,
    /// Files refused as they look now: not tried again until they change, or until the
    /// time in `retry` for a refusal that may pass later (a kind not served yet).
    refused: HashMap<String, Seen>,
    retry: HashMap<String, Instant>,
    /// The reason of each file's last refusal (a retried one is reported once).
    last_reason: HashMap<String, String>,
    published: watch::Sender<Vec<Arc<Controller>>>,
    /// The files refused as they look now, for `/readyz`.
    published_refused: watch::Sender<Vec<String>>,
    /// The files refused as a second planner: tried again once the planner's file holds a
    /// reconciler.
    second_planners: std::collections::HashSet<String>,
}

fn look(path: &Path, settings: PluginSettings) -> Option<Seen> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Seen {
        len: meta.len(),
        modified: meta.modified().ok(),
        settings,
    })
}

impl PluginDirectory {
    /// The plugins of `dir`, none loaded yet; `config_file` is their `plugins.toml` when it
    /// is not the directory's own.
    pub(crate) fn new(dir: PathBuf, config_file: Option<PathBuf>, context: Context) -> Self {
        Self {
            config_file: config_file.unwrap_or_else(|| loader::config_file(&dir)),
            dir,
            context,
            config: PluginsToml::default(),
            serving: BTreeMap::new(),
            planner: None,
            refused: HashMap::new(),
            retry: HashMap::new(),
            last_reason: HashMap::new(),
            published: watch::Sender::new(Vec::new()),
            published_refused: watch::Sender::new(Vec::new()),
            second_planners: Default::default(),
        }
    }

    /// The running controllers, updated on every change.
    pub(crate) fn controllers(&self) -> watch::Receiver<Vec<Arc<Controller>>> {
        self.published.subscribe()
    }

    /// The files refused as they look now (`name.wasm`), updated on every sync.
    pub(crate) fn refused(&self) -> watch::Receiver<Vec<String>> {
        self.published_refused.subscribe()
    }

    /// Brings the controllers in step with the directory; returns the refusals of this
    /// round as `(file, reason)`.
    pub(crate) async fn sync(&mut self) -> Vec<(PathBuf, String)> {
        let mut refusals = Vec::new();
        match PluginsToml::read_file(&self.config_file) {
            Ok(config) => {
                self.config = config;
                self.refused.remove(super::plugin_config::FILE_NAME);
            }
            Err(error) => {
                let reason = error.to_string();
                if !self.refused.contains_key(super::plugin_config::FILE_NAME) {
                    self.report_refusal(&self.config_file.clone(), &reason)
                        .await;
                }
                self.refused.insert(
                    super::plugin_config::FILE_NAME.into(),
                    Seen {
                        len: 0,
                        modified: None,
                        settings: PluginSettings::default(),
                    },
                );
                refusals.push((self.config_file.clone(), reason));
            }
        }
        let listing = match loader::list(&self.dir, &self.config) {
            Ok(listing) => listing,
            Err(error) => {
                tracing::error!(dir = %self.dir.display(), %error, "cannot read the plugin directory");
                return refusals;
            }
        };
        let present: Vec<String> = listing.plugins.iter().map(|f| f.stem.clone()).collect();
        self.forget_removed(&present);
        let mut deferred = Vec::new();
        for file in listing.plugins {
            match self.refresh(&file, &present).await {
                Err(LoadError::NoPlanner { .. }) => deferred.push(file),
                Err(error) => refusals.push(self.refuse(&file.path, &file.stem, &error).await),
                Ok(()) => {}
            }
        }
        for file in deferred {
            if let Err(error) = self.refresh(&file, &present).await {
                refusals.push(self.refuse(&file.path, &file.stem, &error).await);
            }
        }
        let gone: Vec<String> = self
            .serving
            .keys()
            .filter(|s| !present.contains(s))
            .cloned()
            .collect();
        for stem in gone {
            if let Some(serving) = self.serving.remove(&stem) {
                let controller = serving.running.controller().clone();
                tracing::info!(
                    plugin = controller.name(),
                    "plugin removed: stopping its controller"
                );
                self.context.metrics.plugin(
                    controller.name(),
                    &controller
                        .plugin()
                        .description()
                        .map(|d| d.version.clone())
                        .unwrap_or_default(),
                    controller.plugin().sha256(),
                    None,
                );
                serving.running.stop().await;
            }
        }
        self.refresh_canaries(&mut refusals).await;
        self.publish();
        refusals
    }

    /// Forgets the refusals of files no longer present: their `plugin_info` goes.
    fn forget_removed(&mut self, present: &[String]) {
        let removed: Vec<String> = self
            .refused
            .keys()
            .filter(|s| *s != super::plugin_config::FILE_NAME && !present.contains(s))
            .cloned()
            .collect();
        for stem in removed {
            tracing::info!(plugin = %stem, "refused plugin file removed");
            self.refused.remove(&stem);
            self.retry.remove(&stem);
            self.last_reason.remove(&stem);
            self.second_planners.remove(&stem);
            self.context.metrics.plugin(&stem, "", "", None);
        }
    }

    /// Loads `file` if it changed since it was last loaded or refused; `present` are the
    /// stems of the directory's files.
    async fn refresh(&mut self, file: &PluginFile, present: &[String]) -> Result<(), LoadError> {
        let stem = file.stem.as_str();
        let Some(seen) = look(&file.path, file.settings.clone()) else {
            return Ok(());
        };
        let retry_due = self.retry.get(stem).is_some_and(|at| Instant::now() >= *at);
        let unchanged = (self.refused.get(stem) == Some(&seen) && !retry_due)
            || self.serving.get(stem).is_some_and(|s| s.seen == seen)
            || self
                .planner
                .as_ref()
                .is_some_and(|(s, p)| s == stem && *p == seen);
        if unchanged {
            return Ok(());
        }
        let plugin = loader::load(&self.context.runtime, file).await?;
        self.check_place(stem, &plugin, present)?;
        self.check_kinds(stem, &plugin).await?;
        if self.refused.remove(stem).is_some() {
            // The file recovered: its refusal leaves `plugin_info`.
            self.context.metrics.plugin(stem, "", "", None);
        }
        self.second_planners.remove(stem);
        self.accept(stem, Arc::new(plugin), seen).await
    }

    /// Checks that `plugin` may take the place of file `stem`: a planner never replaces a
    /// serving reconciler, and one planner is linked at a time.
    fn check_place(
        &self,
        stem: &str,
        plugin: &Plugin,
        present: &[String],
    ) -> Result<(), LoadError> {
        if plugin.kind() != PluginKind::Planner {
            return Ok(());
        }
        let path = plugin.path().to_owned();
        if let Some(serving) = self.serving.get(stem) {
            return Err(LoadError::PlannerOverReconciler {
                path,
                reconciler: serving.running.controller().name().to_owned(),
            });
        }
        match &self.planner {
            Some((linked, _)) if linked != stem && present.contains(linked) => {
                Err(LoadError::SecondPlanner {
                    path,
                    linked: linked.clone(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Checks a reconciler's declared kinds through discovery; a refusal that may pass
    /// later is tried again after [`RETRY_KINDS`].
    async fn check_kinds(&mut self, stem: &str, plugin: &Plugin) -> Result<(), LoadError> {
        let Some(description) = plugin.description() else {
            return Ok(());
        };
        match self.context.kinds.check(description, plugin.access()).await {
            Ok(()) => {
                self.retry.remove(stem);
                Ok(())
            }
            Err(error) => {
                if error.retryable() {
                    self.retry
                        .insert(stem.to_owned(), Instant::now() + RETRY_KINDS);
                } else {
                    self.retry.remove(stem);
                }
                Err(LoadError::Kinds {
                    path: plugin.path().to_owned(),
                    message: error.to_string(),
                })
            }
        }
    }

    async fn accept(
        &mut self,
        stem: &str,
        plugin: Arc<Plugin>,
        seen: Seen,
    ) -> Result<(), LoadError> {
        let version = plugin
            .description()
            .map(|d| d.version.clone())
            .unwrap_or_default();
        if plugin.kind() == PluginKind::Planner {
            self.context.runtime.link_planner(plugin.clone())?;
            self.planner = Some((stem.to_owned(), seen));
            tracing::info!(
                planner = plugin.name(),
                sha256 = plugin.sha256(),
                "planner linked"
            );
            self.context
                .metrics
                .plugin(plugin.name(), &version, plugin.sha256(), Some("serving"));
            return Ok(());
        }
        let description = plugin
            .description()
            .cloned()
            .ok_or_else(|| LoadError::Describe {
                path: plugin.path().to_owned(),
                message: "no description".into(),
            })?;
        if self.planner.as_ref().is_some_and(|(s, _)| s == stem) {
            tracing::warn!(
                file = %plugin.path().display(),
                reconciler = description.name,
                "the planner's file now holds a reconciler: the linked planner stays until \
                 another planner file is loaded"
            );
            self.planner = None;
            for other in &self.second_planners {
                self.retry.insert(other.clone(), Instant::now());
            }
        }
        let taken_by = self.serving.iter().find(|(s, serving)| {
            s.as_str() != stem && serving.running.controller().name() == description.name
        });
        if let Some((other, _)) = taken_by {
            return Err(LoadError::Describe {
                path: plugin.path().to_owned(),
                message: format!(
                    "plugin name {:?} is already served from {other}.wasm",
                    description.name
                ),
            });
        }
        match self.serving.remove(stem) {
            Some(mut serving)
                if same_shape(serving.running.controller().description(), &description) =>
            {
                let old = serving.running.controller().swap(plugin.clone());
                self.retire(&old, &plugin);
                tracing::info!(
                    plugin = plugin.name(),
                    version,
                    sha256 = plugin.sha256(),
                    "swapped in"
                );
                serving.seen = seen;
                self.serving.insert(stem.to_owned(), serving);
            }
            previous => {
                if let Some(previous) = previous {
                    let old = previous.running.controller().plugin();
                    tracing::info!(
                        plugin = plugin.name(),
                        "watches changed: restarting its controller"
                    );
                    previous.running.stop().await;
                    self.retire(&old, &plugin);
                }
                let controller = Controller::new(
                    plugin.clone(),
                    self.context.runtime.clone(),
                    self.context.server.clone(),
                    self.context.informers.clone(),
                    self.context.kinds.clone(),
                    self.context.metrics.clone(),
                    self.context.controller,
                )
                .map_err(|e| LoadError::Describe {
                    path: plugin.path().to_owned(),
                    message: e.to_string(),
                })?;
                controller.engage_targets(&self.context.targets);
                let running = controller.start(self.context.leading.clone());
                tracing::info!(
                    plugin = plugin.name(),
                    version,
                    sha256 = plugin.sha256(),
                    "started"
                );
                self.serving.insert(
                    stem.to_owned(),
                    Serving {
                        running,
                        seen,
                        canary: None,
                    },
                );
            }
        }
        self.context
            .metrics
            .plugin(plugin.name(), &version, plugin.sha256(), Some("serving"));
        Ok(())
    }

    /// Clears the metric of a replaced version (unless it is the same file content).
    fn retire(&self, old: &Plugin, new: &Plugin) {
        if old.sha256() != new.sha256() {
            let version = old
                .description()
                .map(|d| d.version.clone())
                .unwrap_or_default();
            self.context
                .metrics
                .plugin(old.name(), &version, old.sha256(), None);
        }
    }

    async fn refuse(&mut self, file: &Path, stem: &str, error: &LoadError) -> (PathBuf, String) {
        let reason = error.to_string();
        let seen = look(file, self.config.settings(stem));
        let repeated = self.retry.contains_key(stem)
            && seen.is_some()
            && self.refused.get(stem) == seen.as_ref()
            && self.last_reason.get(stem) == Some(&reason);
        if let Some(seen) = seen {
            self.refused.insert(stem.to_owned(), seen);
        }
        self.last_reason.insert(stem.to_owned(), reason.clone());
        if matches!(error, LoadError::SecondPlanner { .. }) {
            self.second_planners.insert(stem.to_owned());
        } else {
            self.second_planners.remove(stem);
        }
        if repeated {
            // Tried again for a kind not served yet, refused for the same reason: already
            // reported.
            tracing::debug!(file = %file.display(), %error, "plugin still refused");
            return (file.to_owned(), reason);
        }
        let serving = self.serving.contains_key(stem)
            || self.planner.as_ref().is_some_and(|(s, _)| s == stem);
        self.context.metrics.plugin(stem, "", "", Some("refused"));
        tracing::error!(file = %file.display(), %error, previous_serves = serving, "plugin refused");
        self.report_refusal(file, &reason).await;
        (file.to_owned(), reason)
    }

    async fn report_refusal(&self, file: &Path, reason: &str) {
        let Some(regarding) = &self.context.report_to else {
            return;
        };
        let event = Event {
            event_type: EventType::Warning,
            reason: "PluginRefused".into(),
            action: "Load".into(),
            // Load errors name the file already.
            note: if reason.starts_with(&file.display().to_string()) {
                reason.to_owned()
            } else {
                format!("{}: {reason}", file.display())
            },
        };
        let caller = Caller::host();
        if let Err(error) = self
            .context
            .server
            .record_event(&caller, regarding, &event)
            .await
        {
            tracing::warn!(%error, "cannot record the PluginRefused event");
        }
    }

    fn publish(&self) {
        let controllers = self
            .serving
            .values()
            .map(|s| s.running.controller().clone())
            .collect();
        self.published.send_replace(controllers);
        let mut refused: Vec<String> = self
            .refused
            .keys()
            .map(|stem| {
                if stem == super::plugin_config::FILE_NAME {
                    stem.clone()
                } else {
                    format!("{stem}.wasm")
                }
            })
            .collect();
        refused.sort();
        self.published_refused.send_replace(refused);
    }

    /// Stops every controller, each after draining.
    pub(crate) async fn stop(self) {
        futures::future::join_all(self.serving.into_values().map(|s| s.running.stop())).await;
    }
}
