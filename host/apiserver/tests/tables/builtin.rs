//! The columns `kubectl get` prints for built-in kinds: their own (ConfigMap, Secret,
//! Service, Deployment, Namespace) or kube-apiserver's default (Role).

use crate::support::kubectl::Kubectl;
use crate::support::{get, server};

#[tokio::test]
async fn kubectl_get_prints_the_built_in_kinds_columns() {
    let (server, client) = server().await;
    let kubectl = Kubectl::for_server(&server);
    let manifests = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1", b: "2"}
---
apiVersion: v1
kind: Secret
metadata: {name: creds}
type: Opaque
stringData: {password: hunter2}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: app, image: "nginx:1"}]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader}
rules: []
"#;
    kubectl.ok(&["apply", "-f", "-"], Some(manifests)).await;

    let cm = kubectl.table(&["get", "configmap", "settings"]).await;
    assert_eq!(cm[0], ["NAME", "DATA", "AGE"]);
    assert_eq!(cm[1][..2], ["settings", "2"]);

    let secret = kubectl.table(&["get", "secret", "creds"]).await;
    assert_eq!(secret[0], ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(secret[1][..3], ["creds", "Opaque", "1"]);

    let service = kubectl
        .table(&["get", "service", "web", "-o", "wide"])
        .await;
    assert_eq!(
        service[0],
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR"
        ]
    );
    assert_eq!(service[1][..2], ["web", "ClusterIP"]);
    assert!(service[1][2].starts_with("10.96."), "{service:?}");
    assert_eq!(service[1][3..5], ["<none>", "80/TCP"]);
    assert_eq!(service[1][6], "app=web");

    let deployment = kubectl
        .table(&["get", "deployment", "web", "-o", "wide"])
        .await;
    assert_eq!(
        deployment[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(deployment[1][..4], ["web", "0/2", "0", "0"]);
    assert_eq!(deployment[1][5..], ["app", "nginx:1", "app=web"]);

    let namespaces = kubectl.table(&["get", "namespace", "default"]).await;
    assert_eq!(namespaces[0], ["NAME", "STATUS", "AGE"]);
    assert_eq!(namespaces[1][..2], ["default", "Active"]);

    // A kind without its own columns gets kube-apiserver's default table.
    let role = get(
        &client,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles/reader",
    )
    .await
    .body;
    let roles = kubectl.table(&["get", "role", "reader"]).await;
    assert_eq!(roles[0], ["NAME", "CREATED AT"]);
    assert_eq!(
        roles[1],
        [
            "reader",
            role["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("?")
        ]
    );
}
