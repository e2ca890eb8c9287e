use super::*;
use crate::testing::{cluster, pass, pass_condition, secret, secret_text};

#[test]
fn the_connection_secret_carries_the_escaped_url_of_the_managed_user() {
    let cluster = cluster().with(secret(
        "cinder-db",
        &[("username", "ignored"), ("password", "p@ss:word")],
    ));
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(
        secret_text(&cluster, "cinder-db-connection", CONNECTION_KEY),
        "mysql+pymysql://cinder:p%40ss%3Aword@maria.openstack.svc:3306/cinder?charset=utf8"
    );
    assert_eq!(pass.db_connection_hash.len(), 64);
}

#[test]
fn a_password_missing_from_the_credentials_waits_naming_the_key() {
    let cluster = cluster().with(secret("cinder-db", &[("username", "cinder")]));
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), Some(SECRET_POLLING));
    assert_eq!(
        pass_condition(&pass, SECRETS_READY),
        (
            "False".into(),
            "WaitingForDBCredentials".into(),
            "Upstream database credentials Secret openstack/cinder-db missing key \"password\""
                .into()
        )
    );
}
