//! The CRD YAML in `crds/external/` parses, serves the group, version, kind, plural and
//! scope the Rust types name, and declares every spec field those types serialize.

use k8s_openapi::Resource;
use serde::Deserialize;
use serde_json::{Value, json};

use super::StatusCondition;
use super::certmanager::{Certificate, CertificatePrivateKey, CertificateSpec, IssuerRef};
use super::eso::{
    ClusterSecretStore, ExternalSecret, ExternalSecretData, ExternalSecretDataRemoteRef,
    ExternalSecretSpec, ExternalSecretTarget, PushSecret, PushSecretData, PushSecretMatch,
    PushSecretRemoteRef, PushSecretSecret, PushSecretSelector, PushSecretSpec, PushSecretStoreRef,
    SecretStore, SecretStoreRef,
};
use super::gateway::{
    HttpBackendRef, HttpPathMatch, HttpRoute, HttpRouteMatch, HttpRouteRule, HttpRouteSpec,
    HttpRouteStatus, ParentReference, RouteParentStatus,
};
use super::mariadb::{
    Database, DatabaseSpec, Grant, GrantSpec, MariaDbRef, SecretKeySelector, User, UserSpec,
};
use crate::object::KindRef;

const FILES: &[(&str, &str)] = &[
    (
        "mariadb-operator.yaml",
        include_str!("../../../../crds/external/mariadb-operator.yaml"),
    ),
    (
        "external-secrets.yaml",
        include_str!("../../../../crds/external/external-secrets.yaml"),
    ),
    (
        "cert-manager.yaml",
        include_str!("../../../../crds/external/cert-manager.yaml"),
    ),
    (
        "gateway-api.yaml",
        include_str!("../../../../crds/external/gateway-api.yaml"),
    ),
    (
        "openbao.yaml",
        include_str!("../../../../crds/external/openbao.yaml"),
    ),
];

fn crds() -> Vec<Value> {
    let mut out = Vec::new();
    for (file, text) in FILES {
        for doc in serde_yaml_ng::Deserializer::from_str(text) {
            let crd = Value::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(crd["apiVersion"], "apiextensions.k8s.io/v1", "{file}");
            assert_eq!(crd["kind"], "CustomResourceDefinition", "{file}");
            out.push(crd);
        }
    }
    out
}

/// The CRD serving `kind`, and the schema of its version.
fn schema_of(kind: &KindRef) -> Value {
    let crd = crds()
        .into_iter()
        .find(|c| c["spec"]["group"] == kind.group() && c["spec"]["names"]["kind"] == kind.kind)
        .unwrap_or_else(|| panic!("no CRD serves {kind}"));
    assert_eq!(
        crd["spec"]["names"]["plural"],
        kind.plural.as_str(),
        "{kind}"
    );
    assert_eq!(
        crd["metadata"]["name"],
        format!("{}.{}", kind.plural, kind.group()),
        "{kind}"
    );
    let scope = if kind.namespaced {
        "Namespaced"
    } else {
        "Cluster"
    };
    assert_eq!(crd["spec"]["scope"], scope, "{kind}");
    let version = crd["spec"]["versions"]
        .as_array()
        .and_then(|vs| vs.iter().find(|v| v["name"] == kind.version()))
        .unwrap_or_else(|| panic!("{kind}: version {} not served", kind.version()));
    version["schema"]["openAPIV3Schema"].clone()
}

/// Every key of `value` is a declared property of `schema`, recursively; a schema that
/// preserves unknown fields without declaring properties accepts anything.
fn assert_declared(path: &str, value: &Value, schema: &Value) {
    match value {
        Value::Object(map) => {
            let props = &schema["properties"];
            if props.is_null() && schema["x-kubernetes-preserve-unknown-fields"] == true {
                return;
            }
            for (key, child) in map {
                let child_schema = &props[key];
                assert!(
                    !child_schema.is_null(),
                    "{path}.{key} is not in the CRD schema"
                );
                assert_declared(&format!("{path}.{key}"), child, child_schema);
            }
        }
        Value::Array(items) => {
            for item in items {
                assert_declared(&format!("{path}[]"), item, &schema["items"]);
            }
        }
        _ => {}
    }
}

