use serde_json::{Value, json};

use super::database::{DatabaseState, ensure};
use super::*;
use crate::blocks::types::ServiceSpec;
use crate::testing::{FakeCluster, owner};

const NS: &str = "ns";

fn spec() -> ServiceSpec {
    serde_json::from_value(json!({
        "openStackRelease": "2025.2",
        "image": {"repository": "ghcr.io/c5c3/glance", "tag": "2025.2"},
        "database": {"clusterRef": {"name": "maria"}, "database": "glance",
                     "secretRef": {"name": "glance-db"}},
        "cache": {"clusterRef": {"name": "memcached"}, "backend": "dogpile.cache.pymemcache"},
        "keystoneEndpoint": "http://keystone.ns.svc:5000/v3",
        "serviceUser": {"secretRef": {"name": "glance-service"}},
    }))
    .expect("a spec")
}

fn secret(name: &str, data: &[(&str, &str)]) -> Value {
    let data: serde_json::Map<String, Value> = data
        .iter()
        .map(|(k, v)| {
            let bytes = k8s_openapi::ByteString(v.as_bytes().to_vec());
            (
                (*k).to_owned(),
                serde_json::to_value(bytes).expect("encodes"),
            )
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name, "namespace": NS}, "data": data})
}

fn ready() -> Value {
    json!({"conditions": [{"type": "Ready", "status": "True", "reason": "Ready",
        "message": "", "lastTransitionTime": "2026-12-03T08:00:00Z"}]})
}

fn maria(ready_status: Value) -> Value {
    json!({"apiVersion": "k8s.mariadb.com/v1alpha1", "kind": "MariaDB",
        "metadata": {"name": "maria", "namespace": NS}, "status": ready_status})
}

fn with<'a>(
    cluster: &'a FakeCluster,
    spec: &'a ServiceSpec,
    owner: &'a crate::Owner,
) -> Service<'a> {
    Service {
        cluster,
        owner,
        namespace: NS,
        name: "glance",
        title: "Glance",
        default_user: "glance",
        spec,
    }
}

#[test]
fn each_missing_credential_waits_with_its_reason_and_the_service_s_title() {
    let db = || {
        secret(
            "glance-db",
            &[("username", "glance"), ("password", "db-pw")],
        )
    };
    let service = || secret("glance-service", &[("password", "svc-pw")]);
    let syncing = json!({"apiVersion": "external-secrets.io/v1", "kind": "ExternalSecret",
        "metadata": {"name": "glance-service", "namespace": NS}, "spec": {}});
    // (objects present, reason and message)
    let table = [
        (
            vec![service()],
            Some((
                "WaitingForDBCredentials",
                "Database credentials ExternalSecret ns/glance-db not found yet",
            )),
        ),
        (
            vec![db()],
            Some((
                "WaitingForServiceUserCredentials",
                "Service-user credentials ExternalSecret ns/glance-service not found yet",
            )),
        ),
        (
            vec![db(), syncing],
            Some((
                "WaitingForServiceUserCredentials",
                "Waiting for ESO to sync the Glance service-user password from OpenBao",
            )),
        ),
        (vec![db(), service()], None),
    ];
    let (spec, owner) = (spec(), owner());
    for (objects, want) in table {
        let mut cluster = FakeCluster::new();
        for o in objects {
            cluster = cluster.with(o);
        }
        let got = credentials::gate(&with(&cluster, &spec, &owner)).expect("reads");
        let got = got.map(|w| (w.reason, w.message));
        let want = want.map(|(r, m)| (r.to_owned(), m.to_owned()));
        assert_eq!(got, want);
    }
}

#[test]
fn the_connection_secret_carries_the_escaped_url_of_the_managed_user_or_waits_naming_the_key() {
    let (spec, owner) = (spec(), owner());
    let cluster = FakeCluster::new().with(secret(
        "glance-db",
        &[("username", "ignored"), ("password", "p@ss:word")],
    ));
    let hash = connection::ensure(&with(&cluster, &spec, &owner))
        .expect("reads")
        .expect("the connection");
    assert_eq!(hash.len(), 64);
    let data = cluster.secret_data("glance-db-connection");
    assert_eq!(
        String::from_utf8_lossy(&data[connection::CONNECTION_KEY]),
        "mysql+pymysql://glance:p%40ss%3Aword@maria.ns.svc:3306/glance?charset=utf8"
    );
    cluster.clear_calls();
    connection::ensure(&with(&cluster, &spec, &owner))
        .expect("reads")
        .expect("again");
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());

    let cluster = FakeCluster::new().with(secret("glance-db", &[("username", "glance")]));
    let waiting = connection::ensure(&with(&cluster, &spec, &owner))
        .expect("reads")
        .expect_err("waits");
    assert_eq!(
        waiting,
        Waiting::new(
            "WaitingForDBCredentials",
            "Upstream database credentials Secret ns/glance-db missing key \"password\""
        )
    );
}

