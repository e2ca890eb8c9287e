use super::*;
use crate::testing::{cluster, cluster_with_store, pass, secret_text};

#[test]
fn a_valid_projection_renders_barbican_conf_with_the_store_sections_and_no_secret_id() {
    let cluster = cluster_with_store("vault");
    let mut pass = pass(&cluster);
    crate::steps::secret_stores::run(&mut pass).expect("stores");
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert!(
        pass.config_secret.starts_with("barbican-config-"),
        "{}",
        pass.config_secret
    );
    let rendered = secret_text(&cluster, &pass.config_secret, BARBICAN_CONF);
    for line in [
        "[DEFAULT]\nbind_port = 9311\n",
        "[secretstore]\nenable_multiple_secret_stores = true\nstores_lookup_suffix = vault\n",
        "[secretstore:vault]\nglobal_default = True\nsecret_store_plugin = vault_plugin\n",
        "approle_role_id = role-1234\n",
        "vault_url = https://vault.example.com:8200\n",
        "auth_url = http://keystone.openstack.svc:5000/v3\n",
        "username = barbican\n",
    ] {
        assert!(rendered.contains(line), "{line:?} in\n{rendered}");
    }
    for secret in ["secret-5678", "db-pw", "svc-pw"] {
        assert!(!rendered.contains(secret), "{secret} rendered");
    }
    assert!(secret_text(&cluster, &pass.config_secret, PASTE_INI).contains("[app:apiapp]"));
    assert_eq!(
        secret_text(&cluster, &pass.config_secret, POLICY_YAML),
        "{}\n"
    );
}

#[test]
fn an_invalid_projection_renders_nothing() {
    let cluster = cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(pass.config_secret, "");
    assert!(
        cluster
            .names("Secret")
            .iter()
            .all(|n| !n.starts_with("barbican-config-"))
    );
}
