//! The real Keystone (Debian's python3-keystone 22.0.2 on sqlite, its public WSGI app on
//! loopback), set up once per test binary by `setup-keystone.sh` and lent to one test at a
//! time: while a test holds a [`RealKeystone`] the key repositories and the credentials
//! are its own.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use keystone::testkit::Keys;
use serde_json::{Value, json};

use crate::http::{Answer, send, try_send};

/// The bootstrapped admin's password.
const PASSWORD: &str = "real-keystone-admin";
/// The uid and gid Keystone's containers run as (facts §2.10, `runAsUser`). When the tests
/// run as root the real Keystone runs as it, so that keystone-manage run as the rotation
/// pod's user shares its database.
pub const KEYSTONE_UID: u32 = 42424;
const PYTHON: &str = "/usr/bin/python3";
const SETPRIV: &str = "/usr/bin/setpriv";

struct Server {
    port: u16,
    dir: PathBuf,
}

/// The real Keystone, lent to one test.
pub struct RealKeystone {
    server: &'static Server,
    _turn: MutexGuard<'static, ()>,
}

/// A token the real Keystone issued, and whose it is.
pub struct Token {
    pub id: String,
    pub user_id: String,
}

/// Whether this process runs as root (`/proc/self` belongs to the effective uid).
pub fn running_as_root() -> bool {
    std::fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or_else(|e| panic!("reading /proc/self: {e}"))
}

/// `program` run as `uid`:`gid` when this process is root (through setpriv), else as this
/// process's user.
pub fn command_as(uid: u32, gid: u32, program: &str) -> Command {
    if !running_as_root() {
        return Command::new(program);
    }
    assert!(
        Path::new(SETPRIV).exists(),
        "{SETPRIV} is missing (util-linux): the tests cannot run Keystone as a non-root user"
    );
    let mut command = Command::new(SETPRIV);
    command.args([
        &format!("--reuid={uid}"),
        &format!("--regid={gid}"),
        "--clear-groups",
        program,
    ]);
    command
}

/// Makes `path` belong to Keystone's user, when this process is root and so owns it.
pub fn give_to_keystone(path: &Path) {
    if running_as_root() {
        std::os::unix::fs::chown(path, Some(KEYSTONE_UID), Some(KEYSTONE_UID))
            .unwrap_or_else(|e| panic!("chown {}: {e}", path.display()));
    }
}

/// The real Keystone for the calling test, set up on first use; waits for the tests
/// before it to finish with it. It starts with empty key repositories and no credentials.
pub fn real() -> RealKeystone {
    static SERVER: OnceLock<Server> = OnceLock::new();
    static TURN: Mutex<()> = Mutex::new(());
    let turn = TURN.lock().unwrap_or_else(PoisonError::into_inner);
    let keystone = RealKeystone {
        server: SERVER.get_or_init(start),
        _turn: turn,
    };
    keystone.reset();
    keystone
}

