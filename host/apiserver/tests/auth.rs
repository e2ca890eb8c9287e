//! Authentication and RBAC as kube-apiserver applies them: a request without the admin token
//! or a live ServiceAccount token is 401; a ServiceAccount does what its bindings allow and
//! gets kube-apiserver's 403 otherwise; `kubectl auth can-i` answers as the bindings say;
//! requests a browser could send are refused; the kubeconfig is written 0600 and never
//! through a symlink.

use serde_json::{Value, json};

use crate::support::http::{Answer, send_trusting};
use crate::support::kubectl::Kubectl;
use crate::support::{post, server};

const CONFIG_MAPS: &str = "/api/v1/namespaces/default/configmaps";

/// ServiceAccount `default/robot` and a token for it with `audiences` (none: the API's).
async fn robot_token(client: &kube::Client, audiences: Option<Value>) -> String {
    let account = post(
        client,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}}),
    )
    .await;
    assert!(
        matches!(account.status.as_u16(), 201 | 409),
        "{}",
        account.body
    );
    let spec = audiences.map_or_else(|| json!({}), |a| json!({"audiences": a}));
    let answer = post(
        client,
        "/api/v1/namespaces/default/serviceaccounts/robot/token",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": spec}),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.body);
    answer.body["status"]["token"]
        .as_str()
        .expect("a token")
        .to_owned()
}

/// A Role `name` of `default` with `rules`.
fn role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": name}, "rules": rules})
}

/// A RoleBinding `name` of `default` giving the robot the `kind` (Role or ClusterRole) `role`.
fn robot_binding(name: &str, kind: &str, role: &str) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]})
}

/// Lets the robot get and list ConfigMaps in `default`.
async fn bind_config_reader(client: &kube::Client) {
    let role = role(
        "config-reader",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]),
    );
    let binding = robot_binding("config-reader", "Role", "config-reader");
    for (path, object) in [
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            role,
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            binding,
        ),
    ] {
        let made = post(client, path, object).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
}

async fn request(
    server: &wasm_operator_apiserver::ApiServer,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
) -> Answer {
    let url = format!("{}{path}", server.url());
    send_trusting(server.ca_pem(), method, &url, headers, body).await
}

#[tokio::test]
async fn a_request_without_credentials_is_unauthorized_except_public_information() {
    let (server, _client) = server().await;
    for path in [CONFIG_MAPS, "/api", "/apis", "/openapi/v2"] {
        let answer = request(&server, "GET", path, &[], None).await;
        assert_eq!(answer.status, 401, "{path}: {}", answer.body);
        assert_eq!(answer.body["reason"], "Unauthorized", "{path}");
        assert_eq!(answer.body["message"], "Unauthorized", "{path}");
    }
    let forged = request(
        &server,
        "GET",
        CONFIG_MAPS,
        &[("authorization", "Bearer not-a-token")],
        None,
    )
    .await;
    assert_eq!(forged.status, 401, "{}", forged.body);
    for path in [
        "/healthz",
        "/readyz",
        "/livez",
        "/version",
        "/openid/v1/jwks",
    ] {
        let answer = request(&server, "GET", path, &[], None).await;
        assert_eq!(answer.status, 200, "{path} is public: {}", answer.body);
    }
    let admin = format!("Bearer {}", server.admin_token());
    let answer = request(
        &server,
        "GET",
        CONFIG_MAPS,
        &[("authorization", &admin)],
        None,
    )
    .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a_service_account_does_what_its_bindings_allow_and_gets_kube_apiservers_403_otherwise() {
    let (server, client) = server().await;
    let token = robot_token(&client, None).await;
    let bearer = format!("Bearer {token}");
    let robot = [("authorization", bearer.as_str())];

    let refused = request(&server, "GET", CONFIG_MAPS, &robot, None).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert_eq!(refused.body["reason"], "Forbidden");
    assert_eq!(
        refused.body["message"],
        "configmaps is forbidden: User \"system:serviceaccount:default:robot\" cannot list \
         resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(refused.body["details"], json!({"kind": "configmaps"}));

    bind_config_reader(&client).await;
    let listed = request(&server, "GET", CONFIG_MAPS, &robot, None).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let discovery = request(&server, "GET", "/api/v1", &robot, None).await;
    assert_eq!(discovery.status, 200, "discovery is every user's");
    let write = request(
        &server,
        "POST",
        CONFIG_MAPS,
        &robot,
        Some(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})),
    )
    .await;
    assert_eq!(write.status, 403, "{}", write.body);
    assert_eq!(
        write.body["message"],
        "configmaps is forbidden: User \"system:serviceaccount:default:robot\" cannot create \
         resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    let elsewhere = request(
        &server,
        "GET",
        "/api/v1/namespaces/kube-system/configmaps/x",
        &robot,
        None,
    )
    .await;
    assert_eq!(elsewhere.status, 403, "{}", elsewhere.body);
    assert_eq!(
        elsewhere.body["message"],
        "configmaps \"x\" is forbidden: User \"system:serviceaccount:default:robot\" cannot \
         get resource \"configmaps\" in API group \"\" in the namespace \"kube-system\""
    );

    let deleted = crate::support::raw(
        &client,
        "DELETE",
        "/api/v1/namespaces/default/serviceaccounts/robot",
        "application/json",
        None,
    )
    .await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let gone = request(&server, "GET", CONFIG_MAPS, &robot, None).await;
    assert_eq!(
        gone.status, 401,
        "the token of a deleted ServiceAccount authenticates no one"
    );
}