fn waiting(state: DatabaseState) -> (String, String) {
    match state {
        DatabaseState::Waiting(w) => (w.reason, w.message),
        other => panic!("not waiting: {other:?}"),
    }
}

#[test]
fn the_database_waits_for_mariadb_then_its_objects_then_the_sync_job() {
    let (spec, owner) = (spec(), owner());
    let command = ["glance-manage", "db_sync"];
    let cluster = FakeCluster::new().with(maria(json!({})));
    assert_eq!(
        waiting(ensure(&with(&cluster, &spec, &owner), &command).expect("reads")),
        (
            "ClusterNotReady".into(),
            "MariaDB cluster \"maria\" is not ready".into()
        )
    );
    let cluster = FakeCluster::new().with(maria(ready()));
    let service = with(&cluster, &spec, &owner);
    assert_eq!(
        waiting(ensure(&service, &command).expect("reads")),
        (
            "WaitingForDatabase".into(),
            "MariaDB Database CR is not ready".into()
        )
    );
    cluster.change("Database", "glance", |o| o["status"] = ready());
    assert_eq!(
        waiting(ensure(&service, &command).expect("reads")),
        (
            "WaitingForDatabase".into(),
            "MariaDB User or Grant CR is not ready".into()
        )
    );
    cluster.change("User", "glance", |o| o["status"] = ready());
    cluster.change("Grant", "glance", |o| o["status"] = ready());
    assert_eq!(
        waiting(ensure(&service, &command).expect("reads")),
        ("DBSyncInProgress".into(), "db_sync job is running".into())
    );
    let job = cluster.server("Job", "glance-db-sync").expect("the Job");
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["command"],
        json!(["glance-manage", "db_sync"])
    );
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["env"][0]["valueFrom"]["secretKeyRef"]["name"],
        "glance-db-connection"
    );
    cluster.change("Job", "glance-db-sync", |o| {
        o["status"] =
            json!({"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]});
    });
    assert!(matches!(
        ensure(&service, &command).expect("reads"),
        DatabaseState::Synced
    ));
}

#[test]
fn a_failed_sync_job_is_db_sync_failed_with_the_job_s_error() {
    let (spec, owner) = (spec(), owner());
    let mut brownfield = spec.clone();
    brownfield.database.cluster_ref = None;
    brownfield.database.host = "db.example.com".into();
    let cluster = FakeCluster::new();
    let service = with(&cluster, &brownfield, &owner);
    let _ = ensure(&service, &["x"]).expect("creates the Job");
    cluster.change("Job", "glance-db-sync", |o| {
        o["status"] = json!({"failed": 5, "conditions": [{"type": "Failed", "status": "True"}]});
    });
    match ensure(&service, &["x"]).expect("reads") {
        DatabaseState::Failed(w, source) => {
            assert_eq!(w.reason, "DBSyncFailed");
            assert_eq!(w.message, format!("db_sync job failed: {source}"));
            assert!(source.to_string().contains("ns/glance-db-sync"), "{source}");
        }
        other => panic!("not failed: {other:?}"),
    }
    let _ = spec;
}

#[test]
fn keystone_authtoken_takes_the_spec_s_endpoints_user_region_and_cache() {
    let (mut spec, owner) = (spec(), owner());
    spec.region = "RegionOne".into();
    spec.keystone_public_endpoint = "https://identity.example.com/v3".into();
    let cluster = FakeCluster::new();
    let section = authtoken::section(&with(&cluster, &spec, &owner));
    let want: std::collections::BTreeMap<String, String> = [
        ("auth_type", "password"),
        ("auth_url", "http://keystone.ns.svc:5000/v3"),
        ("memcached_servers", "memcached:11211"),
        ("project_domain_name", "Default"),
        ("project_name", "service"),
        ("region_name", "RegionOne"),
        ("user_domain_name", "Default"),
        ("username", "glance"),
        ("www_authenticate_uri", "https://identity.example.com/v3"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v.to_owned()))
    .collect();
    assert_eq!(section, want);
}
