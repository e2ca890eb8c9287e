//! `meta.k8s.io` Tables: what the real `kubectl get` prints for a CRD's printer columns and
//! the CRD default (here), the Table JSON a raw request with kubectl's Accept gets
//! ([`http`]), and the built-in kinds' columns ([`builtin`]).

mod builtin;
mod http;

use serde_json::{Value, json};

use crate::support::kubectl::Kubectl;
use crate::support::{get, install_widgets, post, server, widget};

/// The Accept header `kubectl get` sends.
pub(crate) const KUBECTL_ACCEPT: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

pub(crate) const GADGETS: &str = "/apis/example.com/v1/namespaces/default/gadgets";

/// The Gadget CRD: printer columns Ready (a condition filter), Owner (a spec string),
/// Replicas (an integer), First Port (priority 1) and Age.
pub(crate) fn gadget_crd() -> Value {
    let string = json!({"type": "string"});
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
                    {"name": "Owner", "type": "string", "jsonPath": ".spec.owner", "description": "Who owns it."},
                    {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                    {"name": "First Port", "type": "string", "jsonPath": ".spec.ports[0].name", "priority": 1},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "properties": {
                            "owner": string,
                            "replicas": {"type": "integer"},
                            "ports": {"type": "array", "items": {"type": "object", "properties": {"name": string}}},
                        }},
                        "status": {"type": "object", "properties": {
                            "conditions": {"type": "array", "items": {"type": "object",
                                "properties": {"type": string, "status": string}}},
                        }},
                    },
                }},
            }],
        },
    })
}

/// Creates the Gadget CRD and two gadgets: `alpha` (Ready=True, a port) and `beta` (no
/// status, no ports).
pub(crate) async fn install_gadgets(client: &kube::Client) {
    let created = post(
        client,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        gadget_crd(),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    for (name, spec) in [
        (
            "alpha",
            json!({"owner": "team-a", "replicas": 3, "ports": [{"name": "http"}, {"name": "https"}]}),
        ),
        ("beta", json!({"owner": "team-b", "replicas": 1})),
    ] {
        let body = json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": name}, "spec": spec});
        let created = post(client, GADGETS, body).await;
        assert_eq!(created.status, 201, "{}", created.body);
    }
    let mut alpha = get(client, &format!("{GADGETS}/alpha")).await.body;
    alpha["status"] = json!({"conditions": [
        {"type": "Progressing", "status": "False"},
        {"type": "Ready", "status": "True"},
    ]});
    let updated = crate::support::raw(
        client,
        "PUT",
        &format!("{GADGETS}/alpha/status"),
        "application/json",
        Some(alpha),
    )
    .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
}

/// The first `n` cells of a Table row.
pub(crate) fn first_cells(row: &Value, n: usize) -> Vec<Value> {
    row["cells"]
        .as_array()
        .map(|c| c.iter().take(n).cloned().collect())
        .unwrap_or_default()
}

pub(crate) fn is_age(cell: &str) -> bool {
    cell.strip_suffix('s')
        .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n < 120))
}

#[tokio::test]
async fn kubectl_get_prints_a_crd_s_printer_columns() {
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let kubectl = Kubectl::for_server(&server);

    let table = kubectl.table(&["get", "gadgets"]).await;
    assert_eq!(table[0], ["NAME", "READY", "OWNER", "REPLICAS", "AGE"]);
    assert_eq!(table[1][..4], ["alpha", "True", "team-a", "3"]);
    assert_eq!(table[2][..4], ["beta", "", "team-b", "1"]);
    assert!(is_age(&table[1][4]) && is_age(&table[2][4]), "{table:?}");
    assert_eq!(table.len(), 3, "{table:?}");

    let wide = kubectl.table(&["get", "gadgets", "-o", "wide"]).await;
    assert_eq!(
        wide[0],
        ["NAME", "READY", "OWNER", "REPLICAS", "FIRST PORT", "AGE"]
    );
    assert_eq!(wide[1][..5], ["alpha", "True", "team-a", "3", "http"]);
    assert_eq!(wide[2][..5], ["beta", "", "team-b", "1", ""]);

    let one = kubectl.table(&["get", "gadget", "alpha"]).await;
    assert_eq!(one[0], ["NAME", "READY", "OWNER", "REPLICAS", "AGE"]);
    assert_eq!(one[1][..4], ["alpha", "True", "team-a", "3"]);
}

#[tokio::test]
async fn kubectl_get_of_a_crd_without_printer_columns_prints_name_and_age() {
    let (server, client) = server().await;
    install_widgets(&client).await;
    let created = post(
        &client,
        "/apis/example.com/v1/namespaces/default/widgets",
        widget("w1", json!({"size": 2})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);

    let table = Kubectl::for_server(&server)
        .table(&["get", "widgets"])
        .await;
    assert_eq!(table[0], ["NAME", "AGE"]);
    assert_eq!(table[1][0], "w1");
    assert!(is_age(&table[1][1]), "{table:?}");
}

#[tokio::test]
async fn kubectl_get_watch_prints_a_row_for_each_change() {
    use tokio::io::AsyncReadExt as _;
    let (server, client) = server().await;
    install_gadgets(&client).await;
    let kubectl = Kubectl::for_server(&server);
    let mut child = kubectl
        .command(&["get", "gadgets", "-w"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl runs");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut printed = String::new();
    let mut read_until = async |needle: &str| {
        let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(20);
        // Until a whole line starting with `needle` is printed (reads may end mid-line).
        while !printed
            .split_inclusive('\n')
            .any(|l| l.starts_with(needle) && l.ends_with('\n'))
        {
            let mut buffer = [0u8; 4096];
            let n = tokio::time::timeout_at(deadline, stdout.read(&mut buffer))
                .await
                .unwrap_or_else(|_| panic!("kubectl -w never printed {needle:?}:\n{printed}"))
                .expect("stdout reads");
            assert!(
                n > 0,
                "kubectl -w ended before printing {needle:?}:\n{printed}"
            );
            printed.push_str(&String::from_utf8_lossy(&buffer[..n]));
        }
        printed.clone()
    };
    read_until("beta").await;
    let created = post(
        &client,
        GADGETS,
        json!({"apiVersion": "example.com/v1", "kind": "Gadget",
            "metadata": {"name": "gamma"}, "spec": {"owner": "team-c", "replicas": 5}}),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let printed = read_until("gamma").await;
    child.kill().await.expect("kubectl stops");
    let lines: Vec<Vec<&str>> = printed
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(lines[0], ["NAME", "READY", "OWNER", "REPLICAS", "AGE"]);
    let gamma = lines
        .iter()
        .find(|l| l.first() == Some(&"gamma"))
        .expect("a gamma row");
    // READY is empty (no status yet), so whitespace-split cells skip it.
    assert_eq!(gamma[..3], ["gamma", "team-c", "5"]);
    assert!(gamma.get(3).is_some_and(|a| is_age(a)), "{printed}");
}
