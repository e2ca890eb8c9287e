use serde_json::{Value, json};
use wasm_operator_sdk::testing::{Call, FakeCluster, Op};
use wasm_operator_sdk::{ApiError, ObjectRef};

use super::*;
use crate::testing::{
    CONFIG_MAP, condition, events, finish_job, jobs_created, keystone_with, pass, pass_with_config,
    secret,
};

const PASSWORD: &str = "-s3cret-Pa55";

fn admin_secret(password: &str) -> Value {
    secret("ks-admin", &[("password", password)])
}

fn cluster() -> FakeCluster {
    FakeCluster::new().with(admin_secret(PASSWORD))
}

fn the_job() -> ObjectRef {
    ObjectRef::of::<Job>(Some("ns"), "ks-bootstrap")
}

fn ready(pass: &Pass<'_>) -> (String, String, String) {
    condition(pass, BOOTSTRAP_READY)
}

fn owned_events(list: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    list.iter()
        .map(|(t, r, n)| ((*t).to_owned(), (*r).to_owned(), (*n).to_owned()))
        .collect()
}

#[test]
fn the_bootstrap_job_runs_keystone_manage_with_the_password_by_reference_only() {
    let cluster = cluster();
    let tls = json!({"database": {"tls": {"mode": "require",
        "caBundleSecretRef": {"name": "ca"}, "clientCertSecretRef": {"name": "client"}}},
        "deployment": {"priorityClassName": "openstack-critical"},
        "bootstrap": {"region": "RegionTwo"}});
    let mut pass = pass_with_config(&cluster, &keystone_with(tls));
    pass.domains_secret_name = "ks-domains-2".into();
    assert_eq!(run(&mut pass).expect("runs"), Some(BOOTSTRAP_POLLING));
    assert_eq!(
        ready(&pass),
        (
            "False".into(),
            "BootstrapInProgress".into(),
            "Keystone bootstrap job is running".into()
        )
    );
    assert_eq!(BOOTSTRAP_POLLING, Duration::from_secs(60));
    let job = cluster.object(&the_job()).expect("created");
    let digest = password_digest(PASSWORD);
    assert_eq!(digest.len(), 64);
    assert_eq!(
        job["metadata"]["annotations"],
        json!({"cobaltcore.c5c3.io/pod-spec-hash": digest}),
        "the re-run key is the password's digest"
    );
    assert_eq!(job["metadata"]["ownerReferences"][0]["uid"], "ks-uid");
    assert_eq!(job["spec"]["backoffLimit"], 4);
    let template = &job["spec"]["template"];
    assert_eq!(
        template["metadata"]["annotations"],
        json!({"cobaltcore.c5c3.io/admin-password-hash": digest})
    );
    let pod = &template["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    assert_eq!(pod["priorityClassName"], "openstack-critical");
    assert_eq!(
        pod["volumes"],
        json!([{"name": "config", "configMap": {"name": CONFIG_MAP}},
            {"name": "fernet-keys", "secret": {"secretName": "ks-fernet-keys"}},
            {"name": "db-tls", "projected": {"defaultMode": 0o400, "sources": [
                {"secret": {"name": "ca", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"secret": {"name": "client", "items": [
                    {"key": "tls.crt", "path": "tls.crt"}, {"key": "tls.key", "path": "tls.key"}]}}]}},
            {"name": "domains", "secret": {"secretName": "ks-domains-2", "defaultMode": 0o400}}])
    );
    let container = &pod["containers"][0];
    assert_eq!(container["name"], "bootstrap");
    assert_eq!(container["image"], "ghcr.io/c5c3/keystone:2025.2");
    assert_eq!(
        container["command"],
        json!(["/bin/sh", "-eu", "-c", script()])
    );
    let internal = "http://ks.ns.svc.cluster.local:5000/v3";
    assert_eq!(
        container["env"],
        json!([
            {"name": "BOOTSTRAP_PASSWORD", "valueFrom": {"secretKeyRef":
                {"name": "ks-admin", "key": "password"}}},
            {"name": "OS_DATABASE__CONNECTION", "valueFrom": {"secretKeyRef":
                {"name": "ks-db-connection", "key": "connection"}}},
            {"name": "BOOTSTRAP_REGION_ID", "value": "RegionTwo"},
            {"name": "BOOTSTRAP_ADMIN_URL", "value": internal},
            {"name": "BOOTSTRAP_INTERNAL_URL", "value": internal},
            {"name": "BOOTSTRAP_PUBLIC_URL", "value": internal},
        ])
    );
    assert_eq!(
        container["volumeMounts"],
        json!([{"name": "config", "mountPath": "/etc/keystone/keystone.conf.d/", "readOnly": true},
            {"name": "fernet-keys", "mountPath": "/etc/keystone/fernet-keys/", "readOnly": true},
            {"name": "db-tls", "mountPath": "/etc/keystone/db-tls/", "readOnly": true},
            {"name": "domains", "mountPath": "/etc/keystone/domains", "readOnly": true}])
    );
    assert_eq!(
        container["securityContext"],
        serde_json::to_value(pod::restricted()).expect("encodes")
    );
    assert!(
        !job.to_string().contains(PASSWORD),
        "the password is never in the Job"
    );
    assert!(events(&cluster).is_empty(), "{:?}", events(&cluster));
}

#[test]
fn the_public_url_is_the_public_endpoint_else_the_internal_one_and_the_region_defaults() {
    let cases = [
        (
            "no public endpoint, no region",
            json!({"bootstrap": {"region": null}}),
            "http://ks.ns.svc.cluster.local:5000/v3",
            "RegionOne",
        ),
        (
            "a public endpoint",
            json!({"bootstrap": {"publicEndpoint": "https://id.example.com/v3",
                "region": "RegionOne"}}),
            "https://id.example.com/v3",
            "RegionOne",
        ),
    ];
    for (case, spec, public, region) in cases {
        let cluster = cluster();
        let pass = pass_with_config(&cluster, &keystone_with(spec));
        let job = serde_json::to_value(job(&pass, "d").expect("builds")).expect("encodes");
        let env = &job["spec"]["template"]["spec"]["containers"][0]["env"];
        let value = |name: &str| {
            env.as_array()
                .into_iter()
                .flatten()
                .find(|e| e["name"] == name)
                .map(|e| e["value"].clone())
        };
        assert_eq!(value("BOOTSTRAP_PUBLIC_URL"), Some(json!(public)), "{case}");
        assert_eq!(value("BOOTSTRAP_REGION_ID"), Some(json!(region)), "{case}");
        let volumes = job["spec"]["template"]["spec"]["volumes"].clone();
        let names: Vec<&str> = volumes
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["name"].as_str())
            .collect();
        assert_eq!(
            names,
            ["config", "fernet-keys"],
            "{case}: no TLS, no domains"
        );
    }
}

#[test]
fn the_script_seeds_the_region_then_execs_keystone_manage_bootstrap() {
    let script = script();
    let (python, shell) = script
        .strip_prefix("python3 -c '")
        .and_then(|rest| rest.split_once("'\n"))
        .expect("a single-quoted python step, then the shell");
    assert!(!python.contains('\''), "the python holds no single quote");
    for needle in [
        "os.environ[\"OS_DATABASE__CONNECTION\"]",
        "INSERT IGNORE INTO region (id, description, extra) VALUES (%s, %s, %s)",
        "os.environ[\"BOOTSTRAP_REGION_ID\"]",
        "(\"ca\", \"cert\", \"key\")",
        "param(\"ssl_verify_cert\")",
        "param(\"ssl_verify_identity\")",
        "unquote(url.password",
    ] {
        assert!(python.contains(needle), "{needle} in {python}");
    }
    assert_eq!(
        shell,
        "exec keystone-manage --config-dir=/etc/keystone/keystone.conf.d/ bootstrap \\\n  \
         --bootstrap-password=\"$BOOTSTRAP_PASSWORD\" \\\n  \
         --bootstrap-admin-url \"$BOOTSTRAP_ADMIN_URL\" \\\n  \
         --bootstrap-internal-url \"$BOOTSTRAP_INTERNAL_URL\" \\\n  \
         --bootstrap-public-url \"$BOOTSTRAP_PUBLIC_URL\" \\\n  \
         --bootstrap-region-id \"$BOOTSTRAP_REGION_ID\"\n"
    );
    assert!(!shell.contains("--bootstrap-username"));
}

#[test]
fn an_invalid_admin_secret_warns_and_stops_the_pass_without_a_job() {
    let message = "Admin password Secret ns/ks-admin is missing, unreadable, or has an empty \
                   \"password\" value";
    let unreadable = cluster();
    unreadable.fail(
        Op::Get,
        "ks-admin",
        ApiError::Unavailable("api down".into()),
        1,
    );
    let cases = [
        (
            "no Secret",
            FakeCluster::new(),
            "reading admin password from Secret ns/ks-admin: getting Secret ns/ks-admin: not found",
        ),
        (
            "no password key",
            FakeCluster::new().with(secret("ks-admin", &[("username", "admin")])),
            "reading admin password from Secret ns/ks-admin: key not found in Secret: key \
             \"password\" in Secret ns/ks-admin",
        ),
        (
            "an empty password",
            FakeCluster::new().with(admin_secret("")),
            "admin password Secret ns/ks-admin has an empty \"password\" value",
        ),
        (
            "an unreadable Secret",
            unreadable,
            "reading admin password from Secret ns/ks-admin: getting Secret ns/ks-admin: \
             unavailable: api down",
        ),
    ];
    for (case, cluster, cause) in cases {
        let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
        let error = run(&mut pass).expect_err(case);
        assert_eq!(error.to_string(), cause, "{case}");
        assert_eq!(
            ready(&pass),
            ("False".into(), "AdminSecretInvalid".into(), message.into()),
            "{case}"
        );
        assert_eq!(
            events(&cluster),
            owned_events(&[("Warning", "AdminSecretInvalid", message)]),
            "{case}"
        );
        assert!(jobs_created(&cluster).is_empty(), "{case}");
    }
}

#[test]
fn a_failed_bootstrap_warns_and_stops_the_pass() {
    let cluster = cluster();
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    run(&mut pass).expect("creates the Job");
    finish_job(&cluster, "ks-bootstrap", "Failed");
    let error = run(&mut pass).expect_err("failed");
    assert!(
        matches!(&error, Error::Job { what, source } if what == "running bootstrap"
            && source.is_job_failed()),
        "{error:?}"
    );
    let message = "Keystone bootstrap job failed: job failed: Job ns/ks-bootstrap failed \
                   permanently and its pod template is unchanged";
    assert_eq!(
        ready(&pass),
        ("False".into(), "BootstrapFailed".into(), message.into())
    );
    assert_eq!(
        events(&cluster),
        owned_events(&[("Warning", "BootstrapFailed", message)])
    );
    assert_eq!(
        jobs_created(&cluster),
        ["ks-bootstrap"],
        "not re-run unchanged"
    );
}

#[test]
fn a_completed_bootstrap_is_reported_once_and_a_converged_pass_writes_nothing() {
    let cluster = cluster();
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    run(&mut pass).expect("creates the Job");
    assert_eq!(
        run(&mut pass).expect("waits"),
        Some(BOOTSTRAP_POLLING),
        "still running"
    );
    assert_eq!(ready(&pass).1, "BootstrapInProgress");
    finish_job(&cluster, "ks-bootstrap", "Complete");
    assert_eq!(run(&mut pass).expect("done"), None);
    let message = "Keystone bootstrap completed successfully";
    assert_eq!(
        ready(&pass),
        ("True".into(), "BootstrapComplete".into(), message.into())
    );
    assert_eq!(
        events(&cluster),
        owned_events(&[("Normal", "BootstrapComplete", message)])
    );
    // The next pass finds the condition True, as the status write left it.
    cluster.clear_calls();
    let mut next = pass_with_config(&cluster, &keystone_with(json!({})));
    next.keystone.status = pass.keystone.status.clone();
    assert_eq!(run(&mut next).expect("converged"), None);
    assert_eq!(ready(&next).1, "BootstrapComplete");
    assert!(cluster.writes().is_empty(), "{:?}", cluster.write_log());
    assert!(events(&cluster).is_empty(), "{:?}", events(&cluster));
}

#[test]
fn a_rotated_password_runs_bootstrap_again_and_a_new_image_does_not() {
    let cluster = cluster();
    let mut pass = pass_with_config(&cluster, &keystone_with(json!({})));
    run(&mut pass).expect("creates the Job");
    finish_job(&cluster, "ks-bootstrap", "Complete");
    run(&mut pass).expect("done");
    // A new image (and configuration) keeps the completed Job.
    let upgraded = keystone_with(json!({"image": {"tag": "2026.1"}}));
    let mut later = pass_with_config(&cluster, &upgraded);
    later.keystone.status = pass.keystone.status.clone();
    later.config_map_name = Some("ks-config-2".into());
    assert_eq!(run(&mut later).expect("still done"), None);
    assert_eq!(jobs_created(&cluster), ["ks-bootstrap"]);
    // A rotated password replaces it.
    cluster.put(admin_secret("rotated-Pa55"));
    cluster.clear_calls();
    assert_eq!(run(&mut later).expect("re-runs"), Some(BOOTSTRAP_POLLING));
    assert_eq!(ready(&later).1, "BootstrapInProgress");
    let deleted = cluster
        .writes()
        .iter()
        .any(|c| matches!(c, Call::Delete(r, _) if *r == the_job()));
    assert!(deleted, "{:?}", cluster.write_log());
    assert_eq!(jobs_created(&cluster), ["ks-bootstrap"]);
    let job = cluster.object(&the_job()).expect("re-created");
    let digest = password_digest("rotated-Pa55");
    assert_eq!(
        job["metadata"]["annotations"]["cobaltcore.c5c3.io/pod-spec-hash"],
        json!(digest)
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["annotations"]["cobaltcore.c5c3.io/admin-password-hash"],
        json!(digest)
    );
    // Its completion is reported again.
    finish_job(&cluster, "ks-bootstrap", "Complete");
    assert_eq!(run(&mut later).expect("done"), None);
    assert_eq!(cluster.event_reasons(), ["BootstrapComplete"]);
}

#[test]
fn the_bootstrap_job_before_the_config_step_ran_is_a_step_order_error() {
    let cluster = cluster();
    let mut plain = pass(&cluster, &keystone_with(json!({})));
    let error = run(&mut plain).expect_err("no ConfigMap name");
    assert!(
        matches!(
            error,
            Error::StepOrder {
                step: "bootstrap",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(cluster.writes().is_empty());
}
