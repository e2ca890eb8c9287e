use serde_json::{Value, json};

use crate::admission::tests::{assert_create_table, oidc};

/// Explicit endpoints instead of the metadata document.
fn endpoints() -> Value {
    json!({"authorizationEndpoint": "https://idp/auth", "tokenEndpoint": "https://idp/token",
           "jwksURI": "https://idp/jwks"})
}

#[test]
fn the_oidc_block_refuses_bad_urls_injections_and_data_keys() {
    assert_create_table(
        oidc,
        &[
            (&[], &[]),
            (
                &[
                    ("/spec/oidc/issuer", json!("ftp://idp")),
                    ("/spec/oidc/providerMetadataURL", json!("ftp://idp/meta")),
                ],
                &[
                    "spec.oidc.issuer: Invalid value: \"ftp://idp\": url must use the http:// or https:// scheme",
                    "spec.oidc.providerMetadataURL: Invalid value: \"ftp://idp/meta\": url must use the http:// or https:// scheme",
                ],
            ),
            (
                &[("/spec/oidc/issuer", json!(""))],
                &["spec.oidc.issuer: Required value: issuer must be set"],
            ),
            (
                &[("/spec/oidc/endpoints", endpoints())],
                &[
                    "spec.oidc.endpoints: Invalid value: \"\": providerMetadataURL and endpoints are mutually exclusive",
                ],
            ),
            (
                &[("/spec/oidc/clientID", json!("key\"stone"))],
                &[
                    "spec.oidc.clientID: Invalid value: \"key\\\"stone\": value must not contain newline, carriage-return, or double-quote characters",
                ],
            ),
            (
                &[(
                    "/spec/oidc/scopes",
                    json!(["openid", "email\nOIDCSSLValidateServer Off"]),
                )],
                &[
                    "spec.oidc.scopes[1]: Invalid value: \"email\\nOIDCSSLValidateServer Off\": value must not contain newline, carriage-return, or double-quote characters",
                ],
            ),
            (
                &[
                    ("/spec/oidc/providerMetadataURL", Value::Null),
                    ("/spec/oidc/endpoints", endpoints()),
                    (
                        "/spec/oidc/endpoints/userinfoEndpoint",
                        json!("idp/userinfo"),
                    ),
                ],
                &[
                    "spec.oidc.endpoints.userinfoEndpoint: Invalid value: \"idp/userinfo\": url must use the http:// or https:// scheme",
                ],
            ),
            (
                &[
                    ("/spec/oidc/providerMetadataURL", Value::Null),
                    ("/spec/oidc/endpoints", endpoints()),
                    ("/spec/oidc/oauth2Introspection", json!({"enabled": true})),
                ],
                &[
                    "spec.oidc.endpoints.introspectionEndpoint: Required value: introspectionEndpoint must be set when oauth2Introspection is enabled with explicit endpoints",
                ],
            ),
            (
                &[
                    ("/spec/oidc/providerMetadataURL", Value::Null),
                    ("/spec/oidc/endpoints", endpoints()),
                    (
                        "/spec/oidc/endpoints/introspectionEndpoint",
                        json!("http://idp/introspect"),
                    ),
                    ("/spec/oidc/oauth2Introspection", json!({"enabled": true})),
                ],
                &[
                    "spec.oidc.endpoints.introspectionEndpoint: Invalid value: \"http://idp/introspect\": introspectionEndpoint must use https:// (mod_auth_openidc rejects http introspection endpoints)",
                ],
            ),
            (
                &[("/spec/oidc/clientSecretRef/key", json!("secret"))],
                &[
                    "spec.oidc.clientSecretRef.key: Invalid value: \"secret\": key must be empty: the client Secret's data key is fixed (\"clientSecret\")",
                ],
            ),
        ],
    );
}

#[test]
fn an_http_introspection_endpoint_passes_while_introspection_is_off() {
    assert_create_table(
        oidc,
        &[
            (
                &[
                    ("/spec/oidc/providerMetadataURL", Value::Null),
                    ("/spec/oidc/endpoints", endpoints()),
                    (
                        "/spec/oidc/endpoints/introspectionEndpoint",
                        json!("http://idp/introspect"),
                    ),
                    ("/spec/oidc/oauth2Introspection", json!({"enabled": false})),
                ],
                &[],
            ),
            (
                &[
                    ("/spec/oidc/providerMetadataURL", Value::Null),
                    ("/spec/oidc/endpoints", endpoints()),
                    (
                        "/spec/oidc/endpoints/introspectionEndpoint",
                        json!("http://idp/introspect"),
                    ),
                    ("/spec/oidc/oauth2Introspection", json!({"enabled": true})),
                ],
                &[
                    "spec.oidc.endpoints.introspectionEndpoint: Invalid value: \"http://idp/introspect\": introspectionEndpoint must use https:// (mod_auth_openidc rejects http introspection endpoints)",
                ],
            ),
        ],
    );
}
