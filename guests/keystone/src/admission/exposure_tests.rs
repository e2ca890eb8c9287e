use serde_json::{Value, json};
use wasm_operator_sdk::admission::Operation;
use wasm_operator_sdk::testing::FakeCluster;

use crate::admission::tests::{Table, assert_create_table, keystone, request, with};
use crate::admission::validate_object;

fn dashboards(list: Value) -> (&'static str, Value) {
    ("/spec/federation/trustedDashboards", list)
}

#[test]
fn trusted_dashboards_must_be_distinct_http_urls_with_a_host() {
    let table: Table<'_> = &[
        (
            &[dashboards(json!([
                "https://horizon.example.com/auth/websso/"
            ]))],
            &[],
        ),
        (
            &[dashboards(json!([
                "https://a.example/",
                "https://b.example/",
                "https://a.example/"
            ]))],
            &["spec.federation.trustedDashboards[2]: Duplicate value: \"https://a.example/\""],
        ),
        (
            &[dashboards(json!(["https://a.example:https/"]))],
            &[
                "spec.federation.trustedDashboards[0]: Invalid value: \"https://a.example:https/\": \
               must be a valid URL: parse \"https://a.example:https/\": invalid port \":https\" \
               after host",
            ],
        ),
        (
            &[dashboards(json!(["ftp://a.example/"]))],
            &[
                "spec.federation.trustedDashboards[0]: Invalid value: \"ftp://a.example/\": scheme \
               must be http or https",
            ],
        ),
        (
            &[dashboards(json!(["https:///auth/websso/"]))],
            &[
                "spec.federation.trustedDashboards[0]: Invalid value: \"https:///auth/websso/\": \
               URL must include a host",
            ],
        ),
    ];
    assert_create_table(table);
}

#[test]
fn a_cleartext_trusted_dashboard_is_allowed_with_a_warning() {
    let table: &[(Value, &[&str])] = &[
        (json!(["https://a.example/"]), &[]),
        (
            json!(["https://a.example/", "http://b.example/websso/"]),
            &[
                "spec.federation.trustedDashboards[1] \"http://b.example/websso/\" uses http://: \
               Keystone posts the unscoped WebSSO token to this origin after every federated \
               login, so the token would travel in cleartext; use https://",
            ],
        ),
    ];
    for (list, expected) in table {
        let object = with(keystone(), &[dashboards(list.clone())]);
        let validated = validate_object(
            &FakeCluster::new(),
            &request(Operation::Create, object, None),
        );
        assert_eq!(validated.denial, None, "{list}");
        assert_eq!(validated.warnings, *expected, "{list}");
    }
}

#[test]
fn a_gateway_needs_its_names_and_a_matching_https_public_endpoint() {
    let gateway = |hostname: &str| {
        (
            "/spec/gateway",
            json!({"parentRef": {"name": "public"}, "hostname": hostname}),
        )
    };
    let endpoint = |url: &str| ("/spec/bootstrap/publicEndpoint", json!(url));
    let table: Table<'_> = &[
        (
            &[
                gateway("keystone.example.com"),
                endpoint("https://keystone.example.com:443/v3"),
            ],
            &[],
        ),
        (&[gateway("keystone.example.com")], &[]),
        (&[endpoint("http://anything.example/")], &[]),
        (
            &[(
                "/spec/gateway",
                json!({"parentRef": {"name": ""}, "hostname": ""}),
            )],
            &[
                "spec.gateway.hostname: Required value",
                "spec.gateway.parentRef.name: Required value",
            ],
        ),
        (
            &[
                gateway("keystone.example.com"),
                endpoint("http://keystone.example.com/v3"),
            ],
            &[
                "spec.bootstrap.publicEndpoint: Invalid value: \"http://keystone.example.com/v3\": \
               scheme must be https when spec.gateway is set (the Gateway's listener terminates \
               TLS)",
            ],
        ),
        (
            &[
                gateway("keystone.example.com"),
                endpoint("https://identity.example.com/v3"),
            ],
            &[
                "spec.bootstrap.publicEndpoint: Invalid value: \"https://identity.example.com/v3\": \
               host \"identity.example.com\" must equal spec.gateway.hostname \
               \"keystone.example.com\"",
            ],
        ),
        (
            &[
                gateway("keystone.example.com"),
                endpoint("https://keystone.example.com:x/"),
            ],
            &[
                "spec.bootstrap.publicEndpoint: Invalid value: \"https://keystone.example.com:x/\": \
               must be a valid URL: parse \"https://keystone.example.com:x/\": invalid port \
               \":x\" after host",
            ],
        ),
    ];
    assert_create_table(table);
}
