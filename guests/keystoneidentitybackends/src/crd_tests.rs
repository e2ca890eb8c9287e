use serde_json::{Value, json};

use super::*;

fn schema() -> Value {
    let crd = serde_json::to_value(crd()).expect("encodes");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

/// The committed CRD's schema (what the API server validates objects with).
fn committed_schema() -> Value {
    let crd: Value = serde_yaml_ng::from_str(crate::CRD_YAML).expect("the committed CRD parses");
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

#[test]
fn the_committed_crd_is_generated_from_the_types() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CRD_PATH);
    let generated = wasm_operator_sdk::crd::crd_yaml(
        &crd(),
        "guests/keystoneidentitybackends/src/types/",
        REGENERATE,
    );
    wasm_operator_sdk::crd::check_committed(crate::CRD_YAML, &generated, &path, REGENERATE);
}

#[test]
fn the_crd_is_structural() {
    assert_eq!(
        wasm_operator_sdk::crd::structural_errors(&schema()),
        Vec::<String>::new()
    );
}

#[test]
fn the_crd_carries_cobaltcore_s_cel_rules_and_immutables() {
    let schema = schema();
    let spec = &schema["properties"]["spec"];
    let rules = |pointer: &str| -> Vec<String> {
        spec.pointer(pointer)
            .and_then(|n| n.get("x-kubernetes-validations"))
            .and_then(Value::as_array)
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| r["message"].as_str().unwrap_or_default().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let table: &[(&str, &[&str])] = &[
        (
            "",
            &[
                "keystoneRef is immutable",
                "type is immutable",
                "exactly one backend block matching spec.type must be set (type LDAP requires spec.ldap)",
                "exactly one backend block matching spec.type must be set (type OIDC requires spec.oidc)",
                "exactly one backend block matching spec.type must be set (type SAML requires spec.saml)",
                "mappings are only supported on federation backends (type OIDC or SAML)",
                "groups are only supported on federation backends (type OIDC or SAML)",
                "extraOptions carries [ldap] section options and is only supported on type LDAP",
            ],
        ),
        (
            "/properties/domain/properties/name",
            &[
                "domain.name is immutable",
                "the Default domain hosts the SQL-backed service users and the bootstrap admin and must never be backed by an external identity backend",
            ],
        ),
        (
            "/properties/domain/properties/mode",
            &["domain.mode is immutable"],
        ),
        (
            "/properties/extraOptions",
            &["each extraOptions key must be <=256 characters and each value <=1024 characters"],
        ),
        (
            "/properties/oidc",
            &["providerMetadataURL and endpoints are mutually exclusive"],
        ),
        (
            "/properties/saml/properties/idpMetadata",
            &["exactly one of inline, secretRef, or url must be set"],
        ),
        (
            "/properties/groups/items/properties/roleAssignments/items",
            &["exactly one of project or domain must be set"],
        ),
    ];
    for (pointer, expected) in table {
        assert_eq!(rules(pointer), *expected, "{pointer}");
    }
    // deletionPolicy may change at teardown time.
    assert_eq!(
        rules("/properties/domain/properties/deletionPolicy"),
        Vec::<String>::new()
    );
}

#[test]
fn the_crd_carries_the_enums_defaults_and_bounds_of_section_3_2() {
    let schema = schema();
    let spec = "/properties/spec/properties";
    let table: &[(&str, &str, Value)] = &[
        ("/type", "enum", json!(["LDAP", "OIDC", "SAML"])),
        ("/keystoneRef/properties/name", "minLength", json!(1)),
        ("/domain/properties/name", "maxLength", json!(64)),
        (
            "/domain/properties/name",
            "pattern",
            json!("^[A-Za-z0-9][A-Za-z0-9_.-]*$"),
        ),
        (
            "/domain/properties/mode",
            "enum",
            json!(["Manage", "Adopt"]),
        ),
        ("/domain/properties/mode", "default", json!("Manage")),
        (
            "/domain/properties/deletionPolicy",
            "enum",
            json!(["Retain", "Delete"]),
        ),
        (
            "/domain/properties/deletionPolicy",
            "default",
            json!("Retain"),
        ),
        ("/domain/properties/description", "maxLength", json!(1024)),
        ("/mappings", "maxItems", json!(32)),
        ("/groups", "maxItems", json!(32)),
        ("/extraOptions", "maxProperties", json!(32)),
        ("/ldap/properties/url", "pattern", json!("^ldaps?://")),
        ("/ldap/properties/url", "maxLength", json!(512)),
        ("/ldap/properties/suffix", "minLength", json!(1)),
        (
            "/ldap/properties/users/properties/treeDN",
            "maxLength",
            json!(512),
        ),
        (
            "/ldap/properties/users/properties/filter",
            "maxLength",
            json!(1024),
        ),
        (
            "/ldap/properties/groups/properties/memberAttribute",
            "maxLength",
            json!(256),
        ),
        ("/ldap/properties/readOnly", "default", json!(true)),
        (
            "/ldap/properties/pool/properties/size",
            "minimum",
            json!(1.0),
        ),
        ("/oidc/properties/issuer", "pattern", json!("^https?://")),
        ("/oidc/properties/clientID", "maxLength", json!(256)),
        ("/oidc/properties/protocolID", "default", json!("openid")),
        (
            "/oidc/properties/protocolID",
            "pattern",
            json!("^[A-Za-z0-9_-]+$"),
        ),
        (
            "/oidc/properties/identityProviderName",
            "maxLength",
            json!(64),
        ),
        (
            "/oidc/properties/remoteIDAttribute",
            "default",
            json!("HTTP_OIDC_ISS"),
        ),
        (
            "/oidc/properties/scopes",
            "default",
            json!(["openid", "email", "profile"]),
        ),
        ("/oidc/properties/scopes", "maxItems", json!(16)),
        ("/oidc/properties/responseType", "default", json!("code")),
        (
            "/oidc/properties/sessionType",
            "enum",
            json!(["client-cookie", "client-cookie-persistent"]),
        ),
        (
            "/oidc/properties/sessionType",
            "default",
            json!("client-cookie"),
        ),
        (
            "/oidc/properties/stateInputHeaders",
            "enum",
            json!(["none", "user-agent", "x-forwarded-for", "both"]),
        ),
        (
            "/oidc/properties/stateInputHeaders",
            "default",
            json!("none"),
        ),
        (
            "/oidc/properties/endpoints/properties/jwksURI",
            "pattern",
            json!("^https?://"),
        ),
        ("/saml/properties/idpEntityID", "maxLength", json!(512)),
        ("/saml/properties/protocolID", "default", json!("mapped")),
        (
            "/saml/properties/remoteIDAttribute",
            "default",
            json!("HTTP_MELLON_IDP"),
        ),
        ("/saml/properties/forwardAttributes", "maxItems", json!(32)),
        (
            "/saml/properties/forwardAttributes/items",
            "pattern",
            json!("^[A-Za-z0-9_]+$"),
        ),
        (
            "/saml/properties/idpMetadata/properties/url",
            "pattern",
            json!("^https://"),
        ),
        (
            "/saml/properties/idpMetadata/properties/inline",
            "maxLength",
            json!(65536),
        ),
        ("/mappings/items/properties/local", "minItems", json!(1)),
        (
            "/mappings/items/properties/remote/items/properties/type",
            "maxLength",
            json!(256),
        ),
        (
            "/mappings/items/properties/local/items/properties/user/properties/type",
            "enum",
            json!(["ephemeral", "local"]),
        ),
        ("/groups/items/properties/name", "maxLength", json!(128)),
        (
            "/groups/items/properties/roleAssignments",
            "maxItems",
            json!(32),
        ),
    ];
    for (path, keyword, expected) in table {
        let pointer = format!("{spec}{path}");
        let node = schema
            .pointer(&pointer)
            .unwrap_or_else(|| panic!("no {pointer}"));
        assert_eq!(node.get(*keyword), Some(expected), "{path} {keyword}");
    }
    let required = |pointer: &str| schema.pointer(pointer).cloned().unwrap_or_default();
    let table: &[(&str, Value)] = &[
        (
            "/properties/spec/required",
            json!(["type", "domain", "keystoneRef"]),
        ),
        (
            "/properties/spec/properties/domain/required",
            json!(["name"]),
        ),
        (
            "/properties/spec/properties/ldap/required",
            json!(["bindCredentialsSecretRef", "suffix", "url", "users"]),
        ),
        (
            "/properties/spec/properties/oidc/required",
            json!(["clientID", "clientSecretRef", "issuer"]),
        ),
        (
            "/properties/spec/properties/oidc/properties/endpoints/required",
            json!(["authorizationEndpoint", "jwksURI", "tokenEndpoint"]),
        ),
        (
            "/properties/spec/properties/saml/required",
            json!(["idpEntityID", "idpMetadata"]),
        ),
        (
            "/properties/status/properties/conditions/x-kubernetes-list-map-keys",
            json!(["type"]),
        ),
    ];
    for (pointer, expected) in table {
        assert_eq!(&required(pointer), expected, "{pointer}");
    }
}

#[test]
fn the_crd_prints_ready_domain_keystone_and_age() {
    let crd = serde_json::to_value(crd()).expect("encodes");
    let columns: Vec<(&str, &str)> = crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| Some((c["name"].as_str()?, c["jsonPath"].as_str()?)))
        .collect();
    assert_eq!(
        columns,
        [
            ("Ready", ".status.conditions[?(@.type=='Ready')].status"),
            ("Domain", ".spec.domain.name"),
            ("Keystone", ".spec.keystoneRef.name"),
            ("Age", ".metadata.creationTimestamp"),
        ]
    );
}

