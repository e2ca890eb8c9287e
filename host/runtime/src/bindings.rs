//! The host's WIT bindings, generated from the platform package `wasm-operator:plugin`
//! (`wit/plugin.wit`) and the planner's package `gitlab:secretgen` (`wit/secretgen/`, which
//! reaches the platform package as its dependency).
//!
//! One `bindgen!` per world the host instantiates. Every import is `async`: the cluster
//! capability awaits the API server and key generation runs on the blocking pool, while the
//! guest sees plain blocking calls.

mod planner_records;

mod generated {
    pub(crate) mod reconciler {
        wasmtime::component::bindgen!({
            path: "../../wit",
            // The 1.4 world: every import a 1.x reconciler may name. Its exports are looked
            // up one interface at a time (`reconciler` always, `extensions`, `admission`,
            // `targeting` and `selection` when the plugin exports them), so a plugin of an
            // earlier minor version loads through the same bindings.
            world: "selecting-reconciler-plugin",
            imports: { default: async },
            exports: { default: async },
            with: {
                "wasm-operator:plugin/targets.target": crate::capabilities::targets::OpenTarget,
            },
        });
    }

    pub(crate) mod planner {
        wasmtime::component::bindgen!({
            path: "../../wit/secretgen",
            world: "planner-plugin",
            imports: { default: async },
            exports: { default: async },
            with: {
                "wasm-operator:plugin/logging": super::reconciler::wasm_operator::plugin::logging,
                "wasm-operator:plugin/crypto": super::reconciler::wasm_operator::plugin::crypto,
            },
        });
    }

    /// The `planner` import of reconcilers that call a planner (gitlabsecrets); the rest
    /// of that world is the reconciler world's.
    pub(crate) mod planning {
        wasmtime::component::bindgen!({
            path: "../../wit/secretgen",
            world: "planning-reconciler-plugin",
            imports: { default: async },
            exports: { default: async },
            with: {
                "wasm-operator:plugin/types": super::reconciler::wasm_operator::plugin::types,
                "wasm-operator:plugin/cluster": super::reconciler::wasm_operator::plugin::cluster,
                "wasm-operator:plugin/logging": super::reconciler::wasm_operator::plugin::logging,
                "wasm-operator:plugin/crypto": super::reconciler::wasm_operator::plugin::crypto,
                "wasm-operator:plugin/client": super::reconciler::wasm_operator::plugin::client,
                "wasm-operator:plugin/egress": super::reconciler::wasm_operator::plugin::egress,
                "wasm-operator:plugin/targets": super::reconciler::wasm_operator::plugin::targets,
            },
        });
    }
}

pub use generated::planner::exports::gitlab::secretgen::planner;
pub(crate) use generated::planner::{PlannerPlugin, PlannerPluginPre};
pub(crate) use generated::planning::gitlab::secretgen::planner as planner_import;
pub(crate) use generated::reconciler::exports::wasm_operator::plugin::{
    admission, extensions, reconciler, selection, targeting,
};
pub(crate) use generated::reconciler::wasm_operator::plugin::{
    client, cluster, crypto, egress, logging, targets, types,
};

/// The platform WIT package the host speaks, e.g. `wasm-operator:plugin`.
pub const CONTRACT_PACKAGE: &str = "wasm-operator:plugin";

/// The platform contract version the host speaks (the package's version).
pub const CONTRACT_VERSION: &str = "1.4.0";

/// The WIT package of the GitLabSecrets planner, `gitlab:secretgen`.
pub const PLANNER_PACKAGE: &str = "gitlab:secretgen";

/// The planner contract version the host speaks (the package's version).
pub const PLANNER_VERSION: &str = "1.0.0";

