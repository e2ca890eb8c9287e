//! The conformance suite's harness: the real Keystone (set up once per test binary), and
//! the side-by-side runner comparing its answers with the stand-in's.

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use wasm_operator_apiserver::{Actor, ApiServer, ServerConfig};

use crate::support::http::{Answer, send};
use crate::support::keystone::{bootstrapped, password_auth};

pub const PASSWORD: &str = "conformance-admin";

/// The real Keystone's base URL (`http://127.0.0.1:<port>`).
pub fn real() -> &'static str {
    static REAL: OnceLock<String> = OnceLock::new();
    REAL.get_or_init(|| {
        assert!(
            Path::new("/usr/bin/keystone-manage").exists(),
            "python3-keystone is not installed (apt-get install python3-keystone): the \
             stand-in cannot be checked against the real Keystone"
        );
        let dir = tempfile::tempdir().expect("a temp dir").keep();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let log = std::fs::File::create(dir.join("setup.log")).expect("a log file");
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/keystone/setup-keystone.sh"
        );
        let mut child = Command::new("/bin/sh")
            .arg(script)
            .arg(&dir)
            .arg(port.to_string())
            .arg(PASSWORD)
            .arg(std::process::id().to_string())
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log file"))
            .stderr(log)
            .spawn()
            .expect("the setup script starts");
        // The script serves until this process exits; a thread reaps it and reports an
        // early exit (a failed setup).
        let (exited, exit) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = exited.send(child.wait());
        });
        let started = Instant::now();
        // Setting up takes about a minute on a loaded machine; this bound only keeps a broken
        // setup from hanging the suite.
        while started.elapsed() < Duration::from_secs(600) {
            if let Ok(status) = exit.try_recv() {
                let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                let log = std::fs::read_to_string(dir.join("setup.log")).unwrap_or_default();
                let tail: String = log.lines().rev().take(30).collect::<Vec<_>>().join("\n");
                panic!("the real Keystone's setup exited with {status}:\n{tail}");
            }
            if answers_version(port) {
                return format!("http://127.0.0.1:{port}");
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        panic!(
            "the real Keystone did not answer GET /v3 (log: {})",
            dir.join("setup.log").display()
        );
    })
}

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

/// The type structure of a JSON value: objects keep their keys, arrays become the sorted
/// set of their elements' shapes, scalars their type name.
pub fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shape(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => {
            let mut shapes: Vec<Value> = items.iter().map(shape).collect();
            shapes.sort_by_key(Value::to_string);
            shapes.dedup();
            Value::Array(shapes)
        }
        Value::String(_) => json!("string"),
        Value::Number(_) => json!("number"),
        Value::Bool(_) => json!("bool"),
        Value::Null => json!("null"),
    }
}

/// One Keystone under test: its URL, admin token, and the ids its answers gave.
pub struct Side {
    pub base: String,
    pub token: String,
    pub ids: HashMap<&'static str, String>,
}

impl Side {
    fn fill(&self, template: &str) -> String {
        let mut out = template.to_owned();
        for (name, id) in &self.ids {
            out = out.replace(&format!("{{{name}}}"), id);
        }
        out
    }
}

/// The real Keystone and the stand-in side by side.
pub struct Both {
    pub real: Side,
    pub stand_in: Side,
    _server: ApiServer,
}

async fn admin_token(base: &str) -> String {
    let answer = send(
        "POST",
        &format!("{base}/v3/auth/tokens"),
        &[],
        Some(&password_auth(PASSWORD)),
    )
    .await;
    assert_eq!(answer.status, 201, "{base}: {:?}", answer.body);
    answer
        .headers
        .get("x-subject-token")
        .cloned()
        .expect("an X-Subject-Token")
}

impl Both {
    pub async fn new() -> Self {
        let real = tokio::task::spawn_blocking(real)
            .await
            .expect("the real Keystone")
            .to_owned();
        let server = ApiServer::start(ServerConfig {
            actors: vec![Actor::Keystone],
            ..ServerConfig::default()
        })
        .await
        .expect("the server starts");
        let client = server.client().expect("a client");
        let stand_in = bootstrapped(&client, "default", "keystone", PASSWORD).await;
        Self {
            real: Side {
                token: admin_token(&real).await,
                base: real,
                ids: HashMap::new(),
            },
            stand_in: Side {
                token: admin_token(&stand_in).await,
                base: stand_in,
                ids: HashMap::new(),
            },
            _server: server,
        }
    }

    /// Sends `method path` (with `{name}` filled from each side's ids) to both, asserts
    /// equal status, shape and (for errors) title; answers (real, stand-in).
    pub async fn step(
        &mut self,
        method: &str,
        path: &str,
        body: Option<Value>,
    ) -> (Answer, Answer) {
        let mut answers = Vec::new();
        for side in [&self.real, &self.stand_in] {
            let url = format!("{}/v3{}", side.base, side.fill(path));
            let body = body
                .as_ref()
                .map(|b| serde_json::from_str::<Value>(&side.fill(&b.to_string())).expect("JSON"));
            answers.push(
                send(
                    method,
                    &url,
                    &[("X-Auth-Token", &side.token)],
                    body.as_ref(),
                )
                .await,
            );
        }
        let stand_in = answers.pop().expect("two answers");
        let real = answers.pop().expect("two answers");
        let what = format!("{method} {path}");
        assert_eq!(
            real.status, stand_in.status,
            "{what}: real {:?} / stand-in {:?}",
            real.body, stand_in.body
        );
        assert_eq!(
            shape(&real.body),
            shape(&stand_in.body),
            "{what}: real {:#} / stand-in {:#}",
            real.body,
            stand_in.body
        );
        assert_eq!(
            real.body["error"]["title"], stand_in.body["error"]["title"],
            "{what}"
        );
        assert_eq!(
            real.headers.contains_key("x-subject-token"),
            stand_in.headers.contains_key("x-subject-token"),
            "{what}"
        );
        (real, stand_in)
    }

    /// Records `name` = the id at `pointer` of each side's answer.
    pub fn remember(&mut self, name: &'static str, answers: &(Answer, Answer), pointer: &str) {
        for (side, answer) in [
            (&mut self.real, &answers.0),
            (&mut self.stand_in, &answers.1),
        ] {
            let id = answer
                .body
                .pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("{pointer} in {:?}", answer.body));
            side.ids.insert(name, id.to_owned());
        }
    }
}

/// A suffix keeping this test's names apart from other tests' on the shared real Keystone.
pub fn tag() -> String {
    format!("{:08x}", rand::random::<u32>())
}
