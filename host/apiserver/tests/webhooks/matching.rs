//! Which requests a webhook sees: namespaceSelector, objectSelector, rules naming
//! subresources, and a webhook reached through a Service's EndpointSlice.

use serde_json::json;

use super::harness::{Reply, Webhook, configuration, hook, register};
use crate::support::{config_map, get, install_widgets, post, raw, server, widget};

#[tokio::test]
async fn namespace_and_object_selectors_choose_the_requests_a_webhook_sees() {
    let (server, client) = server().await;
    let seen_all = Webhook::start(&[], |_| Reply::allow()).await;
    let deny = |_: &serde_json::Value| {
        Reply::with(json!({"allowed": false, "status": {"message": "selected"}}))
    };
    let by_namespace = Webhook::start(&[], deny).await;
    let by_object = Webhook::start(&[], deny).await;
    let mut ns_hook = hook(
        "ns.example.com",
        by_namespace.client_config(""),
        &["CREATE"],
        &["configmaps"],
    );
    ns_hook["namespaceSelector"] = json!({"matchLabels": {"env": "prod"}});
    let mut object_hook = hook(
        "object.example.com",
        by_object.client_config(""),
        &["CREATE"],
        &["configmaps"],
    );
    object_hook["objectSelector"] =
        json!({"matchExpressions": [{"key": "locked", "operator": "Exists"}]});
    register(
        &client,
        false,
        configuration(
            false,
            "selectors",
            vec![
                hook(
                    "all.example.com",
                    seen_all.client_config(""),
                    &["CREATE"],
                    &["configmaps"],
                ),
                ns_hook,
                object_hook,
            ],
        ),
    )
    .await;
    let prod = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}});
    assert_eq!(post(&client, "/api/v1/namespaces", prod).await.status, 201);

    let plain = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("plain", json!({})),
    )
    .await;
    assert_eq!(plain.status, 201, "{}", plain.body);
    let counts = server.counts();
    assert_eq!(
        counts.webhook("all.example.com", "allowed"),
        1,
        "the create was admitted"
    );
    assert_eq!(counts.webhook("ns.example.com", "called"), 0);
    assert_eq!(counts.webhook("object.example.com", "called"), 0);

    let in_prod = post(
        &client,
        "/api/v1/namespaces/prod/configmaps",
        config_map("p", json!({})),
    )
    .await;
    assert_eq!(in_prod.status, 403, "{}", in_prod.body);
    assert!(
        in_prod.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"ns.example.com\" denied"))
    );

    let mut locked = config_map("locked", json!({}));
    locked["metadata"]["labels"] = json!({"locked": "yes"});
    let refused = post(&client, "/api/v1/namespaces/default/configmaps", locked).await;
    assert_eq!(refused.status, 403, "{}", refused.body);
    assert!(
        refused.body["message"]
            .as_str()
            .is_some_and(|m| m.contains("\"object.example.com\" denied"))
    );
    assert_eq!(by_namespace.reviews().len(), 1);
    assert_eq!(by_object.reviews().len(), 1);
}

#[tokio::test]
async fn a_rule_naming_the_status_subresource_sees_status_writes_only() {
    let (server, client) = server().await;
    install_widgets(&client).await;
    let webhook = Webhook::start(&[], |_| Reply::allow()).await;
    register(
        &client,
        false,
        configuration(
            false,
            "status",
            vec![hook(
                "status.example.com",
                webhook.client_config(""),
                &["UPDATE"],
                &["widgets/status"],
            )],
        ),
    )
    .await;
    let widgets = "/apis/example.com/v1/namespaces/default/widgets";
    assert_eq!(
        post(&client, widgets, widget("w", json!({"size": 2})))
            .await
            .status,
        201
    );
    let merge = "application/merge-patch+json";
    let spec = raw(
        &client,
        "PATCH",
        &format!("{widgets}/w"),
        merge,
        Some(json!({"spec": {"size": 3}})),
    )
    .await;
    assert_eq!(spec.status, 200, "{}", spec.body);
    assert_eq!(
        server.counts().get("patch", "widgets"),
        1,
        "the spec patch was served"
    );
    assert!(
        webhook.reviews().is_empty(),
        "a main-resource write does not match widgets/status"
    );
    let status = raw(
        &client,
        "PATCH",
        &format!("{widgets}/w/status"),
        merge,
        Some(json!({"status": {"ready": true}})),
    )
    .await;
    assert_eq!(status.status, 200, "{}", status.body);
    let reviews = webhook.reviews();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["request"]["subResource"], "status");
    assert_eq!(reviews[0]["request"]["operation"], "UPDATE");
    assert_eq!(reviews[0]["request"]["oldObject"]["spec"]["size"], 3);
}

#[tokio::test]
async fn a_service_reference_is_called_through_the_services_endpointslice() {
    let (server, client) = server().await;
    let webhook = Webhook::start(&["hooks.default.svc"], |_| {
        Reply::patch(json!([{"op": "add", "path": "/data/routed", "value": "through-the-slice"}]))
    })
    .await;
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "hooks"},
        "spec": {"ports": [{"name": "https", "port": 443, "targetPort": 9443}]},
    });
    assert_eq!(
        post(&client, "/api/v1/namespaces/default/services", service)
            .await
            .status,
        201
    );
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "hooks-abc", "labels": {"kubernetes.io/service-name": "hooks"}},
        "addressType": "IPv4",
        "ports": [{"name": "https", "port": webhook.addr.port(), "protocol": "TCP"}],
        "endpoints": [
            {"addresses": ["127.0.0.2"], "conditions": {"ready": false}},
            {"addresses": ["127.0.0.1"], "conditions": {"ready": true}},
        ],
    });
    let created = post(
        &client,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
        slice,
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let client_config = json!({
        "service": {"name": "hooks", "namespace": "default", "path": "/mutate"},
        "caBundle": webhook.ca_bundle,
    });
    register(
        &client,
        true,
        configuration(
            true,
            "routed",
            vec![hook(
                "routed.example.com",
                client_config,
                &["CREATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let stored = get(
        &client,
        "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/routed",
    )
    .await;
    assert_eq!(
        stored.body["webhooks"][0]["clientConfig"]["service"]["port"], 443,
        "the port defaults to 443"
    );
    let cm = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("r", json!({"k": "v"})),
    )
    .await;
    assert_eq!(cm.status, 201, "{}", cm.body);
    assert_eq!(
        cm.body["data"],
        json!({"k": "v", "routed": "through-the-slice"})
    );
    assert_eq!(server.counts().webhook("routed.example.com", "allowed"), 1);
}
