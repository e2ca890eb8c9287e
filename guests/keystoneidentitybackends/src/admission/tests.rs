//! The admission tests' fixtures — a valid backend of each type, requests, a table runner —
//! and the tests that write backends through `FakeCluster::admitting`, as the API server
//! calls the webhooks.

use serde_json::{Value, json};
use wasm_operator_sdk::admission::{AdmissionRequest, Operation, UserInfo, Validated};
use wasm_operator_sdk::testing::FakeCluster;
use wasm_operator_sdk::{ApiError, Cluster, ClusterExt, KindRef, ObjectRef};

use super::validate_object;
use crate::KeystoneIdentityBackendReconciler;
use crate::types::{
    API_VERSION, DeletionPolicy, DomainMode, KIND, KeystoneIdentityBackend, PLURAL,
};

/// The namespace of the fixtures.
pub(super) const NAMESPACE: &str = "openstack";

/// The backend kind.
pub(super) fn kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: PLURAL.into(),
        namespaced: true,
    }
}

/// A backend `name` of `spec` in [`NAMESPACE`].
pub(super) fn backend(name: &str, spec: Value) -> Value {
    json!({"apiVersion": API_VERSION, "kind": KIND,
           "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec})
}

/// A valid LDAP backend `corp` of Keystone `keystone`, as stored after defaulting.
pub(super) fn ldap() -> Value {
    backend(
        "corp",
        json!({
            "keystoneRef": {"name": "keystone"},
            "domain": {"name": "corp", "mode": "Manage", "deletionPolicy": "Retain"},
            "type": "LDAP",
            "ldap": {
                "url": "ldaps://ldap.example.com",
                "bindCredentialsSecretRef": {"name": "corp-bind"},
                "suffix": "dc=example,dc=com",
                "users": {"treeDN": "ou=people,dc=example,dc=com", "objectClass": "inetOrgPerson"},
                "groups": {"treeDN": "ou=groups,dc=example,dc=com"},
                "readOnly": true,
                "tls": {"caBundleSecretRef": {"name": "corp-ca"}}
            },
            "extraOptions": {"page_size": "100"}
        }),
    )
}

/// A valid OIDC backend `sso`, as stored after defaulting.
pub(super) fn oidc() -> Value {
    backend(
        "sso",
        json!({
            "keystoneRef": {"name": "keystone"},
            "domain": {"name": "sso", "mode": "Manage", "deletionPolicy": "Retain"},
            "type": "OIDC",
            "oidc": {
                "issuer": "https://idp.example.com/realms/cloud",
                "providerMetadataURL": "https://idp.example.com/realms/cloud/.well-known/openid-configuration",
                "clientID": "keystone",
                "clientSecretRef": {"name": "sso-client"},
                "protocolID": "openid",
                "identityProviderName": "sso",
                "remoteIDAttribute": "HTTP_OIDC_ISS",
                "scopes": ["openid", "email", "profile"],
                "responseType": "code",
                "sessionType": "client-cookie",
                "stateInputHeaders": "none"
            },
            "mappings": [{
                "local": [{"user": {"name": "{0}"}, "group": {"name": "members", "domain": {"name": "sso"}}}],
                "remote": [{"type": "HTTP_OIDC_PREFERRED_USERNAME"}]
            }],
            "groups": [{"name": "members", "roleAssignments": [
                {"role": "member", "project": {"name": "demo"}},
                {"role": "reader", "domain": true}
            ]}]
        }),
    )
}

/// A valid SAML backend `saml`, as stored after defaulting.
pub(super) fn saml() -> Value {
    backend(
        "saml",
        json!({
            "keystoneRef": {"name": "keystone"},
            "domain": {"name": "saml", "mode": "Manage", "deletionPolicy": "Retain"},
            "type": "SAML",
            "saml": {
                "idpEntityID": "https://idp.example.com/saml",
                "idpMetadata": {"url": "https://idp.example.com/saml/metadata"},
                "protocolID": "mapped",
                "identityProviderName": "saml",
                "remoteIDAttribute": "HTTP_MELLON_IDP",
                "forwardAttributes": ["uid", "groups"]
            },
            "mappings": [{
                "local": [{"user": {"name": "{0}"}}],
                "remote": [{"type": "HTTP_MELLON_UID"}]
            }]
        }),
    )
}

/// `object` with each `(pointer, value)` set, creating objects on the way; a `null` value
/// removes the field.
pub(super) fn with(mut object: Value, changes: &[(&str, Value)]) -> Value {
    for (pointer, value) in changes {
        let (parent, last) = pointer.rsplit_once('/').expect("a pointer");
        let mut node = &mut object;
        for part in parent.split('/').skip(1) {
            node = match node {
                Value::Array(items) => &mut items[part.parse::<usize>().expect("an index")],
                Value::Object(map) => map.entry(part.to_owned()).or_insert_with(|| json!({})),
                other => panic!("no container at {part}: {other}"),
            };
        }
        let map = node.as_object_mut().expect("an object at the parent");
        if value.is_null() {
            map.remove(last);
        } else {
            map.insert(last.to_owned(), value.clone());
        }
    }
    object
}

/// An admission request of `operation` for `object` (`old` the stored one).
pub(super) fn request(operation: Operation, object: Value, old: Option<Value>) -> AdmissionRequest {
    let name = object["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    AdmissionRequest {
        operation,
        kind: kind(),
        namespace: Some(NAMESPACE.into()),
        name,
        object: Some(object),
        old_object: old,
        user: UserInfo::default(),
        dry_run: false,
    }
}

/// The field errors of a validation, as `field: message`.
pub(super) fn field_errors(validated: &Validated) -> Vec<String> {
    validated
        .denial
        .iter()
        .flat_map(|d| d.fields.iter().map(ToString::to_string))
        .collect()
}

/// The field errors validating `object` on create finds, with `siblings` stored.
pub(super) fn create_errors_among(siblings: &[Value], object: Value) -> Vec<String> {
    let cluster = siblings
        .iter()
        .fold(FakeCluster::new(), |c, s| c.with(s.clone()));
    field_errors(&validate_object(
        &cluster,
        &request(Operation::Create, object, None),
    ))
}

/// Changes to a backend: `(JSON pointer, value)`; a `null` value removes the field.
pub(super) type Changes<'a> = &'a [(&'a str, Value)];
/// Rows of `(changes, the field errors expected)`; the first row is the valid one.
pub(super) type Table<'a> = &'a [(Changes<'a>, &'a [&'a str])];

/// Rows of a table built at run time: `(changes, the field errors expected)`.
pub(super) type Rows<'a> = Vec<(Vec<(&'a str, Value)>, Vec<&'a str>)>;

/// [`assert_create_table`] over [`Rows`].
pub(super) fn assert_create_rows(base: fn() -> Value, rows: &Rows<'_>) {
    let table: Vec<(Changes<'_>, &[&str])> = rows
        .iter()
        .map(|(c, e)| (c.as_slice(), e.as_slice()))
        .collect();
    assert_create_table(base, &table);
}

/// Runs a table of `(changes to base, the field errors expected)` on create. Exactly one
/// row is valid, and every error names a field under `spec`.
pub(super) fn assert_create_table(base: fn() -> Value, table: Table<'_>) {
    let valid = table.iter().filter(|(_, e)| e.is_empty()).count();
    assert_eq!(valid, 1, "a table has exactly one valid row");
    for (changes, expected) in table {
        let got = create_errors_among(&[], with(base(), changes));
        assert_eq!(got, *expected, "{changes:?}");
        assert!(got.iter().all(|e| e.starts_with("spec")), "{got:?}");
    }
}

fn stored(name: &str) -> ObjectRef {
    ObjectRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        namespace: Some(NAMESPACE.into()),
        name: name.into(),
    }
}

#[test]
fn a_backend_written_through_admission_is_stored_with_its_defaults() {
    let cluster = FakeCluster::new().admitting::<KeystoneIdentityBackendReconciler>();
    let minimal = with(
        oidc(),
        &[
            ("/spec/domain", json!({"name": "sso"})),
            (
                "/spec/oidc",
                json!({"issuer": "https://idp.example.com/realms/cloud/",
                                  "clientID": "keystone",
                                  "clientSecretRef": {"name": "sso-client"}}),
            ),
        ],
    );
    cluster.create(&minimal).expect("admitted");
    let written: KeystoneIdentityBackend = cluster
        .get_typed(Some(NAMESPACE), "sso")
        .expect("reads")
        .expect("stored");
    let spec = &written.spec;
    assert_eq!(
        (spec.domain.mode, spec.domain.deletion_policy),
        (DomainMode::Manage, DeletionPolicy::Retain)
    );
    let oidc = spec.oidc.as_ref().expect("an oidc block");
    assert_eq!(
        (
            oidc.protocol_id.as_str(),
            oidc.identity_provider_name.as_str(),
            oidc.remote_id_attribute.as_str(),
            oidc.response_type.as_str(),
            oidc.provider_metadata_url.as_str(),
        ),
        (
            "openid",
            "sso",
            "HTTP_OIDC_ISS",
            "code",
            "https://idp.example.com/realms/cloud/.well-known/openid-configuration"
        )
    );
    assert_eq!(oidc.scopes, ["openid", "email", "profile"]);
    let raw = cluster.object(&stored("sso")).expect("stored");
    assert_eq!(raw["spec"]["oidc"]["sessionType"], "client-cookie");
    assert_eq!(raw["spec"]["oidc"]["stateInputHeaders"], "none");
}

#[test]
fn a_second_saml_backend_of_a_keystone_is_refused_with_kube_apiserver_s_invalid_message() {
    let cluster = FakeCluster::new().admitting::<KeystoneIdentityBackendReconciler>();
    cluster
        .create(&saml())
        .expect("the first SAML backend is admitted");
    let second = with(
        saml(),
        &[
            ("/metadata/name", json!("saml2")),
            ("/spec/domain/name", json!("saml2")),
            ("/spec/saml/identityProviderName", json!("saml2")),
        ],
    );
    let refused = cluster.create(&second).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "KeystoneIdentityBackend.keystone.openstack.c5c3.io \"saml2\" is invalid: \
             spec.saml: Invalid value: \"SAML\": at most one SAML backend per Keystone \
             \"keystone\" is supported (the mod_auth_mellon SP configuration projects onto a \
             shared /v3 parent Location); KeystoneIdentityBackend \"saml\" already provides one"
                .into()
        )
    );
    assert!(cluster.object(&stored("saml2")).is_none());
}

#[test]
fn an_update_of_an_immutable_field_is_refused_and_others_pass() {
    let cluster = FakeCluster::new().admitting::<KeystoneIdentityBackendReconciler>();
    cluster.create(&ldap()).expect("admitted");
    let described = with(
        ldap(),
        &[("/spec/domain/description", json!("Corporate directory"))],
    );
    cluster
        .apply(&described, None)
        .expect("a mutable field changes");
    let stored_description =
        cluster.object(&stored("corp")).expect("stored")["spec"]["domain"]["description"].clone();
    assert_eq!(stored_description, json!("Corporate directory"));
    let renamed = with(ldap(), &[("/spec/domain/name", json!("corp2"))]);
    let refused = cluster.apply(&renamed, None).expect_err("refused");
    assert_eq!(
        refused,
        ApiError::Invalid(
            "KeystoneIdentityBackend.keystone.openstack.c5c3.io \"corp\" is invalid: \
             spec.domain.name: Invalid value: \"string\": domain.name is immutable"
                .into()
        )
    );
}

#[test]
fn a_backend_is_deleted_without_validation() {
    let cluster = FakeCluster::new().admitting::<KeystoneIdentityBackendReconciler>();
    cluster.create(&ldap()).expect("admitted");
    cluster
        .delete(&stored("corp"), wasm_operator_sdk::Propagation::Background)
        .expect("deleted");
    assert!(cluster.object(&stored("corp")).is_none());
}
