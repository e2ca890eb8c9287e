//! The Keystone stand-in against the real Keystone: Debian's `python3-keystone` (22.0.2) on
//! sqlite, set up once for this test binary by `tests/keystone/setup-keystone.sh`. Each
//! test sends the same requests to both and compares status codes and JSON shapes (key
//! sets and value types, so ids and timestamps do not matter) and, for errors, the title.
//!
//! A missing package fails the suite: `apt-get install python3-keystone`.

#[path = "support/mod.rs"]
mod support;

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use wasm_operator_apiserver::{Actor, ApiServer, ServerConfig};

use support::http::{Answer, send};
use support::keystone::{bootstrapped, password_auth};

const PASSWORD: &str = "conformance-admin";

/// The real Keystone's base URL (`http://127.0.0.1:<port>`).
fn real() -> &'static str {
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
fn shape(value: &Value) -> Value {
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
struct Side {
    base: String,
    token: String,
    ids: HashMap<&'static str, String>,
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
struct Both {
    real: Side,
    stand_in: Side,
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
    async fn new() -> Self {
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
    async fn step(&mut self, method: &str, path: &str, body: Option<Value>) -> (Answer, Answer) {
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
    fn remember(&mut self, name: &'static str, answers: &(Answer, Answer), pointer: &str) {
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
fn tag() -> String {
    format!("{:08x}", rand::random::<u32>())
}

#[tokio::test]
async fn the_version_document_and_password_tokens_match_keystone() {
    let mut both = Both::new().await;
    let version = both.step("GET", "", None).await;
    assert_eq!(
        version.0.body["version"]["id"],
        version.1.body["version"]["id"]
    );
    let issued = both
        .step("POST", "/auth/tokens", Some(password_auth(PASSWORD)))
        .await;
    assert_eq!(issued.0.status, 201);
    assert_eq!(
        issued.0.body["token"]["roles"].as_array().map(Vec::len),
        issued.1.body["token"]["roles"].as_array().map(Vec::len)
    );
    let wrong = both
        .step("POST", "/auth/tokens", Some(password_auth("wrong")))
        .await;
    assert_eq!(wrong.0.status, 401);
    assert_eq!(
        wrong.0.body["error"]["message"],
        wrong.1.body["error"]["message"]
    );
    let mut nobody = password_auth(PASSWORD);
    nobody["auth"]["identity"]["password"]["user"]["name"] = json!("nobody");
    assert_eq!(
        both.step("POST", "/auth/tokens", Some(nobody))
            .await
            .0
            .status,
        401
    );
    let unscoped = json!({"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": "admin", "domain": {"id": "default"}, "password": PASSWORD}}}}});
    assert_eq!(
        both.step("POST", "/auth/tokens", Some(unscoped))
            .await
            .0
            .status,
        201
    );
}

#[tokio::test]
async fn the_domain_lifecycle_matches_keystone() {
    let mut both = Both::new().await;
    let name = format!("ldap-{}", tag());
    let absent = both
        .step("GET", &format!("/domains?name={name}"), None)
        .await;
    assert_eq!(absent.0.body["domains"], json!([]));
    let created = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": name, "description": "LDAP"}})),
        )
        .await;
    assert_eq!(created.0.status, 201);
    both.remember("domain", &created, "/domain/id");
    let bare = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": format!("{name}-bare")}})),
        )
        .await;
    assert_eq!(
        bare.0.body["domain"]["description"],
        bare.1.body["domain"]["description"]
    );
    let twice = both
        .step("POST", "/domains", Some(json!({"domain": {"name": name}})))
        .await;
    assert_eq!(twice.0.status, 409);
    assert_eq!(
        twice.0.body["error"]["message"],
        twice.1.body["error"]["message"]
    );
    assert_eq!(
        both.step("POST", "/domains", Some(json!({"domain": {}})))
            .await
            .0
            .status,
        400
    );
    let listed = both
        .step("GET", &format!("/domains?name={name}"), None)
        .await;
    assert_eq!(listed.0.body["domains"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        both.step("GET", "/domains/{domain}", None).await.0.status,
        200
    );
    let refused = both.step("DELETE", "/domains/{domain}", None).await;
    assert_eq!(refused.0.status, 403);
    assert_eq!(
        refused.0.body["error"]["message"],
        refused.1.body["error"]["message"]
    );
    let patched = both
        .step(
            "PATCH",
            "/domains/{domain}",
            Some(json!({"domain": {"enabled": false, "description": "off"}})),
        )
        .await;
    assert_eq!(patched.0.status, 200);
    assert_eq!(
        both.step("DELETE", "/domains/{domain}", None)
            .await
            .0
            .status,
        204
    );
    let gone = both.step("GET", "/domains/{domain}", None).await;
    assert_eq!(gone.0.status, 404);
    assert_eq!(
        both.step("DELETE", "/domains/{domain}", None)
            .await
            .0
            .status,
        404
    );
}

#[tokio::test]
async fn the_federation_objects_match_keystone() {
    let mut both = Both::new().await;
    let t = tag();
    let domain = both
        .step(
            "POST",
            "/domains",
            Some(json!({"domain": {"name": format!("oidc-{t}")}})),
        )
        .await;
    both.remember("domain", &domain, "/domain/id");
    let (idp, mapping) = (format!("idp-{t}"), format!("idp-{t}-mapping"));
    let idp_body = json!({"identity_provider": {"remote_ids": [format!("https://idp-{t}.example")], "enabled": true,
                                                  "domain_id": "{domain}", "description": "OIDC"}});
    let created = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(idp_body.clone()),
        )
        .await;
    assert_eq!(created.0.status, 201);
    assert_eq!(
        both.step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(idp_body)
        )
        .await
        .0
        .status,
        409
    );
    let rules = json!({"mapping": {"rules": [{"local": [{"user": {"name": "{0}"}}], "remote": [{"type": "OIDC-preferred_username"}]}]}});
    let mapped = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            Some(rules.clone()),
        )
        .await;
    assert_eq!(mapped.0.status, 201);
    let bad = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            Some(json!({"protocol": {"mapping_id": "no-such-mapping"}})),
        )
        .await;
    assert_eq!(bad.0.status, 400);
    let protocol = both
        .step(
            "PUT",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            Some(json!({"protocol": {"mapping_id": mapping}})),
        )
        .await;
    assert_eq!(protocol.0.status, 201);
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "PATCH",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            Some(rules)
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "PATCH",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            Some(json!({"identity_provider": {"enabled": false}}))
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers?id={idp}"),
            None
        )
        .await
        .0
        .status,
        200
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/identity_providers/{idp}/protocols/openid"),
            None
        )
        .await
        .0
        .status,
        204
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/mappings/{mapping}"),
            None
        )
        .await
        .0
        .status,
        204
    );
    assert_eq!(
        both.step(
            "DELETE",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            None
        )
        .await
        .0
        .status,
        204
    );
    let gone = both
        .step(
            "GET",
            &format!("/OS-FEDERATION/identity_providers/{idp}"),
            None,
        )
        .await;
    assert_eq!(gone.0.status, 404);
    assert_eq!(
        gone.0.body["error"]["message"],
        gone.1.body["error"]["message"]
    );
}

