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
