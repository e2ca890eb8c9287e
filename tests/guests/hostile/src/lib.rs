//! A test-only reconciler that tries each escape the host must refuse.
//!
//! Its primary kind is ConfigMap. A pass acts by the `hostile.wasm-operator.dev/behaviour`
//! annotation of the primary:
//!
//! - `huge-create`: creates a ConfigMap whose body is over the API server's 3 MiB limit;
//! - `socket`: opens a TCP connection to the `hostile.wasm-operator.dev/addr` annotation;
//! - `ugly-panic`: panics with ANSI escapes, newlines and [`UGLY_LEN`] bytes of text;
//! - `ugly-error`: returns a permanent error with the same text;
//! - `spin`: spins forever.
//!
//! Every outcome the guest can see is returned as a permanent error starting with what
//! happened (`refused: …`, `connected`), so a test reads it from the pass's error.
//!
//! Its field index `spin` spins forever for a primary whose annotation is `spin-index`,
//! and is empty otherwise.

use std::io::Write as _;

use k8s_openapi::api::core::v1::ConfigMap;
use wasm_operator_sdk::{
    Cluster, ClusterExt, Description, FieldIndex, KindRef, Outcome, Permission, ReconcileError,
    Reconciler, Request, Verb, log,
};

/// The annotation that selects a behaviour.
pub const BEHAVIOUR: &str = "hostile.wasm-operator.dev/behaviour";
/// The annotation holding the `host:port` the `socket` behaviour connects to.
pub const ADDR: &str = "hostile.wasm-operator.dev/addr";
/// The bytes of filler in the `ugly-*` text.
pub const UGLY_LEN: usize = 100 * 1024;
/// The start of the `ugly-*` text: a colour escape, a forged log line, a carriage return.
pub const UGLY_PREFIX: &str = "\u{1b}[31mred\u{1b}[0m\nERROR forged line\r\n";
/// The size of the `huge-create` ConfigMap's one value: over the 3 MiB body limit.
pub const HUGE_LEN: usize = 4 << 20;

/// The hostile reconciler.
pub struct Hostile;

impl Reconciler for Hostile {
    fn describe() -> Description {
        let config_map = KindRef::of::<ConfigMap>();
        Description {
            name: "hostile".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            field_manager: "hostile-reconciler".into(),
            primary: config_map.clone(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![FieldIndex {
                name: "spin".into(),
                description: "spins for a primary annotated spin-index".into(),
            }],
            permissions: vec![Permission {
                kind: config_map,
                verbs: vec![Verb::Get, Verb::List, Verb::Watch, Verb::Create],
            }],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    fn reconcile(cluster: &dyn Cluster, request: &Request) -> Result<Outcome, ReconcileError> {
        let namespace = request.namespace.as_deref();
        let Some(primary) = cluster.get_typed::<ConfigMap>(namespace, &request.name)? else {
            return Ok(Outcome::done());
        };
        let annotation = |key: &str| {
            primary
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(key))
                .cloned()
        };
        let done = |what: String| Err(ReconcileError::Permanent(what));
        match annotation(BEHAVIOUR).as_deref() {
            Some("huge-create") => {
                let body = serde_json::json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": format!("{}-huge", request.name), "namespace": namespace},
                    "data": {"v": "x".repeat(HUGE_LEN)},
                });
                match cluster.create(&body) {
                    Ok(_) => done("created".into()),
                    Err(e) => done(format!("refused: {e:?}")),
                }
            }
            Some("socket") => {
                let addr = annotation(ADDR).unwrap_or_default();
                match std::net::TcpStream::connect(addr.as_str()) {
                    Ok(mut stream) => {
                        let _ = stream.write_all(b"escaped");
                        done("connected".into())
                    }
                    Err(e) => done(format!("refused: {e}")),
                }
            }
            Some("ugly-panic") => panic!("{}", ugly()),
            Some("ugly-error") => {
                log::warn(&ugly());
                done(ugly())
            }
            Some("spin") => spin(),
            _ => Ok(Outcome::done()),
        }
    }

    fn index(name: &str, object: &serde_json::Value) -> Vec<String> {
        if name == "spin" && object["metadata"]["annotations"][BEHAVIOUR] == "spin-index" {
            spin()
        }
        Vec::new()
    }
}

/// [`UGLY_PREFIX`] then [`UGLY_LEN`] bytes of `x`.
pub fn ugly() -> String {
    format!("{UGLY_PREFIX}{}", "x".repeat(UGLY_LEN))
}

fn spin() -> ! {
    let mut n: u64 = 0;
    loop {
        n = std::hint::black_box(n.wrapping_add(1));
    }
}

wasm_operator_sdk::export_reconciler!(Hostile);
