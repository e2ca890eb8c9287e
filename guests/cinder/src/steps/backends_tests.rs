use serde_json::json;

use super::*;
use crate::testing::{backend, cluster, pass, pass_condition, secret, secret_text};

fn state(
    cluster: &wasm_operator_sdk::testing::FakeCluster,
) -> ((String, String, String), Vec<String>) {
    let mut pass = pass(cluster);
    assert_eq!(
        run(&mut pass).expect("runs"),
        None,
        "the step never requeues"
    );
    let names = pass.backends.iter().map(|b| b.name.clone()).collect();
    (pass_condition(&pass, BACKENDS_READY), names)
}

fn t(status: &str, reason: &str, message: &str) -> (String, String, String) {
    (status.into(), reason.into(), message.into())
}

#[test]
fn backends_ready_says_none_waiting_or_all_projected() {
    // (backends as (name, credential-ready), condition, projected)
    type Row<'a> = (Vec<(&'a str, bool)>, (String, String, String), Vec<&'a str>);
    let table: Vec<Row<'_>> = vec![
        (
            vec![],
            t(
                "True",
                "NoBackends",
                "No CinderBackend is attached; volume services are not rendered",
            ),
            vec![],
        ),
        (
            vec![("a", true), ("b", false), ("c", false)],
            t("False", "WaitingForBackends", "Waiting for backends: b, c"),
            vec!["a"],
        ),
        (
            vec![("b", true), ("a", true)],
            t(
                "True",
                "AllBackendsProjected",
                "All 2 attached backends are projected: a, b",
            ),
            vec!["a", "b"],
        ),
    ];
    for (backends, want, projected) in table {
        let mut cluster = cluster();
        for (name, ready) in &backends {
            cluster = cluster.with(backend(name, *ready));
        }
        let (condition, names) = state(&cluster);
        assert_eq!(condition, want, "{backends:?}");
        assert_eq!(names, projected, "{backends:?}");
    }
}

#[test]
fn an_nfs_backend_renders_its_section_shares_and_overlay_into_its_own_secret() {
    let mut nfs = backend("fast", true);
    nfs["spec"]["imageVolumeCache"] = json!({"enabled": true, "maxSizeGB": 100});
    nfs["spec"]["extraOptions"] = json!({"nfs_mount_attempts": "5", "volume_driver": "evil"});
    let cluster = cluster().with(nfs);
    let mut pass = pass(&cluster);
    run(&mut pass).expect("runs");
    let secret = pass.backends[0].secret.clone();
    assert!(secret.starts_with("cinder-backend-fast-"), "{secret}");
    assert_eq!(
        secret_text(&cluster, &secret, BACKEND_CONF),
        "[fast]\n\
         backend_host = cinder\n\
         image_volume_cache_enabled = true\n\
         image_volume_cache_max_size_gb = 100\n\
         nas_secure_file_operations = true\n\
         nas_secure_file_permissions = true\n\
         nfs_mount_attempts = 5\n\
         nfs_mount_options = nfsvers=4.1,soft,timeo=30,retrans=2\n\
         nfs_mount_point_base = /var/lib/cinder/mnt\n\
         nfs_qcow2_volumes = false\n\
         nfs_shares_config = /etc/cinder/backends.conf.d/fast.shares\n\
         nfs_snapshot_support = false\n\
         nfs_sparsed_volumes = true\n\
         volume_backend_name = fast\n\
         volume_driver = cinder.volume.drivers.nfs.NfsDriver\n"
    );
    assert_eq!(
        secret_text(&cluster, &secret, SHARES),
        "nfs.example.com:/exports/fast\n"
    );
    assert_eq!(
        secret_text(&cluster, &secret, VOLUME_CONF),
        "[DEFAULT]\nenabled_backends = fast\n"
    );
}