fn start() -> Server {
    assert!(
        Path::new("/usr/bin/keystone-manage").exists() && Path::new(PYTHON).exists(),
        "python3-keystone is not installed (apt-get install python3-keystone): the keys \
         cannot be checked against the real Keystone"
    );
    let dir = crate::scratch("server");
    give_to_keystone(&dir);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let log_path = dir.join("setup.log");
    let log = std::fs::File::create(&log_path).expect("a log file");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/real_keystone/setup-keystone.sh"
    );
    let mut child = command_as(KEYSTONE_UID, KEYSTONE_UID, "/bin/sh")
        .arg(script)
        .arg(&dir)
        .arg(port.to_string())
        .arg(PASSWORD)
        .arg(std::process::id().to_string())
        .arg(crate::FERNET_MAX_ACTIVE_KEYS.to_string())
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("the log file"))
        .stderr(log)
        .spawn()
        .expect("the setup script starts");
    // The script serves until this process exits; a thread reaps it and reports an early
    // exit (a failed setup).
    let (exited, exit) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = exited.send(child.wait());
    });
    let started = Instant::now();
    // About 30 s on this machine; the bound only keeps a broken setup from hanging the suite.
    while started.elapsed() < Duration::from_secs(600) {
        if let Ok(status) = exit.try_recv() {
            let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(30).collect();
            panic!(
                "the real Keystone's setup exited with {status}:\n{}",
                tail.into_iter().rev().collect::<Vec<_>>().join("\n")
            );
        }
        if try_send(port, "GET", "/v3", &[], None).is_ok_and(|a| a.status == 200) {
            return Server { port, dir };
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    panic!(
        "the real Keystone did not answer GET /v3 (log: {})",
        log_path.display()
    );
}

/// The files of a key repository: `"0"`.. → key.
pub type KeyFiles = BTreeMap<String, Vec<u8>>;

impl RealKeystone {
    fn repository(&self, keys: Keys) -> PathBuf {
        match keys {
            Keys::Fernet => self.server.dir.join("fernet-keys"),
            Keys::Credential => self.server.dir.join("credential-keys"),
        }
    }

    /// The URL of the real Keystone's database (what `{name}-db-connection` holds).
    pub fn database_url(&self) -> String {
        format!(
            "sqlite:///{}",
            self.server.dir.join("keystone.db").display()
        )
    }

    /// Empties both key repositories and deletes every credential (under the keys of an
    /// earlier test they would stop credential_rotate).
    fn reset(&self) {
        for keys in [Keys::Fernet, Keys::Credential] {
            self.install(keys, &KeyFiles::new());
        }
        self.sql("DELETE FROM credential", &[]);
    }

    /// Makes `files` the whole content of the `keys` repository, as the keys Secret's
    /// volume shows it to the Keystone.
    pub fn install(&self, keys: Keys, files: &KeyFiles) {
        let repository = self.repository(keys);
        let entries = std::fs::read_dir(&repository)
            .unwrap_or_else(|e| panic!("listing {}: {e}", repository.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            std::fs::remove_file(&path)
                .unwrap_or_else(|e| panic!("removing {}: {e}", path.display()));
        }
        for (name, key) in files {
            let path = repository.join(name);
            std::fs::write(&path, key)
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                .expect("a key file's mode");
            give_to_keystone(&path);
        }
    }

    fn send(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Answer {
        send(self.server.port, method, path, headers, body)
    }

    /// A project-scoped token of the bootstrapped admin (password auth).
    pub fn issue_token(&self) -> Token {
        let auth = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"name": "Default"}, "password": PASSWORD}}},
            "scope": {"project": {"name": "admin", "domain": {"name": "Default"}}}}});
        let answer = self.send("POST", "/v3/auth/tokens", &[], Some(&auth));
        assert_eq!(answer.status, 201, "issuing a token: {:?}", answer.body);
        let id = answer
            .headers
            .get("x-subject-token")
            .cloned()
            .expect("an X-Subject-Token header");
        let user_id = answer.body["token"]["user"]["id"]
            .as_str()
            .expect("the token's user id")
            .to_owned();
        Token { id, user_id }
    }

    /// GET /v3/auth/tokens of `token`, authenticated by itself.
    pub fn validate(&self, token: &Token) -> Answer {
        self.send(
            "GET",
            "/v3/auth/tokens",
            &[("X-Auth-Token", &token.id), ("X-Subject-Token", &token.id)],
            None,
        )
    }

    /// Creates a credential of `token`'s user holding `blob`; its id.
    pub fn create_credential(&self, token: &Token, blob: &str) -> String {
        let body = json!({"credential": {"type": "cert", "user_id": token.user_id, "blob": blob}});
        let answer = self.send(
            "POST",
            "/v3/credentials",
            &[("X-Auth-Token", &token.id)],
            Some(&body),
        );
        assert_eq!(
            answer.status, 201,
            "creating a credential: {:?}",
            answer.body
        );
        answer.body["credential"]["id"]
            .as_str()
            .expect("the credential's id")
            .to_owned()
    }

    /// GET /v3/credentials/{id}.
    pub fn credential(&self, token: &Token, id: &str) -> Answer {
        self.send(
            "GET",
            &format!("/v3/credentials/{id}"),
            &[("X-Auth-Token", &token.id)],
            None,
        )
    }

    /// The `key_hash` the database stores with credential `id`: the SHA-1 of the key that
    /// encrypted it.
    pub fn credential_key_hash(&self, id: &str) -> String {
        self.sql("SELECT key_hash FROM credential WHERE id = ?", &[id])
            .trim()
            .to_owned()
    }

    /// Runs one SQL statement on the database as Keystone's user (a root-owned WAL file
    /// would lock Keystone out); the rows, one a line.
    fn sql(&self, statement: &str, params: &[&str]) -> String {
        let code = "import sqlite3, sys\n\
            db = sqlite3.connect(sys.argv[1])\n\
            rows = db.execute(sys.argv[2], sys.argv[3:]).fetchall()\n\
            db.commit()\n\
            print('\\n'.join('|'.join(str(v) for v in row) for row in rows))\n";
        let db = self.server.dir.join("keystone.db");
        let out = command_as(KEYSTONE_UID, KEYSTONE_UID, PYTHON)
            .arg("-c")
            .arg(code)
            .arg(&db)
            .arg(statement)
            .args(params)
            .output()
            .unwrap_or_else(|e| panic!("{PYTHON} did not run: {e}"));
        assert!(
            out.status.success(),
            "{statement}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// The SHA-1 hex of `key`, as keystone's `primary_key_hash` computes it.
pub fn sha1(key: &[u8]) -> String {
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import hashlib, sys; print(hashlib.sha1(sys.stdin.buffer.read()).hexdigest())",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().expect("stdin").write_all(key)?;
            child.wait_with_output()
        })
        .unwrap_or_else(|e| panic!("{PYTHON} did not run: {e}"));
    assert!(out.status.success(), "hashing a key");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}
