//! Debian's real Keystone (python3-keystone 22.0.2 on sqlite, its public WSGI app on
//! loopback) for end-to-end tests, set up by the API server's conformance script
//! (`host/apiserver/tests/keystone/setup-keystone.sh`) and stopped when a test says so.
//!
//! The script serves until a watched process exits. Here that process is a small shell
//! loop that itself lives only while the test process does, so [`RealKeystone::stop`]
//! (killing the loop) stops the Keystone, and so does the end of the test binary.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SETUP: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../host/apiserver/tests/keystone/setup-keystone.sh"
);

/// Setting up takes about 30 s, a minute on a loaded machine; this bound only keeps a
/// broken setup from hanging the suite.
const SETUP_BOUND: Duration = Duration::from_secs(600);

/// A running real Keystone.
pub struct RealKeystone {
    port: u16,
    dir: PathBuf,
    /// The process whose exit stops the Keystone.
    lifeline: Child,
}

impl RealKeystone {
    /// Sets up and starts a Keystone whose `admin` has `password`; blocks until it answers
    /// `GET /v3` (panics with the setup log's tail when it cannot).
    pub fn start(password: &str) -> Self {
        assert!(
            Path::new("/usr/bin/keystone-manage").exists(),
            "python3-keystone is not installed (apt-get install python3-keystone)"
        );
        let dir = tempfile::tempdir().expect("a temp dir").keep();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut lifeline = Command::new("/bin/sh")
            .arg("-c")
            .arg(format!(
                "while kill -0 {} 2>/dev/null; do sleep 1; done",
                std::process::id()
            ))
            .stdin(Stdio::null())
            .spawn()
            .expect("the lifeline starts");
        match serve(&dir, port, password, lifeline.id()) {
            Ok(()) => Self {
                port,
                dir,
                lifeline,
            },
            Err(message) => {
                let _ = lifeline.kill();
                let _ = lifeline.wait();
                panic!("{message}");
            }
        }
    }

    /// The loopback port it serves on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops it and waits until its port refuses connections.
    pub fn stop(&mut self) {
        let _ = self.lifeline.kill();
        let _ = self.lifeline.wait();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "the real Keystone on port {} did not stop (dir {})",
                self.port,
                self.dir.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for RealKeystone {
    fn drop(&mut self) {
        let _ = self.lifeline.kill();
        let _ = self.lifeline.wait();
    }
}

/// Runs the setup script in `dir` for `port` (serving until process `lifeline` exits) and
/// waits until the Keystone answers; why not otherwise, with the setup log's tail.
fn serve(dir: &Path, port: u16, password: &str, lifeline: u32) -> Result<(), String> {
    let log = std::fs::File::create(dir.join("setup.log")).expect("a log file");
    let mut setup = Command::new("/bin/sh")
        .arg(SETUP)
        .arg(dir)
        .arg(port.to_string())
        .arg(password)
        .arg(lifeline.to_string())
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("the log file"))
        .stderr(log)
        .spawn()
        .map_err(|e| format!("the setup script does not start: {e}"))?;
    let started = Instant::now();
    while started.elapsed() < SETUP_BOUND {
        if let Ok(Some(status)) = setup.try_wait() {
            let log = std::fs::read_to_string(dir.join("setup.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(format!(
                "the real Keystone's setup exited with {status}:\n{}",
                tail.join("\n")
            ));
        }
        if answers_version(port) {
            // The script lives as long as the Keystone does; a thread reaps it.
            std::thread::spawn(move || setup.wait());
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let _ = setup.kill();
    let _ = setup.wait();
    Err(format!(
        "the real Keystone did not answer GET /v3 within {SETUP_BOUND:?} (log: {})",
        dir.join("setup.log").display()
    ))
}

/// Whether `127.0.0.1:port` answers `GET /v3` with 200.
fn answers_version(port: u16) -> bool {
    let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let request = "GET /v3 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    let mut answer = String::new();
    stream.write_all(request.as_bytes()).is_ok()
        && stream.read_to_string(&mut answer).is_ok()
        && answer.starts_with("HTTP/1.0 200")
}
