//! The labels a Secret gets, and the events a pass records.

use serde_json::json;
use wasm_operator_sdk::Outcome;

use crate::testing::*;

#[test]
fn a_label_the_secret_lacks_or_holds_otherwise_is_set_and_none_is_removed() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    let mut existing = secret("demo-a", "Opaque", &[("token", "kept")]);
    existing["metadata"]["labels"] = json!({"app": "old", "mine": "x"});
    cluster.put(existing);

    pass(&cluster, "demo").expect("the pass succeeds");

    let secret = cluster.server("Secret", "demo-a").expect("there");
    assert_eq!(
        secret["metadata"]["labels"],
        json!({"app": "gitlab", "mine": "x", "release": "demo"})
    );
    assert_eq!(cluster.secret_data("demo-a")["token"], b"kept");
}

#[test]
fn release_labels_of_the_gitlabsecrets_are_not_copied() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    pass(&cluster, "demo").expect("the pass succeeds");
    let labels = &cluster.server("Secret", "demo-a").expect("created")["metadata"]["labels"];
    assert!(
        labels.get("operator.gitlab.com/release-name").is_none(),
        "{labels}"
    );
}

#[test]
fn a_secret_two_gitlabsecrets_declare_is_labelled_by_neither_with_a_warning_each_pass() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("one"), "shared", json!([random("a")])));
    cluster.put(with_secret(gls("two"), "shared", json!([random("b")])));

    assert_eq!(pass(&cluster, "one"), Ok(Outcome::done()));
    assert_eq!(pass(&cluster, "two"), Ok(Outcome::done()));
    assert_eq!(pass(&cluster, "one"), Ok(Outcome::done()));

    let secret = cluster.server("Secret", "shared").expect("created");
    assert!(secret.pointer("/metadata/labels").is_none(), "{secret}");
    assert_eq!(cluster.secret_data("shared").len(), 2);
    assert_eq!(
        cluster.event_reasons(),
        [
            "SecretDeclaredTwice",
            "SecretDeclaredTwice",
            "SecretDeclaredTwice"
        ]
    );
}

#[test]
fn a_secret_labelled_while_only_one_declared_it_keeps_its_labels() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("one"), "shared", json!([random("a")])));
    pass(&cluster, "one").expect("the pass succeeds");

    let mut two = with_secret(gls("two"), "shared", json!([random("a")]));
    two["metadata"]["labels"]["app"] = json!("other");
    cluster.put(two);
    pass(&cluster, "two").expect("the pass succeeds");

    let secret = cluster.server("Secret", "shared").expect("there");
    assert_eq!(secret["metadata"]["labels"]["app"], "gitlab");
    assert_eq!(secret["metadata"]["labels"]["release"], "one");
}

#[test]
fn an_existing_secret_of_another_type_keeps_it_stays_ready_and_is_noted_every_pass() {
    let cluster = fake_cluster();
    cluster.put(with_secret(gls("demo"), "demo-a", json!([random("token")])));
    let mut existing = secret("demo-a", "example.com/mine", &[("token", "kept")]);
    existing["metadata"]["labels"] = json!({"app": "gitlab", "release": "demo"});
    cluster.put(existing);

    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));
    assert_eq!(pass(&cluster, "demo"), Ok(Outcome::done()));

    assert_eq!(
        cluster.server("Secret", "demo-a").expect("there")["type"],
        "example.com/mine"
    );
    assert_eq!(ready(&cluster, "demo").1, "SecretsReady");
    assert_eq!(
        cluster.event_reasons(),
        ["SecretTypeKept", "SecretTypeKept"]
    );
}
