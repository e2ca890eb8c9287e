//! The WIT imports the host implements for its guests, and the store data of a pass.
//!
//! Each capability has a `Ctx` (its state), a `HasData` marker naming how the generated
//! bindings reach it, and one module holding only its `Host` impl. [`PassState`], the data
//! of every store, is built from those pieces plus WASI.
//!
//! What a guest gets: the `cluster` it declared (checked per call), `logging` into the
//! host's tracing, `crypto` key generation, `wasi:http/outgoing-handler` towards the
//! destinations it declared only ([`http`]), and WASI with a wall clock and randomness only —
//! no preopened directory, no environment, no sockets (TCP, UDP and name lookup refused,
//! every address denied), stdout discarded, stderr captured (it carries a guest's panic
//! message).

pub(crate) mod cluster;
pub(crate) mod crypto;
pub mod http;
pub mod logging;
pub(crate) mod planner;
pub mod targets;
pub(crate) mod texts;

use wasmtime::component::{HasData, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

pub(crate) use cluster::ClusterCtx;
pub(crate) use crypto::{CryptoCtx, Keygens};
pub(crate) use http::EgressHooks;
pub(crate) use logging::LogCtx;
pub(crate) use planner::PlannerCtx;

use crate::limits::MemoryCap;

/// The most stderr kept from one pass (panic messages are short).
const STDERR_CAPACITY: usize = 64 * 1024;

/// The data of one store: one pass of one plugin for one object.
pub(crate) struct PassState {
    wasi: WasiCtx,
    table: ResourceTable,
    stderr: MemoryOutputPipe,
    http: WasiHttpCtx,
    egress: EgressHooks,
    pub(crate) memory: MemoryCap,
    pub(crate) log: LogCtx,
    pub(crate) cluster: ClusterCtx,
    pub(crate) crypto: CryptoCtx,
    pub(crate) planner: PlannerCtx,
    /// Calls the guest made to any import (WASI, `wasi:http` or a capability) since the
    /// store was made or this was last reset: 0 after a call means the call read nothing
    /// but its arguments.
    pub(crate) import_calls: u64,
}

impl PassState {
    /// The state of a pass with no stdio, environment or filesystem, and no network but
    /// the HTTP requests `egress` allows.
    pub(crate) fn new(
        memory: MemoryCap,
        egress: EgressHooks,
        log: LogCtx,
        cluster: ClusterCtx,
        crypto: CryptoCtx,
        planner: PlannerCtx,
    ) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = WasiCtx::builder()
            .stderr(stderr.clone())
            // No network, whatever wasmtime-wasi's defaults: the linker serves wasi:sockets
            // (it is WASI), and every use of it is refused here.
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .socket_addr_check(|_, _| Box::pin(async { false }))
            .build();
        Self {
            wasi,
            table: ResourceTable::new(),
            stderr,
            http: WasiHttpCtx::new(),
            egress,
            memory,
            log,
            cluster,
            crypto,
            planner,
            import_calls: 0,
        }
    }

    /// What the guest wrote to stderr (a panic message, an allocation failure).
    pub(crate) fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).into_owned()
    }
}

// Every WASI and wasi:http import reaches the store's data through `ctx` or `http`, and every
// capability through its getter in the linker (`engine.rs`): each counts the call.

impl WasiView for PassState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        self.import_calls += 1;
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for PassState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        self.import_calls += 1;
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: &mut self.egress,
        }
    }
}

/// Reaches the cluster capability from a store's data.
pub(crate) struct HasCluster;
impl HasData for HasCluster {
    type Data<'a> = &'a mut ClusterCtx;
}

/// Reaches the logging capability from a store's data.
pub(crate) struct HasLog;
impl HasData for HasLog {
    type Data<'a> = &'a mut LogCtx;
}

/// Reaches the planner capability from a store's data.
pub(crate) struct HasPlanner;
impl HasData for HasPlanner {
    type Data<'a> = &'a mut PlannerCtx;
}

/// Reaches the crypto capability from a store's data.
pub(crate) struct HasCrypto;
impl HasData for HasCrypto {
    type Data<'a> = &'a mut CryptoCtx;
}
