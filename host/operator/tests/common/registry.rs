//! A real OCI registry for the tests: Debian's `docker-registry` (distribution 2.8) on a
//! loopback port, which `.ci/run` installs.

use std::path::Path;
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use wasm_operator::oci::OciRef;

/// A `docker-registry serve` on a loopback port, killed on drop.
pub struct LocalRegistry {
    child: Child,
    tls: bool,
    pub addr: String,
    storage: tempfile::TempDir,
    _config: tempfile::TempDir,
}

/// How the registry is reached and guarded.
#[derive(Default)]
pub struct Guard {
    /// An htpasswd line (`user:bcrypt`).
    pub htpasswd: Option<String>,
    /// A serving certificate and key (PEM).
    pub tls: Option<(String, String)>,
}

impl LocalRegistry {
    pub fn start(guard: Guard) -> Self {
        let port = super::free_port("127.0.0.1");
        let addr = format!("127.0.0.1:{port}");
        let storage = tempfile::tempdir().expect("tempdir");
        let config = tempfile::tempdir().expect("tempdir");
        let mut yaml = format!(
            "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: {addr}\n  secret: test-secret\n",
            storage.path().display()
        );
        if let Some((cert, key)) = &guard.tls {
            std::fs::write(config.path().join("tls.crt"), cert).expect("cert");
            std::fs::write(config.path().join("tls.key"), key).expect("key");
            yaml.push_str(&format!(
                "  tls:\n    certificate: {0}/tls.crt\n    key: {0}/tls.key\n",
                config.path().display()
            ));
        }
        if let Some(line) = &guard.htpasswd {
            std::fs::write(config.path().join("htpasswd"), format!("{line}\n")).expect("htpasswd");
            yaml.push_str(&format!(
                "auth:\n  htpasswd:\n    realm: test\n    path: {}/htpasswd\n",
                config.path().display()
            ));
        }
        let file = config.path().join("config.yml");
        std::fs::write(&file, yaml).expect("config");
        // Made at once, so that its drop kills the process on every path.
        let mut registry = LocalRegistry {
            child: Command::new("docker-registry")
                .arg("serve")
                .arg(&file)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("docker-registry runs (.ci/run installs it)"),
            addr,
            tls: guard.tls.is_some(),
            storage,
            _config: config,
        };
        // Ready when it answers the distribution API's base endpoint (a port taken by
        // another process in between would answer otherwise, or the child would exit).
        for _ in 0..500 {
            if let Ok(Some(status)) = registry.child.try_wait() {
                panic!(
                    "docker-registry exited before serving on {}: {status}",
                    registry.addr
                );
            }
            if answers_v2(&registry.addr, registry.tls) {
                return registry;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!(
            "docker-registry did not listen on {} within 10 s",
            registry.addr
        );
    }

    pub fn reference(&self, repo_and_tag: &str) -> OciRef {
        format!("oci://{}/{repo_and_tag}", self.addr)
            .parse()
            .expect("reference")
    }

    /// The file the registry keeps blob `digest` in.
    pub fn blob_file(&self, digest: &str) -> PathBuf {
        let hex = digest.trim_start_matches("sha256:");
        self.storage
            .path()
            .join("docker/registry/v2/blobs/sha256")
            .join(&hex[..2])
            .join(hex)
            .join("data")
    }
}

impl Drop for LocalRegistry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `wasm-operator plugin push FILE REFERENCE ARGS...`.
pub fn push_cli(file: &Path, reference: &OciRef, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wasm-operator"))
        .args(["plugin", "push"])
        .arg(file)
        .arg(reference.to_string())
        .args(args)
        .output()
        .expect("wasm-operator runs")
}

/// Whether `addr` answers `GET /v2/` as a registry does (200, or 401 when it wants
/// credentials); over TLS, whether it accepts a connection (the handshake is the client's).
fn answers_v2(addr: &str, tls: bool) -> bool {
    if tls {
        return std::net::TcpStream::connect(addr).is_ok();
    }
    super::http_get(addr, "/v2/").is_some_and(|head| {
        head.starts_with("HTTP/") && matches!(head.split(' ').nth(1), Some("200" | "401"))
    })
}