/// A reconciler's component, pre-instantiated, with its exports looked up once.
pub(crate) struct ReconcilerPre {
    pre: wasmtime::component::InstancePre<crate::capabilities::PassState>,
    reconciler: reconciler::GuestIndices,
    /// `Some` for a plugin built against 1.1 or later (it exports `extensions`).
    extensions: Option<extensions::GuestIndices>,
    /// `Some` for a plugin built against 1.2 or later (it exports `admission`).
    admission: Option<admission::GuestIndices>,
    /// `Some` for a plugin built against 1.3 or later (it exports `targeting`).
    targeting: Option<targeting::GuestIndices>,
    /// `Some` for a plugin built against 1.4 or later (it exports `selection`).
    selection: Option<selection::GuestIndices>,
}

/// One instance of a reconciler: its `reconciler` export, from 1.1 on its `extensions`, from
/// 1.2 on its `admission`, from 1.3 on its `targeting`, from 1.4 on its `selection`.
pub(crate) struct ReconcilerInstance {
    pub(crate) reconciler: reconciler::Guest,
    pub(crate) extensions: Option<extensions::Guest>,
    pub(crate) admission: Option<admission::Guest>,
    pub(crate) targeting: Option<targeting::Guest>,
    pub(crate) selection: Option<selection::Guest>,
}

impl ReconcilerPre {
    /// Looks up the exports of `pre`; fails when it does not export `reconciler`.
    pub(crate) fn new(
        pre: wasmtime::component::InstancePre<crate::capabilities::PassState>,
    ) -> wasmtime::Result<Self> {
        let reconciler = reconciler::GuestIndices::new(&pre)?;
        // Absent in a plugin of an earlier minor version; present but mistyped is an error
        // (a plugin the host cannot serve).
        let exports = |name| pre.component().get_export_index(None, name).is_some();
        let extensions = if exports(EXTENSIONS_INTERFACE) {
            Some(extensions::GuestIndices::new(&pre)?)
        } else {
            None
        };
        let admission = if exports(ADMISSION_INTERFACE) {
            Some(admission::GuestIndices::new(&pre)?)
        } else {
            None
        };
        let targeting = if exports(TARGETING_INTERFACE) {
            Some(targeting::GuestIndices::new(&pre)?)
        } else {
            None
        };
        let selection = if exports(SELECTION_INTERFACE) {
            Some(selection::GuestIndices::new(&pre)?)
        } else {
            None
        };
        Ok(Self {
            pre,
            reconciler,
            extensions,
            admission,
            targeting,
            selection,
        })
    }

    /// Instantiates the component in `store`.
    pub(crate) async fn instantiate_async(
        &self,
        store: &mut wasmtime::Store<crate::capabilities::PassState>,
    ) -> wasmtime::Result<ReconcilerInstance> {
        let instance = self.pre.instantiate_async(&mut *store).await?;
        let reconciler = self.reconciler.load(&mut *store, &instance)?;
        let extensions = match &self.extensions {
            Some(indices) => Some(indices.load(&mut *store, &instance)?),
            None => None,
        };
        let admission = match &self.admission {
            Some(indices) => Some(indices.load(&mut *store, &instance)?),
            None => None,
        };
        let targeting = match &self.targeting {
            Some(indices) => Some(indices.load(&mut *store, &instance)?),
            None => None,
        };
        let selection = match &self.selection {
            Some(indices) => Some(indices.load(&mut *store, &instance)?),
            None => None,
        };
        Ok(ReconcilerInstance {
            reconciler,
            extensions,
            admission,
            targeting,
            selection,
        })
    }
}

/// The name (semver-matched by wasmtime) of 1.1's exported `extensions` interface.
const EXTENSIONS_INTERFACE: &str = "wasm-operator:plugin/extensions@1.1.0";

/// The name (semver-matched by wasmtime) of 1.2's exported `admission` interface.
const ADMISSION_INTERFACE: &str = "wasm-operator:plugin/admission@1.2.0";

/// The name (semver-matched by wasmtime) of 1.3's exported `targeting` interface.
const TARGETING_INTERFACE: &str = "wasm-operator:plugin/targeting@1.3.0";

/// The name (semver-matched by wasmtime) of 1.4's exported `selection` interface.
const SELECTION_INTERFACE: &str = "wasm-operator:plugin/selection@1.4.0";