#[tokio::test]
async fn groups_roles_projects_and_role_assignments_match_keystone() {
    let mut both = Both::new().await;
    let t = tag();
    let group = both.step("POST", "/groups", Some(json!({"group": {"name": format!("admins-{t}"), "domain_id": "default", "description": "g"}}))).await;
    assert_eq!(group.0.status, 201);
    both.remember("group", &group, "/group/id");
    let twice = both
        .step(
            "POST",
            "/groups",
            Some(json!({"group": {"name": format!("admins-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(twice.0.status, 409);
    both.step(
        "GET",
        &format!("/groups?name=admins-{t}&domain_id=default"),
        None,
    )
    .await;
    let bare = both
        .step(
            "POST",
            "/groups",
            Some(json!({"group": {"name": format!("bare-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(bare.0.status, 201);
    let member = both.step("GET", "/roles?name=member", None).await;
    both.remember("role", &member, "/roles/0/id");
    let role = both
        .step(
            "POST",
            "/roles",
            Some(json!({"role": {"name": format!("operator-{t}")}})),
        )
        .await;
    assert_eq!(role.0.status, 201);
    let project = both
        .step(
            "POST",
            "/projects",
            Some(json!({"project": {"name": format!("tenant-{t}"), "domain_id": "default"}})),
        )
        .await;
    assert_eq!(project.0.status, 201);
    both.remember("project", &project, "/project/id");
    both.step(
        "GET",
        &format!("/projects?name=tenant-{t}&domain_id=default"),
        None,
    )
    .await;
    let assign = "/projects/{project}/groups/{group}/roles/{role}";
    assert_eq!(both.step("PUT", assign, None).await.0.status, 204);
    assert_eq!(both.step("HEAD", assign, None).await.0.status, 204);
    assert_eq!(
        both.step("PUT", "/domains/default/groups/{group}/roles/{role}", None)
            .await
            .0
            .status,
        204
    );
    let listed = both
        .step("GET", "/role_assignments?group.id={group}", None)
        .await;
    assert_eq!(
        listed.0.body["role_assignments"].as_array().map(Vec::len),
        Some(2)
    );
    both.step(
        "GET",
        "/role_assignments?scope.project.id={project}&role.id={role}",
        None,
    )
    .await;
    assert_eq!(
        both.step(
            "PUT",
            "/projects/{project}/groups/{group}/roles/no-such-role",
            None
        )
        .await
        .0
        .status,
        404
    );
    assert_eq!(both.step("DELETE", assign, None).await.0.status, 204);
    let again = both.step("DELETE", assign, None).await;
    assert_eq!(again.0.status, 404);
    assert_eq!(
        both.step("DELETE", "/groups/{group}", None).await.0.status,
        204
    );
    assert_eq!(
        both.step("GET", "/groups/{group}", None).await.0.status,
        404
    );
}

#[tokio::test]
async fn calls_without_a_token_are_refused_like_keystone() {
    let both = Both::new().await;
    for side in [&both.real, &both.stand_in] {
        let answer = send("GET", &format!("{}/v3/domains", side.base), &[], None).await;
        assert_eq!(answer.status, 401, "{}", side.base);
        assert_eq!(
            shape(&answer.body),
            json!({"error": {"code": "number", "message": "string", "title": "string"}})
        );
    }
}
