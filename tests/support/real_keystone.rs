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

use serde_json::{Value, json};

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
    /// The `admin` user's password.
    password: String,
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
                password: password.to_owned(),
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

    /// `method path` (below `/v3`) as the `admin` user, scoped to project `admin`, with a
    /// JSON `body`: the response's status and JSON body (`null` when it has none).
    pub fn admin(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let auth = json!({"auth": {
            "identity": {"methods": ["password"], "password": {"user": {
                "name": "admin", "domain": {"name": "Default"}, "password": self.password}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}});
        let token = exchange(self.port, "POST", "/v3/auth/tokens", None, Some(&auth));
        assert_eq!(token.status, 201, "the admin token: {}", token.body);
        let token = token
            .header("x-subject-token")
            .expect("the token response carries X-Subject-Token");
        let answer = exchange(self.port, method, &format!("/v3{path}"), Some(&token), body);
        (answer.status, answer.body)
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

/// One HTTP/1.0 response.
struct Answer {
    status: u16,
    /// The header lines, as sent.
    headers: Vec<String>,
    body: Value,
}

impl Answer {
    /// The value of header `name` (any case).
    fn header(&self, name: &str) -> Option<String> {
        self.headers.iter().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_owned())
        })
    }
}

/// One request to `127.0.0.1:port` on its own connection (the WSGI server answers
/// HTTP/1.0 and closes).
fn exchange(
    port: u16,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&Value>,
) -> Answer {
    let mut stream =
        std::net::TcpStream::connect(("127.0.0.1", port)).expect("the real Keystone answers");
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(token) = token {
        request.push_str(&format!("X-Auth-Token: {token}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream
        .write_all(request.as_bytes())
        .expect("the request is sent");
    let mut answer = String::new();
    stream
        .read_to_string(&mut answer)
        .expect("the answer is read");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|line| line.split(' ').nth(1))
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("{method} {path}: no status line in {head:?}"));
    Answer {
        status,
        headers: lines.map(str::to_owned).collect(),
        body: serde_json::from_str(body).unwrap_or(Value::Null),
    }
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
