//! The runtime's errors: why a plugin did not load, and why a pass failed.

use std::path::PathBuf;
use std::time::Duration;

use super::cache::CacheError;
use super::contract::ContractError;

/// Why a plugin file was refused. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{}: cannot read: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file's sha256 is not the pinned one.
    #[error("{}: sha256 {actual} is not the pinned {expected}", path.display())]
    Sha256Mismatch {
        path: PathBuf,
        expected: String,
        actual: String,
    },
    /// Pins are required (`require_pins`), and none is set for the file.
    #[error("{}: no sha256 pin is set, and pins are required (require_pins)", path.display())]
    Unpinned { path: PathBuf },
    /// A fuel limit is set, and the runtime does not count fuel.
    #[error("{}: a fuel limit needs fuel counting, which is off in this runtime (set it at start)", path.display())]
    FuelOff { path: PathBuf },
    /// The file is not WebAssembly at all.
    #[error("{}: not a WebAssembly file", path.display())]
    NotWasm { path: PathBuf },
    /// The file is a core module, not a component.
    #[error("{}: a core WebAssembly module, not a component (build for wasm32-wasip2)", path.display())]
    CoreModule { path: PathBuf },
    /// The component needs more than the host gives one plugin (memories, tables, core
    /// instances, instance size).
    #[error("{}: over the limits of one plugin: {message}", path.display())]
    Limits { path: PathBuf, message: String },
    /// Compiling or loading the artifact failed.
    #[error("{}: {source}", path.display())]
    Compile {
        path: PathBuf,
        #[source]
        source: CacheError,
    },
    /// The component does not fit the contract.
    #[error("{}: {source}", path.display())]
    Contract {
        path: PathBuf,
        #[source]
        source: ContractError,
    },
    /// The component imports the planner, and no planner plugin is loaded to link it to.
    #[error("{}: imports {}/planner, and no planner plugin is loaded to link it to", path.display(), crate::PLANNER_PACKAGE)]
    NoPlanner { path: PathBuf },
    /// A plugin offered as the planner does not export `planner`.
    #[error("{}: is not a planner plugin", path.display())]
    NotAPlanner { path: PathBuf },
    /// The linker could not satisfy the component's imports.
    #[error("{}: cannot link: {message}", path.display())]
    Link { path: PathBuf, message: String },
    /// describe() failed or returned something the host cannot run.
    #[error("{}: describe(): {message}", path.display())]
    Describe { path: PathBuf, message: String },
    /// A kind describe() declares is not served as declared, or not granted (the operator
    /// checks every declared kind through API discovery).
    #[error("{}: {message}", path.display())]
    Kinds { path: PathBuf, message: String },
    /// A planner copied over the file of a serving reconciler.
    #[error("{}: is a planner, but this file serves reconciler {reconciler}: the reconciler keeps serving (a planner goes in a file of its own)", path.display())]
    PlannerOverReconciler { path: PathBuf, reconciler: String },
    /// A second planner while the file of the linked one is present.
    #[error("{}: is a second planner: the planner of {linked}.wasm is linked, and one planner is served at a time (remove one of the two files)", path.display())]
    SecondPlanner { path: PathBuf, linked: String },
}

/// Why a pass failed. Every variant names the plugin and the object; the cause of a guest
/// failure (deadline, memory cap, panic, other trap) is told apart.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    /// The pass ran past its deadline.
    #[error("plugin {plugin}: the pass for {object} exceeded its deadline of {deadline:?}")]
    Deadline {
        plugin: String,
        object: String,
        deadline: Duration,
    },
    /// The guest tried to grow its memory past the cap.
    #[error(
        "plugin {plugin}: the pass for {object} exceeded its memory cap of {limit} bytes (asked for {requested})"
    )]
    MemoryCap {
        plugin: String,
        object: String,
        limit: usize,
        requested: usize,
    },
    /// The pass used up its fuel.
    #[error("plugin {plugin}: the pass for {object} ran out of its fuel of {limit} units")]
    Fuel {
        plugin: String,
        object: String,
        limit: u64,
    },
    /// The guest panicked.
    #[error("plugin {plugin}: the guest panicked in the pass for {object}: {message}")]
    GuestPanic {
        plugin: String,
        object: String,
        message: String,
    },
    /// The guest trapped for another reason.
    #[error("plugin {plugin}: the guest trapped in the pass for {object}: {trap}")]
    Trap {
        plugin: String,
        object: String,
        trap: String,
    },
    /// The instance could not be created (e.g. the instance pool is exhausted).
    #[error("plugin {plugin}: cannot instantiate for {object}: {message}")]
    Instantiate {
        plugin: String,
        object: String,
        message: String,
    },
    /// The reconciler returned an error.
    #[error("plugin {plugin}: reconcile of {object} failed: {message}")]
    Reconcile {
        plugin: String,
        object: String,
        message: String,
        retryable: bool,
        /// When the plugin asked to be retried (contract 1.1's `retry-after`), instead of
        /// the controller's backoff.
        retry_after: Option<std::time::Duration>,
        /// Whether the pass's last write was answered 409 Conflict: the pass failed on a
        /// conflict (counted apart in metrics).
        conflict: bool,
    },
}

impl PassError {
    /// The names of this failure, in one table: the metric label (`snake_case`) and the
    /// reason of the `Reconciled` condition and the `PassFailed` event (`CamelCase`).
    fn names(&self) -> (&'static str, &'static str) {
        match self {
            PassError::Deadline { .. } => ("deadline", "DeadlineExceeded"),
            PassError::MemoryCap { .. } => ("memory_cap", "MemoryCapExceeded"),
            PassError::Fuel { .. } => ("fuel", "FuelExhausted"),
            PassError::GuestPanic { .. } => ("guest_panic", "GuestPanicked"),
            PassError::Trap { .. } => ("trap", "GuestTrapped"),
            PassError::Instantiate { .. } => ("instantiate", "InstantiateFailed"),
            PassError::Reconcile { .. } => ("reconcile", "ReconcileFailed"),
        }
    }

    /// The label of the failure in metrics, e.g. `memory_cap`.
    pub fn label(&self) -> &'static str {
        self.names().0
    }

    /// The reason of the failure in conditions and events, e.g. `MemoryCapExceeded`.
    pub fn reason(&self) -> &'static str {
        self.names().1
    }

    /// The delay the plugin asked for before the next try (contract 1.1's `retry-after`).
    pub fn retry_after(&self) -> Option<std::time::Duration> {
        match self {
            PassError::Reconcile { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the pass failed on a conflict: the reconciler returned an error after its
    /// last write was answered 409 Conflict.
    pub fn is_conflict(&self) -> bool {
        matches!(self, PassError::Reconcile { conflict: true, .. })
    }

    /// Whether the controller should retry the pass with backoff.
    pub fn is_retryable(&self) -> bool {
        !matches!(
            self,
            PassError::Reconcile {
                retryable: false,
                ..
            }
        )
    }
}