#[tokio::test]
async fn a_token_for_another_audience_does_not_authenticate_to_the_api() {
    let (server, client) = server().await;
    bind_config_reader(&client).await;
    let vault = robot_token(&client, Some(json!(["vault"]))).await;
    let answer = request(
        &server,
        "GET",
        CONFIG_MAPS,
        &[("authorization", &format!("Bearer {vault}"))],
        None,
    )
    .await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    let api = robot_token(&client, None).await;
    let answer = request(
        &server,
        "GET",
        CONFIG_MAPS,
        &[("authorization", &format!("Bearer {api}"))],
        None,
    )
    .await;
    assert_eq!(answer.status, 200, "the API's audience: {}", answer.body);
}

#[tokio::test]
async fn kubectl_auth_can_i_answers_as_the_bindings_say() {
    let (server, client) = server().await;
    let token = robot_token(&client, None).await;
    bind_config_reader(&client).await;
    let kubectl = Kubectl::for_server(&server);
    let cases = [
        (&["get", "configmaps"][..], true, "yes"),
        (&["list", "configmaps", "-n", "default"][..], true, "yes"),
        (&["create", "configmaps"][..], false, "no"),
        (&["get", "secrets"][..], false, "no"),
        (&["get", "configmaps", "-n", "kube-system"][..], false, "no"),
    ];
    for (question, allowed, answer) in cases {
        let mut args = vec!["auth", "can-i", "--token", &token];
        args.extend_from_slice(question);
        let (ok, out) = kubectl.run(&args, None).await;
        assert_eq!(ok, allowed, "{question:?}: {out}");
        assert_eq!(
            out.lines().next().map(str::trim),
            Some(answer),
            "{question:?}: {out}"
        );
    }
    let (ok, out) = kubectl
        .run(&["auth", "can-i", "delete", "namespaces"], None)
        .await;
    assert!(ok, "the admin may do anything: {out}");

    // `--list` asks a SelfSubjectRulesReview: the bound Role's rules and the bootstrap ones.
    let listed = kubectl
        .ok(
            &[
                "auth", "can-i", "--list", "--token", &token, "-n", "default",
            ],
            None,
        )
        .await;
    let row = |resource: &str| {
        listed
            .lines()
            .find(|l| l.split_whitespace().next() == Some(resource))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
    };
    assert_eq!(
        row("configmaps"),
        Some(vec!["configmaps", "[]", "[]", "[get", "list]"]),
        "{listed}"
    );
    assert!(
        row("selfsubjectrulesreviews.authorization.k8s.io").is_some(),
        "{listed}"
    );
    assert!(row("secrets").is_none(), "{listed}");
    let elsewhere = kubectl
        .ok(
            &[
                "auth",
                "can-i",
                "--list",
                "--token",
                &token,
                "-n",
                "kube-system",
            ],
            None,
        )
        .await;
    assert!(
        !elsewhere.contains("configmaps"),
        "the Role is default's: {elsewhere}"
    );
}

