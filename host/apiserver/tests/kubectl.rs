//! kubectl against the server, with the kubeconfig it writes: get, describe, apply (client-
//! and server-side), label, patch, wait, delete.

use crate::support::kubectl::Kubectl;
use crate::support::server;

const MANIFEST: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: smoke\ndata:\n  k: v\n";

#[tokio::test]
async fn kubectl_works_against_the_server_with_the_kubeconfig_it_writes() {
    // .ci/run installs kubectl; without it this test fails rather than passing unseen.
    let version = std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .expect("kubectl is on PATH (.ci/run installs Debian's kubernetes-client)");
    assert!(
        version.status.success(),
        "kubectl version --client: {version:?}"
    );
    let (server, _client) = server().await;
    let kubectl = Kubectl::for_server(&server);

    kubectl.ok(&["apply", "-f", "-"], Some(MANIFEST)).await;
    assert!(
        kubectl
            .ok(&["get", "configmaps"], None)
            .await
            .contains("smoke")
    );
    assert!(
        kubectl
            .ok(&["get", "cm", "smoke", "-o", "yaml"], None)
            .await
            .contains("k: v")
    );
    assert!(
        kubectl
            .ok(&["get", "cm", "smoke", "-o", "json"], None)
            .await
            .contains("\"k\": \"v\"")
    );
    kubectl.ok(&["get", "cm", "-o", "wide"], None).await;
    assert!(
        kubectl
            .ok(&["describe", "cm", "smoke"], None)
            .await
            .contains("smoke")
    );
    kubectl
        .ok(
            &["apply", "--server-side", "--force-conflicts", "-f", "-"],
            Some(&MANIFEST.replace("k: v", "k: w")),
        )
        .await;
    kubectl.ok(&["label", "cm", "smoke", "team=a"], None).await;
    kubectl
        .ok(
            &[
                "patch",
                "cm",
                "smoke",
                "--type=merge",
                "-p",
                "{\"data\":{\"p\":\"1\"}}",
            ],
            None,
        )
        .await;
    let yaml = kubectl
        .ok(&["get", "cm", "smoke", "-o", "yaml"], None)
        .await;
    assert!(
        yaml.contains("team: a") && yaml.contains("p: \"1\"") && yaml.contains("k: w"),
        "{yaml}"
    );
    kubectl
        .ok(
            &[
                "wait",
                "--for=jsonpath={.data.p}=1",
                "cm/smoke",
                "--timeout=10s",
            ],
            None,
        )
        .await;
    kubectl.ok(&["delete", "cm", "smoke"], None).await;
    let (found, _) = kubectl.run(&["get", "cm", "smoke"], None).await;
    assert!(!found);
}

