//! The soak's cluster: the embedded API server on a fixed port and data directory,
//! restartable, and the faults it injects.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::time::Instant;
use wasm_operator_apiserver::{Actor, ApiServer, Fault, FaultAction, ServerConfig};

use crate::cluster::BenchCluster;

/// A xorshift generator: the soak needs reproducible choices, not good randomness.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// The fault matrix: a label and the fault.
pub(super) fn fault(rng: &mut Rng) -> (&'static str, Fault) {
    let fail = |verb: &str, resource: &str, code: u16, message: &str| {
        Fault::fail(verb, resource, code, message)
    };
    let (label, mut fault) = match rng.below(9) {
        0 => (
            "500 on Secret create",
            fail("create", "secrets", 500, "etcd timeout"),
        ),
        1 => (
            "409 on Secret patch",
            fail("patch", "secrets", 409, "the object has been modified"),
        ),
        2 => (
            "429 on Secret get",
            fail("get", "secrets", 429, "too many requests"),
        ),
        3 => (
            "500 on GitLabSecrets list",
            fail("list", "gitlabsecrets", 500, "etcd timeout"),
        ),
        4 => (
            "410 on Secret watch",
            fail("watch", "secrets", 410, "too old resource version"),
        ),
        5 => (
            "409 on status update",
            fail(
                "update",
                "gitlabsecrets",
                409,
                "the object has been modified",
            ),
        ),
        7 => (
            "500 on Job create",
            fail("create", "jobs", 500, "etcd timeout"),
        ),
        6 => ("dropped GitLabSecrets watch", {
            let mut f = fail("watch", "gitlabsecrets", 500, "");
            f.action = FaultAction::DropWatch;
            f
        }),
        _ => ("300 ms on Secret patch", {
            let mut f = fail("patch", "secrets", 500, "");
            f.action = FaultAction::Delay(Duration::from_millis(300));
            f
        }),
    };
    fault.remaining = Some(1 + rng.below(3) as u32);
    (label, fault)
}

/// Refuses every update, delete and apply of a Secret in `namespace` (each refusal counted
/// by the server as a hit of `fault:<verb>`).
fn refuse_rewrites(server: &ApiServer, namespace: &str) {
    for verb in REWRITES {
        server.inject(
            Fault::fail(verb, "secrets", 405, "Secrets are never rewritten")
                .in_namespace(namespace),
        );
    }
}

/// The verbs that rewrite or remove a Secret.
const REWRITES: [&str; 4] = ["update", "delete", "apply", "deletecollection"];

/// The embedded API server on a fixed port and data directory, restartable.
pub(super) struct Server {
    pub(super) cluster: BenchCluster,
    pub(super) port: u16,
    pub(super) data_dir: PathBuf,
    /// Secret updates, deletes and applies refused so far (counted before each restart).
    pub(super) rewrites: u64,
    /// The GitLabSecrets' namespaces, where a Secret is never rewritten.
    pub(super) guarded: Vec<String>,
    /// The cluster actors it runs.
    pub(super) actors: Vec<Actor>,
}

impl Server {
    /// Guards `namespace`: a Secret update, delete or apply there is refused and counted.
    pub(super) fn guard(&mut self, namespace: &str) {
        refuse_rewrites(&self.cluster.server, namespace);
        self.guarded.push(namespace.to_owned());
    }

    /// Ends the injected faults (the operator is dead, or the soak is over), so the soak's
    /// own reads neither fail nor use them up; the refusals of rewrites stay.
    pub(super) fn end_faults(&self) {
        self.cluster.server.clear_faults();
        for namespace in &self.guarded {
            refuse_rewrites(&self.cluster.server, namespace);
        }
    }

    pub(super) async fn start(
        port: u16,
        data_dir: &Path,
        actors: &[Actor],
    ) -> anyhow::Result<ApiServer> {
        let started = Instant::now();
        loop {
            let config = ServerConfig {
                port,
                data_dir: Some(data_dir.to_owned()),
                actors: actors.to_vec(),
                ..ServerConfig::default()
            };
            match ApiServer::start(config).await {
                Ok(server) => return Ok(server),
                // The old listener may take a moment to go.
                Err(error) if port != 0 && started.elapsed() < Duration::from_secs(5) => {
                    tracing::debug!(%error, "the port is not free yet");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(error) => return Err(error.into()),
            }
        }
    }

    pub(super) fn refused_rewrites(&self) -> u64 {
        let counts = self.cluster.server.counts();
        REWRITES
            .iter()
            .map(|verb| counts.get(&format!("fault:{verb}"), "secrets"))
            .sum()
    }

    pub(super) async fn restart(self) -> anyhow::Result<Self> {
        let rewrites = self.rewrites + self.refused_rewrites();
        let Self {
            cluster,
            port,
            data_dir,
            guarded,
            actors,
            ..
        } = self;
        cluster.server.stop();
        let server = Self::start(port, &data_dir, &actors).await?;
        let client = server.client()?;
        let restarted = Self {
            cluster: BenchCluster { server, client },
            port,
            data_dir,
            rewrites,
            guarded,
            actors,
        };
        restarted.end_faults();
        Ok(restarted)
    }
}