#[tokio::test]
async fn requests_a_browser_could_send_are_refused() {
    let (server, _client) = server().await;
    let admin = format!("Bearer {}", server.admin_token());
    let from_a_page = request(
        &server,
        "GET",
        CONFIG_MAPS,
        &[
            ("authorization", &admin),
            ("origin", "https://evil.example"),
        ],
        None,
    )
    .await;
    assert_eq!(from_a_page.status, 403, "{}", from_a_page.body);
    assert!(
        from_a_page.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("Origin")),
        "{}",
        from_a_page.body
    );
    // DNS rebinding: the page's name resolves to 127.0.0.1, and the Host header keeps it.
    let rebound = rebound_request(&server, "evil.example").await;
    assert!(rebound.starts_with("HTTP/1.1 403"), "{rebound}");
    assert!(rebound.contains("evil.example"), "{rebound}");
    let local = rebound_request(&server, "localhost").await;
    assert!(
        local.starts_with("HTTP/1.1 200"),
        "a loopback name is served: {local}"
    );
}

/// The raw answer to the admin's list of ConfigMaps sent with `Host: {host}`.
async fn rebound_request(server: &wasm_operator_apiserver::ApiServer, host: &str) -> String {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let (mut stream, _) = crate::support::http::connect_to(server).await;
    let head = format!(
        "GET {CONFIG_MAPS} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {}\r\n\
         Connection: close\r\n\r\n",
        server.admin_token()
    );
    stream.write_all(head.as_bytes()).await.expect("sent");
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn the_kubeconfig_is_written_0600_and_never_through_a_symlink() {
    use std::os::unix::fs::PermissionsExt as _;
    let (server, _client) = server().await;
    let dir = tempfile::tempdir().expect("a directory");
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, "old").expect("a file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    server.write_kubeconfig(&path).expect("written");
    let mode = std::fs::metadata(&path)
        .expect("metadata")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(
        text.contains(server.admin_token()),
        "it carries the admin token"
    );

    let target = dir.path().join("elsewhere");
    std::fs::write(&target, "keep").expect("a file");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).expect("a symlink");
    let refused = server
        .write_kubeconfig(&link)
        .expect_err("a symlink is not written through");
    assert_eq!(refused.raw_os_error(), Some(libc_eloop()), "{refused}");
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep");
}

/// ELOOP, what open(2) with O_NOFOLLOW answers for a symlink (Linux).
fn libc_eloop() -> i32 {
    40
}