#[test]
fn the_committed_schema_refuses_what_the_facts_bound() {
    let schema = committed_schema();
    let valid = json!({"apiVersion": "keystone.openstack.c5c3.io/v1alpha1",
        "kind": "KeystoneIdentityBackend", "metadata": {"name": "corp"},
        "spec": {"keystoneRef": {"name": "keystone"}, "domain": {"name": "corp", "mode": "Manage"}, "type": "LDAP",
                 "ldap": {"url": "ldaps://ldap", "bindCredentialsSecretRef": {"name": "bind"},
                          "suffix": "dc=x", "users": {"treeDN": "ou=people,dc=x"}}}});
    // (pointer under spec, value, the error expected)
    let table: &[(&str, Value, Option<&str>)] = &[
        ("/type", json!("LDAP"), None),
        (
            "/type",
            json!("Kerberos"),
            Some(
                "spec.type: Unsupported value: \"Kerberos\": supported values: \"LDAP\", \"OIDC\", \"SAML\"",
            ),
        ),
        (
            "/domain/name",
            json!("-corp"),
            Some(
                "spec.domain.name: Invalid value: \"-corp\": spec.domain.name in body should match '^[A-Za-z0-9][A-Za-z0-9_.-]*$'",
            ),
        ),
        (
            "/domain/mode",
            json!("Take"),
            Some(
                "spec.domain.mode: Unsupported value: \"Take\": supported values: \"Manage\", \"Adopt\"",
            ),
        ),
        (
            "/ldap/url",
            json!("http://ldap"),
            Some(
                "spec.ldap.url: Invalid value: \"http://ldap\": spec.ldap.url in body should match '^ldaps?://'",
            ),
        ),
    ];
    for (pointer, value, expected) in table {
        let mut object = valid.clone();
        *object
            .pointer_mut(&format!("/spec{pointer}"))
            .unwrap_or_else(|| panic!("no {pointer}")) = value.clone();
        let errors: Vec<String> = wasm_operator_sdk::crd::validate(&schema, &object)
            .errors()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            errors,
            expected.iter().map(|e| (*e).to_owned()).collect::<Vec<_>>(),
            "{pointer}"
        );
    }
}

/// The paths of the properties under `node` that their object requires and that carry a
/// `default`.
fn required_defaults(node: &Value, path: &str, found: &mut Vec<String>) {
    let required = node.get("required").and_then(Value::as_array);
    if let Some(properties) = node.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            let at = format!("{path}.{name}");
            let is_required = required.is_some_and(|r| r.iter().any(|n| n == name));
            if is_required && property.get("default").is_some() {
                found.push(at.clone());
            }
            required_defaults(property, &at, found);
        }
    }
    if let Some(items) = node.get("items") {
        required_defaults(items, &format!("{path}[]"), found);
    }
}

#[test]
fn no_required_field_has_a_default_the_api_server_would_fill_it_with() {
    let mut found = Vec::new();
    required_defaults(&committed_schema(), "", &mut found);
    assert_eq!(found, Vec::<String>::new());
    // The documented defaults of optional fields stay.
    let schema = committed_schema();
    assert_eq!(
        schema.pointer("/properties/spec/properties/domain/properties/mode/default"),
        Some(&json!("Manage"))
    );
}
