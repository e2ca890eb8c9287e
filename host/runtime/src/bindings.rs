//! The host's WIT bindings, generated from `wit/plugin.wit`.
//!
//! One `bindgen!` per world the host instantiates. Every import is `async`: the cluster
//! capability awaits the API server and key generation runs on the blocking pool, while the
//! guest sees plain blocking calls.

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
            path: "../../wit",
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
            path: "../../wit",
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
pub use generated::planner::exports::wasm_operator::plugin::planner;
pub(crate) use generated::planner::wasm_operator::plugin::crypto;
pub(crate) use generated::planning::wasm_operator::plugin::planner as planner_import;
pub(crate) use generated::reconciler::ReconcilerPluginPre;
pub(crate) use generated::reconciler::exports::wasm_operator::plugin::reconciler;
pub(crate) use generated::reconciler::wasm_operator::plugin::{cluster, logging, types};

/// The WIT package the host speaks, e.g. `wasm-operator:plugin`.
pub const CONTRACT_PACKAGE: &str = "wasm-operator:plugin";

/// The contract version the host speaks (the WIT package version).
pub const CONTRACT_VERSION: &str = "1.0.0";
