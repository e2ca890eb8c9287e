//! Why a scenario could not run: a malformed BlockScenario, or the building block's error.

use wasm_operator_sdk::blocks;

/// Why a scenario failed. A block's error is reported in the scenario's status
/// (`status.outcome.error`), never as a failed pass, so the tests can read it.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The BlockScenario lacks a field the host always sets.
    #[error("the BlockScenario has no {0}")]
    Missing(&'static str),
    /// `spec.scenario` names no scenario of this plugin.
    #[error("unknown scenario {0:?}")]
    Unknown(String),
    /// A parameter has the wrong type.
    #[error("parameter {name}: {problem}")]
    Param {
        name: &'static str,
        problem: &'static str,
    },
    #[error(transparent)]
    Object(#[from] wasm_operator_sdk::Error),
    #[error(transparent)]
    Deployment(#[from] blocks::deployment::Error),
    #[error(transparent)]
    Job(#[from] blocks::job::Error),
    #[error(transparent)]
    Config(#[from] blocks::config::configmap::Error),
    #[error(transparent)]
    Prune(#[from] blocks::config::PruneError),
    #[error(transparent)]
    Database(#[from] blocks::database::Error),
    #[error(transparent)]
    Certificate(#[from] blocks::tls::Error),
    #[error(transparent)]
    Secrets(#[from] blocks::secrets::Error),
    #[error(transparent)]
    Satellite(#[from] blocks::satellite::Error),
    #[error(transparent)]
    Policy(#[from] blocks::policy::Error),
    /// Rendering the merged policy failed.
    #[error("rendering the policy: {0}")]
    Render(String),
}