fn check<K: Resource + serde::Serialize>(object: &K)
where
    K::Scope: 'static,
{
    let kind = KindRef::of::<K>();
    let schema = schema_of(&kind);
    let value = serde_json::to_value(object).expect("serializes");
    assert_declared(
        &format!("{kind}.spec"),
        &value["spec"],
        &schema["properties"]["spec"],
    );
}

fn mariadb_ref() -> MariaDbRef {
    MariaDbRef {
        name: "mariadb".into(),
        namespace: Some("db".into()),
        wait_for_it: Some(true),
    }
}

#[test]
fn every_crd_file_parses_as_custom_resource_definitions() {
    let mut names: Vec<String> = crds()
        .iter()
        .map(|c| {
            c["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "certificates.cert-manager.io",
            "clusterissuers.cert-manager.io",
            "clustersecretstores.external-secrets.io",
            "databases.k8s.mariadb.com",
            "externalsecrets.external-secrets.io",
            "gatewayclasses.gateway.networking.k8s.io",
            "gateways.gateway.networking.k8s.io",
            "grants.k8s.mariadb.com",
            "httproutes.gateway.networking.k8s.io",
            "issuers.cert-manager.io",
            "mariadbs.k8s.mariadb.com",
            "openbaoclusters.openbao.org",
            "pushsecrets.external-secrets.io",
            "secretstores.external-secrets.io",
            "users.k8s.mariadb.com",
        ]
    );
}

#[test]
fn the_mariadb_crds_declare_every_field_database_user_and_grant_set() {
    let all = |s: &str| Some(s.to_owned());
    check(&Database {
        spec: DatabaseSpec {
            maria_db_ref: mariadb_ref(),
            name: all("keystone"),
            character_set: all("utf8"),
            collate: all("utf8_general_ci"),
            cleanup_policy: all("Delete"),
            requeue_interval: all("30s"),
            retry_interval: all("5s"),
        },
        ..Default::default()
    });
    check(&User {
        spec: UserSpec {
            maria_db_ref: mariadb_ref(),
            password_secret_key_ref: Some(SecretKeySelector {
                name: "s".into(),
                key: "password".into(),
            }),
            name: all("keystone"),
            host: all("%"),
            max_user_connections: Some(20),
            cleanup_policy: all("Delete"),
            requeue_interval: all("30s"),
            retry_interval: all("5s"),
        },
        ..Default::default()
    });
    check(&Grant {
        spec: GrantSpec {
            maria_db_ref: mariadb_ref(),
            privileges: vec!["ALL PRIVILEGES".into()],
            database: all("keystone"),
            table: all("*"),
            username: "keystone".into(),
            host: all("%"),
            grant_option: Some(false),
            cleanup_policy: all("Delete"),
            requeue_interval: all("30s"),
            retry_interval: all("5s"),
        },
        ..Default::default()
    });
}

#[test]
fn the_external_secrets_crds_declare_every_field_the_eso_types_set() {
    check(&ExternalSecret {
        spec: Some(ExternalSecretSpec {
            secret_store_ref: Some(SecretStoreRef {
                name: "openbao-cluster-store".into(),
                kind: Some("ClusterSecretStore".into()),
            }),
            target: Some(ExternalSecretTarget {
                name: Some("db".into()),
                creation_policy: Some("Owner".into()),
                deletion_policy: Some("Retain".into()),
                template: Some(json!({"type": "Opaque"})),
                immutable: Some(false),
            }),
            refresh_interval: Some("1h".into()),
            data: vec![ExternalSecretData {
                secret_key: "password".into(),
                remote_ref: ExternalSecretDataRemoteRef {
                    key: "kv/db".into(),
                    property: Some("password".into()),
                    version: Some("1".into()),
                },
            }],
            data_from: vec![json!({"extract": {"key": "kv/db"}})],
        }),
        ..Default::default()
    });
    check(&PushSecret {
        spec: PushSecretSpec {
            secret_store_refs: vec![PushSecretStoreRef {
                name: Some("openbao-cluster-store".into()),
                kind: Some("ClusterSecretStore".into()),
            }],
            selector: PushSecretSelector {
                secret: Some(PushSecretSecret {
                    name: "keys".into(),
                }),
            },
            data: vec![PushSecretData {
                match_: PushSecretMatch {
                    secret_key: Some("0".into()),
                    remote_ref: PushSecretRemoteRef {
                        remote_key: "kv/keys".into(),
                        property: Some("0".into()),
                    },
                },
            }],
            deletion_policy: Some("None".into()),
            update_policy: Some("Replace".into()),
            refresh_interval: Some("1h".into()),
        },
        ..Default::default()
    });
    let provider = Some(json!({"provider": {"vault": {"server": "https://bao"}}}));
    check(&SecretStore {
        spec: provider.clone(),
        ..Default::default()
    });
    check(&ClusterSecretStore {
        spec: provider,
        ..Default::default()
    });
}

#[test]
fn the_cert_manager_crd_declares_every_field_a_certificate_sets() {
    check(&Certificate {
        spec: CertificateSpec {
            secret_name: "db-client".into(),
            issuer_ref: IssuerRef {
                name: "openstack-db-ca-issuer".into(),
                kind: Some("ClusterIssuer".into()),
                group: Some("cert-manager.io".into()),
            },
            common_name: Some("keystone".into()),
            dns_names: vec!["keystone".into()],
            ip_addresses: vec!["10.0.0.1".into()],
            duration: Some("2160h".into()),
            renew_before: Some("360h".into()),
            usages: vec!["client auth".into(), "digital signature".into()],
            private_key: Some(CertificatePrivateKey {
                algorithm: Some("ECDSA".into()),
                size: Some(256),
                encoding: Some("PKCS8".into()),
                rotation_policy: Some("Always".into()),
            }),
            is_ca: Some(false),
        },
        ..Default::default()
    });
}

#[test]
fn the_gateway_api_crd_declares_every_field_an_http_route_sets_or_reads() {
    let all = |s: &str| Some(s.to_owned());
    let parent = ParentReference {
        group: all("gateway.networking.k8s.io"),
        kind: all("Gateway"),
        name: "gw".into(),
        namespace: all("edge"),
        section_name: all("https"),
        port: Some(443),
    };
    let status = HttpRouteStatus {
        parents: vec![RouteParentStatus {
            parent_ref: parent.clone(),
            controller_name: "example.com/gateway-controller".into(),
            conditions: vec![StatusCondition {
                type_: "Accepted".into(),
                status: "True".into(),
                reason: all("Accepted"),
                message: all("Route is accepted"),
                last_transition_time: all("2026-01-01T00:00:00Z"),
                observed_generation: Some(1),
            }],
        }],
    };
    let schema = schema_of(&KindRef::of::<HttpRoute>());
    assert_declared(
        "HTTPRoute.status",
        &serde_json::to_value(&status).expect("serializes"),
        &schema["properties"]["status"],
    );
    check(&HttpRoute {
        spec: HttpRouteSpec {
            parent_refs: vec![parent],
            hostnames: vec!["identity.example.com".into()],
            rules: vec![HttpRouteRule {
                matches: vec![HttpRouteMatch {
                    path: Some(HttpPathMatch {
                        type_: all("PathPrefix"),
                        value: all("/"),
                    }),
                }],
                backend_refs: vec![HttpBackendRef {
                    group: all(""),
                    kind: all("Service"),
                    name: "keystone".into(),
                    namespace: all("ns"),
                    port: Some(5000),
                    weight: Some(1),
                }],
            }],
        },
        ..Default::default()
    });
}
