use serde_json::{Value, json};

use crate::admission::tests::{Table, assert_create_table};

#[test]
fn replicas_images_and_key_counts_are_checked() {
    let digest = format!("sha256:{}", "a".repeat(64));
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[("/spec/deployment/replicas", json!(-1))],
            &["spec.deployment.replicas: Invalid value: -1: must be at least 1"],
        ),
        (
            &[("/spec/image/digest", json!(digest))],
            &[&format!(
                "spec.image: Invalid value: {{\"digest\":\"{digest}\",\"repository\":\
                 \"ghcr.io/c5c3/keystone\",\"tag\":\"2022.2\"}}: exactly one of image.tag or \
                 image.digest must be set"
            )],
        ),
        (
            &[("/spec/image/tag", Value::Null)],
            &[
                "spec.image: Invalid value: {\"repository\":\"ghcr.io/c5c3/keystone\"}: exactly \
               one of image.tag or image.digest must be set",
            ],
        ),
        (
            &[(
                "/spec/federation/proxyImage",
                json!({"repository": "", "tag": "1"}),
            )],
            &["spec.federation.proxyImage.repository: Required value"],
        ),
        (
            &[(
                "/spec/federation/proxyImage",
                json!({"repository": "httpd"}),
            )],
            &[
                "spec.federation.proxyImage: Invalid value: {\"repository\":\"httpd\"}: exactly \
               one of proxyImage.tag or proxyImage.digest must be set",
            ],
        ),
        (
            &[("/spec/fernet/maxActiveKeys", json!(2))],
            &["spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3"],
        ),
        (
            &[("/spec/credentialKeys/maxActiveKeys", json!(1))],
            &["spec.credentialKeys.maxActiveKeys: Invalid value: 1: must be at least 3"],
        ),
    ];
    assert_create_table(table);
}

#[test]
fn the_cache_and_the_database_are_checked() {
    let line_break = "must not contain a newline or carriage return: it is rendered verbatim \
                      into keystone.conf, where a line break starts a new option";
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[("/spec/cache/servers", json!(["mc:11211"]))],
            &[
                "spec.cache: Invalid value: {\"backend\":\"dogpile.cache.pymemcache\",\
               \"clusterRef\":{\"name\":\"memcached\"},\"servers\":[\"mc:11211\"]}: exactly one \
               of clusterRef or servers must be set",
            ],
        ),
        (
            &[("/spec/cache/clusterRef", Value::Null)],
            &[
                "spec.cache: Invalid value: {\"backend\":\"dogpile.cache.pymemcache\"}: exactly \
               one of clusterRef or servers must be set",
            ],
        ),
        (
            &[("/spec/cache/clusterRef/name", json!("mc\n[token]"))],
            &[&format!(
                "spec.cache.clusterRef.name: Invalid value: \"mc\\n[token]\": {line_break}"
            )],
        ),
        (
            &[
                ("/spec/cache/clusterRef", Value::Null),
                (
                    "/spec/cache/servers",
                    json!(["a:1", "b:2\rprovider = uuid"]),
                ),
            ],
            &[&format!(
                "spec.cache.servers[1]: Invalid value: \"b:2\\rprovider = uuid\": {line_break}"
            )],
        ),
        (
            &[("/spec/database/host", json!("db.example"))],
            &[
                "spec.database: Invalid value: {\"clusterRef\":{\"name\":\"mariadb\"},\
               \"credentialsMode\":\"Static\",\"database\":\"keystone\",\"host\":\"db.example\",\
               \"secretRef\":{\"name\":\"keystone-db\"}}: exactly one of clusterRef or host \
               must be set",
            ],
        ),
        (
            &[
                ("/spec/database/clusterRef", Value::Null),
                ("/spec/database/host", json!("db.example")),
                ("/spec/database/credentialsMode", json!("Dynamic")),
            ],
            &[
                "spec.database.credentialsMode: Invalid value: \"Dynamic\": credentialsMode \
               Dynamic requires clusterRef (managed mode)",
            ],
        ),
        (
            &[(
                "/spec/database/tls",
                json!({"mode": "strict",
                "caBundleSecretRef": {"name": "ca"}, "clientCertSecretRef": {"name": "c"}}),
            )],
            &[
                "spec.database.tls.mode: Unsupported value: \"strict\": supported values: \
               \"disabled\", \"prefer\", \"require\", \"verify-ca\", \"verify-full\"",
            ],
        ),
        (
            &[("/spec/database/tls", json!({"mode": "verify-full"}))],
            &[
                "spec.database.tls.caBundleSecretRef.name: Required value: must be set when \
                 database.tls is enabled",
                "spec.database.tls.clientCertSecretRef.name: Required value: must be set when \
                 database.tls is enabled",
            ],
        ),
        (&[("/spec/database/tls", json!({"mode": "disabled"}))], &[]),
    ];
    assert_create_table(table);
}

#[test]
fn references_plugins_policy_overrides_and_logging_are_checked() {
    let levels = "supported values: \"DEBUG\", \"INFO\", \"WARNING\", \"ERROR\", \"CRITICAL\"";
    let table: Table<'_> = &[
        (&[], &[]),
        (
            &[("/spec/secretStoreRef", json!({"kind": "Vault", "name": ""}))],
            &[
                "spec.secretStoreRef.name: Required value",
                "spec.secretStoreRef.kind: Unsupported value: \"Vault\": supported values: \
                 \"ClusterSecretStore\", \"SecretStore\"",
            ],
        ),
        (
            &[("/spec/targetClusterRef", json!({"name": ""}))],
            &["spec.targetClusterRef.name: Required value"],
        ),
        (
            &[(
                "/spec/plugins",
                json!([
                {"name": "ldap", "configSection": "ldap_pool"},
                {"name": "other", "configSection": "ldap_pool"}]),
            )],
            &["spec.plugins[1].configSection: Duplicate value: \"ldap_pool\""],
        ),
        (
            &[("/spec/policyOverrides", json!({}))],
            &[
                "spec.policyOverrides: Required value: at least one of rules or configMapRef \
               must be set",
            ],
        ),
        (
            &[(
                "/spec/policyOverrides",
                json!({"rules": {"": "role:admin", "identity:get_user": ""}}),
            )],
            &[
                "spec.policyOverrides.rules: Required value: policy rule name must not be empty",
                "spec.policyOverrides.rules[identity:get_user]: Invalid value: \"\": policy \
                 rule value must not be empty",
            ],
        ),
        (
            &[(
                "/spec/logging",
                json!({"format": "xml", "level": "TRACE",
                "perLoggerLevels": {"": "INFO", "sqlalchemy": "LOUD", "keystone": "DEBUG"}}),
            )],
            &[
                "spec.logging.format: Unsupported value: \"xml\": supported values: \"text\", \
                 \"json\"",
                &format!("spec.logging.level: Unsupported value: \"TRACE\": {levels}"),
                "spec.logging.perLoggerLevels: Invalid value: \"\": logger name must not be empty",
                &format!(
                    "spec.logging.perLoggerLevels[sqlalchemy]: Unsupported value: \"LOUD\": {levels}"
                ),
            ],
        ),
    ];
    assert_create_table(table);
}
