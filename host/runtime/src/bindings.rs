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
            world: "reconciler-plugin",
            imports: { default: async },
            exports: { default: async },
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
            },
        });
    }
}

pub(crate) use generated::planner::PlannerPluginPre;
pub use generated::planner::exports::gitlab::secretgen::planner;
pub(crate) use generated::planner::wasm_operator::plugin::crypto;
pub(crate) use generated::planning::gitlab::secretgen::planner as planner_import;
pub(crate) use generated::reconciler::ReconcilerPluginPre;
pub(crate) use generated::reconciler::exports::wasm_operator::plugin::reconciler;
pub(crate) use generated::reconciler::wasm_operator::plugin::{cluster, logging, types};

/// The platform WIT package the host speaks, e.g. `wasm-operator:plugin`.
pub const CONTRACT_PACKAGE: &str = "wasm-operator:plugin";

/// The platform contract version the host speaks (the package's version).
pub const CONTRACT_VERSION: &str = "1.0.0";

/// The WIT package of the GitLabSecrets planner, `gitlab:secretgen`.
pub const PLANNER_PACKAGE: &str = "gitlab:secretgen";

/// The planner contract version the host speaks (the package's version).
pub const PLANNER_VERSION: &str = "1.0.0";