#[tokio::test]
async fn a_service_account_cannot_grant_what_it_does_not_hold_unless_it_may_escalate_or_bind() {
    let (server, client) = server().await;
    let token = robot_token(&client, None).await;
    bind_config_reader(&client).await;
    let rbac = "/apis/rbac.authorization.k8s.io/v1";
    // The robot may also write Roles and RoleBindings in `default`.
    let writer = role(
        "rbac-writer",
        json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"],
                "verbs": ["create", "update", "patch", "get"]}]),
    );
    let binding = robot_binding("rbac-writer", "Role", "rbac-writer");
    for (path, object) in [
        (format!("{rbac}/namespaces/default/roles"), writer),
        (format!("{rbac}/namespaces/default/rolebindings"), binding),
    ] {
        let made = post(&client, &path, object).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    let everything = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "everything"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]});
    let made = post(&client, &format!("{rbac}/clusterroles"), everything).await;
    assert_eq!(made.status, 201, "{}", made.body);

    let bearer = format!("Bearer {token}");
    let robot = [("authorization", bearer.as_str())];
    let getter = |name: &str, resource: &str| {
        role(
            name,
            json!([{"apiGroups": [""], "resources": [resource], "verbs": ["get"]}]),
        )
    };
    let roles = format!("{rbac}/namespaces/default/roles");
    let bindings = format!("{rbac}/namespaces/default/rolebindings");
    let held = request(
        &server,
        "POST",
        &roles,
        &robot,
        Some(&getter("reader", "configmaps")),
    )
    .await;
    assert_eq!(
        held.status, 201,
        "a role within what it holds: {}",
        held.body
    );
    let more = request(
        &server,
        "POST",
        &roles,
        &robot,
        Some(&getter("secrets", "secrets")),
    )
    .await;
    assert_eq!(more.status, 403, "{}", more.body);
    assert!(
        more.body["message"].as_str().is_some_and(|m| m.contains(
            "user \"system:serviceaccount:default:robot\" (groups=[\"system:serviceaccounts\", \
             \"system:serviceaccounts:default\", \"system:authenticated\"]) is attempting to grant \
             RBAC permissions not currently held"
        ) && m.contains("secrets")),
        "{}",
        more.body
    );
    let patched = request(
        &server,
        "PATCH",
        &format!("{roles}/reader"),
        &[
            ("authorization", bearer.as_str()),
            ("content-type", "application/merge-patch+json"),
        ],
        Some(&json!({"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]})),
    )
    .await;
    assert_eq!(
        patched.status, 403,
        "a patch is checked as stored: {}",
        patched.body
    );
    let to_everything = robot_binding("everything", "ClusterRole", "everything");
    let bound = request(&server, "POST", &bindings, &robot, Some(&to_everything)).await;
    assert_eq!(bound.status, 403, "{}", bound.body);
    let to_reader = robot_binding("reader", "Role", "reader");
    let bound = request(&server, "POST", &bindings, &robot, Some(&to_reader)).await;
    assert_eq!(
        bound.status, 201,
        "a binding to a role it holds: {}",
        bound.body
    );

    // `escalate` on roles lifts the check for roles.
    let escalate = role(
        "escalator",
        json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]),
    );
    let grant = robot_binding("escalator", "Role", "escalator");
    for (path, object) in [(&roles, escalate), (&bindings, grant)] {
        let made = post(&client, path, object).await;
        assert_eq!(made.status, 201, "{}", made.body);
    }
    let more = request(
        &server,
        "POST",
        &roles,
        &robot,
        Some(&getter("secrets", "secrets")),
    )
    .await;
    assert_eq!(more.status, 201, "with escalate: {}", more.body);
}

/// One user outside `system:masters` holds at most `max_watches_per_user` watches open; the
/// next is a 429 with `Retry-After` until one of its watches ends. The admin is exempt.
#[tokio::test]
async fn a_user_past_its_watch_cap_gets_a_429_until_one_of_its_watches_ends() {
    use futures::StreamExt as _;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, WatchParams};

    let server = wasm_operator_apiserver::ApiServer::start(wasm_operator_apiserver::ServerConfig {
        max_watches_per_user: 2,
        ..Default::default()
    })
    .await
    .expect("the server starts");
    let admin = server.client().expect("an admin client");
    let token = robot_token(&admin, None).await;
    let watcher = role(
        "config-watcher",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["watch"]}]),
    );
    let binding = robot_binding("config-watcher", "Role", "config-watcher");
    for (path, object) in [
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            watcher,
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings",
            binding,
        ),
    ] {
        assert_eq!(post(&admin, path, object).await.status, 201);
    }
    // kube-rs retries a 429 fifteen times by default (client-go ten); this client does not,
    // so the refusal itself is seen.
    let robot: Api<ConfigMap> = Api::namespaced(no_retry_client(&server, &token), "default");
    let params = WatchParams::default();
    let first = robot
        .watch(&params, "0")
        .await
        .expect("first watch")
        .boxed();
    let _second = robot
        .watch(&params, "0")
        .await
        .expect("second watch")
        .boxed();
    match robot.watch(&params, "0").await.map(|_| ()) {
        Err(kube::Error::Api(status)) => {
            assert_eq!(
                (status.code, status.reason.as_str()),
                (429, "TooManyRequests")
            );
            assert!(
                status.message.contains("the limit per user"),
                "{}",
                status.message
            );
            let retry = status.details.map(|d| d.retry_after_seconds);
            assert_eq!(retry, Some(1));
        }
        other => panic!("the third watch: {other:?}"),
    }
    drop(first);
    crate::support::wait_for("a watch slot given back", || {
        let robot = robot.clone();
        let params = params.clone();
        async move {
            robot
                .watch(&params, "0")
                .await
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    })
    .await;
    let admin_api: Api<ConfigMap> = Api::namespaced(admin, "default");
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(
            admin_api
                .watch(&params, "0")
                .await
                .expect("the admin is exempt")
                .boxed(),
        );
    }
}