/// kubectl's `create` subcommands use client-go's typed clients, which send protobuf and
/// do not fall back to JSON: each is served, stores what it asked, and the token `kubectl
/// create token` returns authenticates as the ServiceAccount with what its binding grants.
#[tokio::test]
async fn kubectl_create_subcommands_that_send_protobuf_are_served() {
    let (server, client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let commands: &[&[&str]] = &[
        &["create", "namespace", "team"],
        &[
            "create",
            "configmap",
            "cfg",
            "-n",
            "team",
            "--from-literal=a=1",
        ],
        &[
            "create",
            "secret",
            "generic",
            "creds",
            "-n",
            "team",
            "--from-literal=p=hunter2",
        ],
        &["create", "serviceaccount", "robot", "-n", "team"],
        &[
            "create",
            "role",
            "reader",
            "-n",
            "team",
            "--verb=get",
            "--resource=configmaps",
        ],
        &[
            "create",
            "rolebinding",
            "reader",
            "-n",
            "team",
            "--role=reader",
            "--serviceaccount=team:robot",
        ],
        &[
            "create",
            "clusterrole",
            "ns-reader",
            "--verb=list",
            "--resource=namespaces",
        ],
        &[
            "create",
            "clusterrolebinding",
            "ns-reader",
            "--clusterrole=ns-reader",
            "--serviceaccount=team:robot",
        ],
        &[
            "create",
            "service",
            "clusterip",
            "web",
            "-n",
            "team",
            "--tcp=80:8080",
        ],
    ];
    for command in commands {
        kubectl.ok(command, None).await;
    }
    let get = |path: &str| {
        let client = client.clone();
        let path = path.to_owned();
        async move {
            let answer = crate::support::get(&client, &path).await;
            assert_eq!(answer.status, 200, "{path}: {}", answer.body);
            answer.body
        }
    };
    let cfg = get("/api/v1/namespaces/team/configmaps/cfg").await;
    assert_eq!(cfg["data"], serde_json::json!({"a": "1"}));
    let creds = get("/api/v1/namespaces/team/secrets/creds").await;
    assert_eq!(creds["data"]["p"], "aHVudGVyMg==");
    assert_eq!(creds["type"], "Opaque");
    let web = get("/api/v1/namespaces/team/services/web").await;
    assert_eq!(web["spec"]["ports"][0]["port"], 80);
    assert_eq!(web["spec"]["ports"][0]["targetPort"], 8080);
    let binding =
        get("/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings/reader").await;
    assert_eq!(binding["subjects"][0]["name"], "robot");
    assert_eq!(binding["roleRef"]["kind"], "Role");
    let role = get("/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles/reader").await;
    assert_eq!(role["rules"][0]["verbs"], serde_json::json!(["get"]));

    let token = kubectl
        .ok(
            &["create", "token", "robot", "-n", "team", "--duration=10m"],
            None,
        )
        .await;
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let can_i = |args: Vec<&'static str>| {
        let mut full = vec!["auth", "can-i", "--token", token];
        full.extend(args);
        full
    };
    let allowed = kubectl
        .run(&can_i(vec!["get", "configmaps", "-n", "team"]), None)
        .await;
    assert_eq!(allowed.1.lines().next(), Some("yes"), "{allowed:?}");
    let listed = kubectl.run(&can_i(vec!["list", "namespaces"]), None).await;
    assert_eq!(listed.1.lines().next(), Some("yes"), "{listed:?}");
    let refused = kubectl
        .run(&can_i(vec!["get", "secrets", "-n", "team"]), None)
        .await;
    assert_eq!(refused.1.lines().next(), Some("no"), "{refused:?}");
}

/// The Widget CRD with descriptions on the kind, its spec and `spec.size`.
async fn install_described_widgets(client: &kube::Client) {
    let mut schema = crate::support::widget_schema();
    schema["description"] = serde_json::json!("A Widget is a test kind.");
    schema["properties"]["spec"]["description"] = serde_json::json!("What the Widget should be.");
    schema["properties"]["spec"]["properties"]["size"]["description"] =
        serde_json::json!("How big, from 1 to 10.");
    let crd = crate::support::post(
        client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crate::support::widget_crd(schema),
    )
    .await;
    assert_eq!(crd.status, 201, "{}", crd.body);
}

/// `kubectl explain` reads a custom resource's schema from the OpenAPI v3 document of its
/// group/version: the kind's description, its fields, a nested field's own.
#[tokio::test]
async fn kubectl_explain_prints_a_custom_resources_schema() {
    let (server, client) = server().await;
    install_described_widgets(&client).await;
    let kubectl = Kubectl::for_server(&server);
    let kind = kubectl.ok(&["explain", "widgets"], None).await;
    for expected in [
        "GROUP:      example.com",
        "KIND:       Widget",
        "VERSION:    v1",
        "A Widget is a test kind.",
        "spec\t<Object>",
        "metadata\t<ObjectMeta>",
    ] {
        assert!(kind.contains(expected), "{expected:?} in\n{kind}");
    }
    let field = kubectl.ok(&["explain", "widgets.spec.size"], None).await;
    assert!(
        field.contains("FIELD: size <integer>") && field.contains("How big, from 1 to 10."),
        "{field}"
    );
}

