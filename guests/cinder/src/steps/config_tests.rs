use super::*;
use crate::testing::{cluster, pass, secret_text};

#[test]
fn cinder_conf_carries_the_api_port_and_the_keystone_client_and_no_credential() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(
        pass.config_secret.starts_with("cinder-config-"),
        "{}",
        pass.config_secret
    );
    let rendered = secret_text(&cluster, &pass.config_secret, CINDER_CONF);
    for line in [
        "[DEFAULT]\nosapi_volume_listen_port = 8776\n",
        "auth_url = http://keystone.openstack.svc:5000/v3\n",
        "username = cinder\n",
        "[oslo_concurrency]\nlock_path = /var/lib/cinder/tmp\n",
    ] {
        assert!(rendered.contains(line), "{line:?} in\n{rendered}");
    }
    for secret in ["db-pw", "svc-pw"] {
        assert!(!rendered.contains(secret), "{secret} rendered");
    }
}
