//! The wasm-operator plugin runtime: one wasmtime engine, the precompiled-artifact cache,
//! the contract checks, the capabilities the host implements for guests, and one store per
//! pass with a deadline and a memory cap. It knows nothing of Kubernetes clients: a pass
//! reaches the cluster through a [`ClusterBackend`](backend::ClusterBackend) the caller
//! supplies, behind the [permission check](backend::checked).
//!
//! - [`capabilities`]: the WIT imports (cluster, logging, crypto, planner).
//! - [`backend`]: the cluster a pass is served from, and its permission check.
//! - [`text`]: guest text escaped and capped before the host shows it.
//! - [`wasi_run`]: the `wasm32-wasip2` test runner behind `wasm-operator wasi-run`.
//!
//! The lifecycle of a plugin, as this module implements it:
//!
//! 1. [`Runtime::new`] builds one wasmtime [`Engine`](wasmtime::Engine) (component model,
//!    pooling allocator, epoch interruption), one [`Linker`](wasmtime::component::Linker)
//!    holding every capability, and starts the epoch ticker.
//! 2. [`Runtime::load`] reads a `.wasm` file, checks that it is a component, hashes it, and
//!    loads the precompiled artifact keyed by that sha256 and the engine's version from the
//!    [cache](cache), once its tag verifies under the cache key — compiling and storing it
//!    on a miss or a refused artifact.
//! 3. The component's exports and imports are checked against the [contract](contract):
//!    the right world, the same major version of `wasm-operator:plugin` (and of
//!    `gitlab:secretgen` for the planner and the reconcilers that import it).
//! 4. The linker pre-instantiates it once (`instantiate_pre`); a reconciler's `describe()`
//!    runs in a first store and is validated.
//! 5. Every pass ([`Plugin::reconcile`], [`Plugin::index`]) gets a fresh `Store` and
//!    instance from that `InstancePre`, with the plugin's deadline (epoch ticks, at each of
//!    which the guest yields to tokio, plus a wall-clock timeout over host calls) and memory
//!    cap (over all of the store's memories); nothing survives a pass. The planner calls
//!    of one pass share one planner instance in a store of its own, with the planner's
//!    limits afresh for each call ([`planner_session`]).
//! 6. A failed pass becomes a [`PassError`] naming the plugin, the object and the cause.

mod admission;
pub mod backend;
mod bindings;
pub(crate) mod cache;
pub mod capabilities;
pub mod contract;
mod describe;
mod engine;
mod error;
pub(crate) mod limits;
mod pass;
mod planner_memo;
mod planner_session;
mod plugin;
pub mod text;
pub mod wasi_run;

pub use bindings::{CONTRACT_PACKAGE, CONTRACT_VERSION, PLANNER_PACKAGE, PLANNER_VERSION, planner};
pub use cache::{CacheError, CacheOutcome, write_new_key as write_cache_key};
pub use capabilities::http::{EgressEnv, EgressObserver, ResolveError, ServiceResolver};
pub use contract::PluginKind;
pub use engine::{PERF_MAP_ENV, Runtime, RuntimeConfig, RuntimeError};
pub use error::{LoadError, PassError};
pub use limits::Limits;
pub use plugin::Plugin;
pub use text::GUEST_TEXT_MAX;
