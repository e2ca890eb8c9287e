//! A loaded plugin: its identity, its limits and its pre-instantiated component.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use wasm_operator_types::Description;

use super::cache::CacheOutcome;
use super::limits::Limits;
use crate::backend::access::{Access, Permissions};
use crate::bindings::{PlannerPluginPre, ReconcilerPre};
use crate::capabilities::PassState;
use crate::capabilities::http::AllowList;
use crate::planner_memo::PlanMemo;

/// What kind of plugin, with its pre-instantiated component.
pub(crate) enum PluginInfo {
    /// A reconciler and what its describe() returned.
    Reconciler {
        pre: ReconcilerPre,
        description: Option<Box<Description>>,
    },
    /// A planner, linked into the reconcilers that import it, and the answers it gave that
    /// may be given again.
    Planner {
        pre: PlannerPluginPre<PassState>,
        memo: PlanMemo,
    },
}

/// A loaded plugin, ready to run passes.
pub struct Plugin {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) sha256: String,
    pub(crate) contract: semver::Version,
    /// Whether it imports `planner` (and is served by the linked planner plugin).
    pub(crate) imports_planner: bool,
    pub(crate) cache: CacheOutcome,
    pub(crate) limits: Limits,
    pub(crate) info: PluginInfo,
    /// What a reconciler declared it uses, built once at load for every pass.
    pub(crate) permissions: Arc<Permissions>,
    /// Where a reconciler declared its HTTP requests go.
    pub(crate) egress: Arc<AllowList>,
}

impl Plugin {
    /// The plugin's name: describe()'s for a reconciler, the file stem for a planner.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file it was loaded from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The sha256 of the file, hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The contract version it was built against: the version of the package it exports
    /// from, [`PluginKind::package`](super::PluginKind::package) of its [`kind`](Self::kind).
    pub fn contract(&self) -> &semver::Version {
        &self.contract
    }

    /// Whether it imports `planner`.
    pub fn imports_planner(&self) -> bool {
        self.imports_planner
    }

    /// Whether the component was loaded precompiled or compiled.
    pub fn cache_outcome(&self) -> CacheOutcome {
        self.cache
    }

    /// The reconciler's description; `None` for a planner.
    pub fn description(&self) -> Option<&Description> {
        match &self.info {
            PluginInfo::Reconciler { description, .. } => description.as_deref(),
            PluginInfo::Planner { .. } => None,
        }
    }

    /// The plugin with `access` beyond its primary's namespace (what `plugins.toml`
    /// grants it).
    pub fn with_access(mut self, access: Access) -> Self {
        if let Some(description) = self.description() {
            self.permissions = std::sync::Arc::new(Permissions::of(description, access));
        }
        self
    }

    /// What it was granted beyond its primary's namespace.
    pub fn access(&self) -> &Access {
        self.permissions.access()
    }

    /// Reconciler or planner.
    pub fn kind(&self) -> super::PluginKind {
        match &self.info {
            PluginInfo::Reconciler { .. } => super::PluginKind::Reconciler,
            PluginInfo::Planner { .. } => super::PluginKind::Planner,
        }
    }
}
