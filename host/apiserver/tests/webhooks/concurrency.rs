//! Webhooks run without the server's lock: a write whose object changed while its
//! webhooks ran is computed and admitted again on the stored object, never committed over
//! the other write.

use std::time::Duration;

use serde_json::json;

use super::harness::{Reply, Webhook, configuration, hook, register};
use crate::support::{config_map, get, post, raw, server, wait_for};

#[tokio::test]
async fn a_write_whose_object_changed_while_its_webhooks_ran_is_admitted_again_on_the_latest_object()
 {
    let (_server, client) = server().await;
    // Slow for the write that sets data.a, at once for every other.
    let webhook = Webhook::start(&[], |review| {
        let slow = !review["request"]["object"]["data"]["a"].is_null();
        Reply {
            response: json!({"allowed": true}),
            delay: if slow {
                Duration::from_millis(1500)
            } else {
                Duration::ZERO
            },
        }
    })
    .await;
    register(
        &client,
        false,
        configuration(
            false,
            "slow",
            vec![hook(
                "slow.example.com",
                webhook.client_config(""),
                &["UPDATE"],
                &["configmaps"],
            )],
        ),
    )
    .await;
    let created = post(
        &client,
        "/api/v1/namespaces/default/configmaps",
        config_map("race", json!({})),
    )
    .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let path = "/api/v1/namespaces/default/configmaps/race";
    let merge = "application/merge-patch+json";
    let slow_client = client.clone();
    let first = tokio::spawn(async move {
        raw(
            &slow_client,
            "PATCH",
            path,
            merge,
            Some(json!({"data": {"a": "1"}})),
        )
        .await
    });
    let sets_a = |r: &serde_json::Value| !r["request"]["object"]["data"]["a"].is_null();
    wait_for("the first patch to reach its webhook", || {
        let seen = webhook.reviews();
        async move {
            if seen.iter().any(sets_a) {
                Ok(())
            } else {
                Err(format!("{} reviews", seen.len()))
            }
        }
    })
    .await;
    let second = raw(
        &client,
        "PATCH",
        path,
        merge,
        Some(json!({"data": {"b": "2"}})),
    )
    .await;
    assert_eq!(second.status, 200, "{}", second.body);
    let first = first.await.expect("the first patch finishes");
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.body["data"], json!({"a": "1", "b": "2"}));
    assert_eq!(
        get(&client, path).await.body["data"],
        json!({"a": "1", "b": "2"})
    );
    let admitted_a: Vec<_> = webhook.reviews().into_iter().filter(sets_a).collect();
    assert_eq!(admitted_a.len(), 2, "admitted again on the changed object");
    assert_eq!(
        admitted_a[1]["request"]["object"]["data"],
        json!({"a": "1", "b": "2"})
    );
}