/// A client of `server` with `token` that does not retry refusals.
fn no_retry_client(server: &wasm_operator_apiserver::ApiServer, token: &str) -> kube::Client {
    let yaml = server.kubeconfig().replace(server.admin_token(), token);
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&yaml).expect("a kubeconfig");
    let mut config = futures::executor::block_on(kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    ))
    .expect("a config");
    config.default_retry = false;
    kube::Client::try_from(config).expect("a client")
}

/// TokenReview and SubjectAccessReview, what a relying party (OpenBao's Kubernetes auth, an
/// aggregated server) asks: who a token is for given audiences, and what another user may do.
#[tokio::test]
async fn token_and_subject_access_reviews_answer_for_the_token_and_user_asked_about() {
    let (server, client) = server().await;
    let token = robot_token(&client, None).await;
    let for_openbao = robot_token(&client, Some(json!(["openbao"]))).await;
    let review = |token: &str, audiences: Option<Value>| {
        let mut body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}});
        if let Some(audiences) = audiences {
            body["spec"]["audiences"] = audiences;
        }
        body
    };
    let cases = [
        (
            review(&token, None),
            true,
            "system:serviceaccount:default:robot",
        ),
        (
            review(&for_openbao, Some(json!(["openbao"]))),
            true,
            "system:serviceaccount:default:robot",
        ),
        (
            review(&for_openbao, None),
            false,
            "is invalid for the target audiences",
        ),
        (review("not.a.token", None), false, "invalid bearer token"),
        (
            review(server.admin_token(), None),
            true,
            "wasm-operator-admin",
        ),
    ];
    for (body, authenticated, says) in cases {
        let answer = post(
            &client,
            "/apis/authentication.k8s.io/v1/tokenreviews",
            body.clone(),
        )
        .await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        let status = &answer.body["status"];
        assert_eq!(status["authenticated"], authenticated, "{body}: {status}");
        let text = if authenticated {
            &status["user"]["username"]
        } else {
            &status["error"]
        };
        assert!(
            text.as_str().is_some_and(|t| t.contains(says)),
            "{says:?}: {status}"
        );
    }
    let robot = server.client_with_token(&token).expect("a client");
    let refused = post(
        &robot,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        review(&token, None),
    )
    .await;
    assert_eq!(
        refused.status, 403,
        "reviewing tokens needs a grant: {}",
        refused.body
    );

    bind_config_reader(&client).await;
    let access = |verb: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "system:serviceaccount:default:robot",
                "resourceAttributes": {"verb": verb, "resource": "configmaps", "namespace": "default"}}})
    };
    for (verb, allowed) in [("get", true), ("create", false)] {
        let answer = post(
            &client,
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            access(verb),
        )
        .await;
        assert_eq!(answer.status, 201, "{}", answer.body);
        assert_eq!(answer.body["kind"], "SubjectAccessReview");
        assert_eq!(
            answer.body["status"]["allowed"], allowed,
            "{verb}: {}",
            answer.body
        );
    }
}

/// A kube client of `server` that authenticates with a client certificate (and no token).
fn certificate_client(
    server: &wasm_operator_apiserver::ApiServer,
    cert: &str,
    key: &str,
) -> kube::Client {
    use base64::Engine as _;
    let encode = |pem: &str| base64::engine::general_purpose::STANDARD.encode(pem);
    let mut config = kube::Config::new(server.url().parse().expect("url"));
    config.root_cert = Some(vec![pem_der(server.ca_pem())]);
    config.auth_info.client_certificate_data = Some(encode(cert));
    config.auth_info.client_key_data = Some(encode(key).into());
    kube::Client::try_from(config).expect("a client")
}

