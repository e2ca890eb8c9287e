use super::*;
use crate::testing::{NS, pass, pass_condition, secret};

#[test]
fn each_missing_credential_holds_secrets_ready_with_its_reason() {
    // (the Secrets present, the reason)
    let db = || {
        secret(
            "cinder-db",
            &[("username", "cinder"), ("password", "db-pw")],
        )
    };
    let service = || secret("cinder-service", &[("password", "svc-pw")]);
    let table = [
        (vec![service()], "WaitingForDBCredentials"),
        (vec![db()], "WaitingForServiceUserCredentials"),
        (
            vec![secret("cinder-db", &[("username", "cinder")]), service()],
            "WaitingForDBCredentials",
        ),
    ];
    for (secrets, reason) in table {
        let mut cluster =
            wasm_operator_sdk::testing::FakeCluster::new().with(crate::testing::cinder());
        for s in secrets {
            cluster = cluster.with(s);
        }
        let mut pass = pass(&cluster);
        assert_eq!(
            run(&mut pass).expect("runs"),
            Some(SECRET_POLLING),
            "{reason}"
        );
        let (status, got, message) = pass_condition(&pass, SECRETS_READY);
        assert_eq!(
            (status.as_str(), got.as_str()),
            ("False", reason),
            "{message}"
        );
        assert!(message.contains(NS), "{message}");
    }
    let cluster = crate::testing::cluster();
    let mut pass = pass(&cluster);
    assert_eq!(run(&mut pass).expect("runs"), None);
    assert_eq!(pass_condition(&pass, SECRETS_READY).1, "SecretsAvailable");
}