/// `kubectl explain` of built-in kinds reads k8s-openapi's schemas (kube-apiserver's).
#[tokio::test]
async fn kubectl_explain_prints_a_built_in_kinds_schema() {
    let (server, _client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let config_map = kubectl.ok(&["explain", "configmaps"], None).await;
    for expected in [
        "KIND:       ConfigMap",
        "VERSION:    v1",
        "binaryData\t<map[string]string>",
        "immutable\t<boolean>",
    ] {
        assert!(
            config_map.contains(expected),
            "{expected:?} in\n{config_map}"
        );
    }
    let containers = kubectl
        .ok(
            &["explain", "deployments.spec.template.spec.containers.image"],
            None,
        )
        .await;
    assert!(
        containers.contains("GROUP:      apps") && containers.contains("FIELD: image <string>"),
        "{containers}"
    );
}

/// kubectl's client-side apply switching a Deployment's strategy sends a strategic merge
/// patch with `$retainKeys`: the old union member (`rollingUpdate`, defaulted) goes.
#[tokio::test]
async fn kubectl_apply_switching_a_deployments_strategy_drops_the_old_union_member() {
    let (server, client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let deployment = |strategy: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector:\n    matchLabels: {{app: web}}\n  strategy:\n{strategy}\n  template:\n    metadata:\n      labels: {{app: web}}\n    spec:\n      containers:\n      - name: web\n        image: nginx\n"
        )
    };
    // The server defaults rollingUpdate: it is not in the last applied configuration, so
    // only `$retainKeys` can take it away.
    let rolling = deployment("    type: RollingUpdate");
    kubectl.ok(&["apply", "-f", "-"], Some(&rolling)).await;
    let path = "/apis/apps/v1/namespaces/default/deployments/web";
    let first = crate::support::get(&client, path).await;
    assert!(
        first.body["spec"]["strategy"]
            .get("rollingUpdate")
            .is_some(),
        "{}",
        first.body
    );
    let recreate = deployment("    type: Recreate");
    kubectl.ok(&["apply", "-f", "-"], Some(&recreate)).await;
    let stored =
        crate::support::get(&client, "/apis/apps/v1/namespaces/default/deployments/web").await;
    assert_eq!(
        stored.body["spec"]["strategy"],
        serde_json::json!({"type": "Recreate"}),
        "{}",
        stored.body
    );
}

/// The OpenAPI v2 document carries the same schemas as v3 (as JSON; a client asking only
/// for kube-apiserver's protobuf form gets a 406).
#[tokio::test]
async fn the_openapi_v2_document_carries_custom_and_built_in_schemas() {
    let (server, client) = server().await;
    install_described_widgets(&client).await;
    let document = crate::support::get(&client, "/openapi/v2").await;
    assert_eq!(document.status, 200);
    assert_eq!(document.body["swagger"], "2.0");
    assert!(
        !document.body.to_string().contains("#/components/"),
        "v3 references left"
    );
    let widget = &document.body["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        serde_json::json!([{"group": "example.com", "version": "v1", "kind": "Widget"}])
    );
    assert_eq!(
        widget["properties"]["spec"]["properties"]["size"]["description"],
        "How big, from 1 to 10."
    );
    assert_eq!(
        widget["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    let config_map = &document.body["definitions"]["io.k8s.api.core.v1.ConfigMap"];
    assert_eq!(config_map["properties"]["immutable"]["type"], "boolean");
    let patch =
        &document.body["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"];
    assert!(
        patch["parameters"].as_array().is_some_and(|p| p
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["type"] == "string")),
        "{patch}"
    );
    let bearer = format!("Bearer {}", server.admin_token());
    let protobuf = crate::support::http::send_trusting(
        server.ca_pem(),
        "GET",
        &format!("{}/openapi/v2", server.url()),
        &[
            (
                "accept",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            ),
            ("authorization", &bearer),
        ],
        None,
    )
    .await;
    assert_eq!(protobuf.status, 406, "{}", protobuf.body);
}