fn pem_der(pem: &str) -> Vec<u8> {
    use base64::Engine as _;
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .expect("PEM")
}

#[tokio::test]
async fn a_client_certificate_of_the_servers_ca_authenticates_as_its_common_name_and_organizations()
{
    let (server, admin) = server().await;
    let (cert, key) = server
        .client_certificate("jane", &["dev", "qa"])
        .expect("a certificate");
    let jane = certificate_client(&server, &cert, &key);
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let who = post(
        &jane,
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        review,
    )
    .await;
    assert_eq!(who.status, 201, "{}", who.body);
    assert_eq!(who.body["status"]["userInfo"]["username"], "jane");
    assert_eq!(
        who.body["status"]["userInfo"]["groups"],
        json!(["dev", "qa", "system:authenticated"])
    );
    let refused = crate::support::get(&jane, CONFIG_MAPS).await;
    assert_eq!(refused.status, 403);
    assert_eq!(
        refused.body["message"],
        "configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\""
    );
    // A binding to one of its organizations grants it.
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "dev-view"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "dev"}]});
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "view"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]});
    assert_eq!(
        post(
            &admin,
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            role
        )
        .await
        .status,
        201
    );
    assert_eq!(
        post(
            &admin,
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            binding
        )
        .await
        .status,
        201
    );
    assert_eq!(crate::support::get(&jane, CONFIG_MAPS).await.status, 200);

    // A certificate another CA signed fails the handshake: no request is served.
    let (other, _) = crate::support::server().await;
    let (foreign_cert, foreign_key) = other
        .client_certificate("jane", &["system:masters"])
        .expect("a certificate");
    let foreign = certificate_client(&server, &foreign_cert, &foreign_key);
    let error = foreign
        .request_text(
            axum::http::Request::get(CONFIG_MAPS)
                .body(Vec::new())
                .expect("a request"),
        )
        .await
        .expect_err("refused in the handshake");
    // Its issuer has the same name as the server's CA, so the server finds that CA and
    // refuses the signature (TLS alert decrypt_error), as Go's TLS server does.
    let text = format!("{error:?}");
    assert!(text.contains("AlertReceived(DecryptError)"), "{text}");

    // kubectl with the certificate and no token: `auth whoami`.
    let dir = tempfile::tempdir().expect("tempdir");
    let files = ["ca.crt", "jane.crt", "jane.key"].map(|f| dir.path().join(f));
    for (file, text) in files
        .iter()
        .zip([server.ca_pem(), cert.as_str(), key.as_str()])
    {
        std::fs::write(file, text).expect("write");
    }
    let output = tokio::process::Command::new("kubectl")
        .args([
            "auth",
            "whoami",
            "-o",
            "jsonpath={.status.userInfo.username}",
            "--server",
        ])
        .arg(server.url())
        .arg("--certificate-authority")
        .arg(&files[0])
        .arg("--client-certificate")
        .arg(&files[1])
        .arg("--client-key")
        .arg(&files[2])
        .arg("--kubeconfig=/dev/null")
        .output()
        .await
        .expect("kubectl runs (.ci/run installs it)");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "jane",
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The serving certificate is signed by the same CA but is not for client authentication:
/// presented by a client, it authenticates no one (401), as a certificate with a user does.
#[tokio::test]
async fn the_serving_certificate_presented_by_a_client_authenticates_no_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let server = wasm_operator_apiserver::ApiServer::start(wasm_operator_apiserver::ServerConfig {
        data_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .await
    .expect("the server starts");
    let read = |file: &str| {
        std::fs::read_to_string(dir.path().join("serving").join(file)).expect("serving material")
    };
    let (cert, key) = (read("tls.crt"), read("tls.key"));
    let client = certificate_client(&server, &cert, &key);
    let answer = crate::support::get(&client, CONFIG_MAPS).await;
    assert_eq!(answer.status, 401, "{}", answer.body);
    let (user_cert, user_key) = server
        .client_certificate("jane", &[])
        .expect("a certificate");
    let jane = certificate_client(&server, &user_cert, &user_key);
    assert_eq!(crate::support::get(&jane, CONFIG_MAPS).await.status, 403);
}
