use serde_json::json;

use crate::conditions::READY_SET;
use crate::testing::{cluster_with_backends, condition, converge, reconcile, stored};

#[test]
fn a_glance_with_a_default_backend_converges_to_ready_and_a_converged_pass_writes_nothing() {
    let cluster = cluster_with_backends(&["a", "b"]);
    converge(&cluster);
    for type_ in READY_SET {
        assert_eq!(
            condition(&cluster, type_).0,
            "True",
            "{type_}: {:?}",
            condition(&cluster, type_)
        );
    }
    assert_eq!(
        condition(&cluster, "Ready"),
        (
            "True".into(),
            "AllReady".into(),
            "All sub-conditions are ready".into()
        )
    );
    let status = stored(&cluster).status.expect("status");
    assert_eq!(status.observed_generation, 2);
    cluster.clear_calls();
    assert_eq!(reconcile(&cluster).expect("a pass").requeue_after, None);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}

#[test]
fn a_new_backend_is_a_new_backends_secret_and_a_new_pod_template() {
    let cluster = cluster_with_backends(&["a"]);
    converge(&cluster);
    let template = || {
        cluster
            .server("Deployment", "glance")
            .expect("the Deployment")["spec"]["template"]
            .clone()
    };
    let before = template();
    cluster.put(crate::testing::backend("b", true, false));
    cluster.put(crate::testing::s3_secret("b-s3"));
    converge(&cluster);
    let after = template();
    assert_ne!(
        before["spec"]["volumes"][1]["secret"]["secretName"],
        after["spec"]["volumes"][1]["secret"]["secretName"]
    );
    assert_eq!(
        condition(&cluster, "BackendsReady").1,
        "AllBackendsProjected"
    );
}

#[test]
fn two_defaults_say_so_on_backends_ready_and_keep_the_running_deployment() {
    let cluster = cluster_with_backends(&["a", "b"]);
    converge(&cluster);
    let mounted = cluster
        .server("Deployment", "glance")
        .expect("the Deployment")["spec"]["template"]["spec"]["volumes"]
        .clone();
    cluster.change("GlanceBackend", "b", |o| {
        o["spec"]["isDefault"] = json!(true)
    });
    reconcile(&cluster).expect("a pass");
    assert_eq!(
        condition(&cluster, "BackendsReady"),
        (
            "False".into(),
            "NoDefaultBackend".into(),
            "More than one attached, credential-ready backend is marked isDefault (a, b); exactly one is required".into()
        )
    );
    let still = cluster
        .server("Deployment", "glance")
        .expect("the Deployment")["spec"]["template"]["spec"]["volumes"]
        .clone();
    assert_eq!(still, mounted, "the last good projection stays");
    assert_eq!(condition(&cluster, "Ready").0, "False");
}