#[test]
fn an_rbd_backend_renders_the_ceph_files_from_its_key_secret() {
    let mut rbd = backend("ceph", true);
    rbd["spec"] = json!({"cinderRef": {"name": "cinder"}, "type": "RBD",
        "rbd": {"pool": "volumes", "user": "cinder", "monitors": ["mon1:6789"],
                "keySecretRef": {"name": "ceph-key"},
                "secretUUID": "457eb676-33da-42ec-9a8c-9293d545c337"}});
    let cluster = cluster()
        .with(rbd)
        .with(secret("ceph-key", &[("userKey", "AQBvalidkey==\n")]));
    let mut pass = pass(&cluster);
    run(&mut pass).expect("runs");
    let secret = pass.backends[0].secret.clone();
    let conf = secret_text(&cluster, &secret, BACKEND_CONF);
    for line in [
        "rbd_ceph_conf = /etc/ceph/ceph.conf",
        "rbd_cluster_name = ceph",
        "rbd_pool = volumes",
        "rbd_secret_uuid = 457eb676-33da-42ec-9a8c-9293d545c337",
        "rbd_user = cinder",
        "volume_driver = cinder.volume.drivers.rbd.RBDDriver",
    ] {
        assert!(conf.contains(line), "{line} in\n{conf}");
    }
    assert_eq!(
        secret_text(&cluster, &secret, KEYRING),
        "[client.cinder]\n\tkey = AQBvalidkey==\n"
    );
    assert!(secret_text(&cluster, &secret, CEPH_CONF).contains("mon_host = mon1:6789"));
}

#[test]
fn a_faulty_backend_is_skipped_with_a_warning_and_the_others_projected() {
    let mut no_block = backend("b", true);
    no_block["spec"]["type"] = json!("RBD");
    let mut injected = backend("b", true);
    injected["spec"]["nfs"]["path"] = json!("/x\n/evil");
    let mut no_key = backend("b", true);
    no_key["spec"] = json!({"cinderRef": {"name": "cinder"}, "type": "RBD",
        "rbd": {"pool": "v", "user": "u", "monitors": ["m"], "keySecretRef": {"name": "k"}}});
    let table = [
        (no_block, "backend b has type RBD but no rbd block"),
        (
            injected,
            "an option name or value contains a newline or carriage-return character",
        ),
        (no_key, "Secret openstack/k has no key \"userKey\""),
    ];
    for (faulty, why) in table {
        let cluster = cluster().with(backend("a", true)).with(faulty);
        let (condition, names) = state(&cluster);
        assert_eq!(
            condition,
            t("False", "WaitingForBackends", "Waiting for backends: b")
        );
        assert_eq!(names, ["a"], "{why}");
        let events = cluster.events();
        assert_eq!(events.len(), 1, "{why}: {events:?}");
        assert_eq!(events[0].1.reason, "CinderBackendSkipped");
        assert_eq!(events[0].1.note, format!("Skipping backend b: {why}"));
    }
}

#[test]
fn the_secrets_of_a_backend_no_longer_projected_are_swept_whole() {
    let cluster = cluster().with(backend("a", true)).with(backend("b", true));
    state(&cluster);
    let of = |name: &str| -> Vec<String> {
        cluster
            .names("Secret")
            .into_iter()
            .filter(|s| s.starts_with(&format!("cinder-backend-{name}-")))
            .collect()
    };
    assert_eq!(of("b").len(), 1);
    cluster.change("CinderBackend", "b", |o| {
        o["status"]["conditions"][0]["status"] = json!("False");
    });
    state(&cluster);
    assert!(of("b").is_empty(), "{:?}", cluster.names("Secret"));
    assert_eq!(of("a").len(), 1);
}

#[test]
fn a_converged_backends_step_writes_nothing() {
    let cluster = cluster().with(backend("a", true));
    state(&cluster);
    cluster.clear_calls();
    state(&cluster);
    assert!(cluster.write_log().is_empty(), "{:?}", cluster.write_log());
}
