//! Every kind a plugin declares, checked against API discovery before the plugin runs.
//!
//! A plugin's `describe()` names each kind with its plural and scope; the informers, the
//! RBAC and the namespace scoping are built from them. A plural or a scope the cluster
//! does not serve for that kind is refused (a plugin declaring `{v1, ConfigMap, plural:
//! "secrets"}` would otherwise be served Secrets labelled as ConfigMaps), as is a
//! cluster-scoped kind `plugins.toml` does not grant. A primary or required watch the
//! cluster does not serve yet (a CRD not installed) is refused too, and tried again later;
//! a kind named only by an optional watch or a permission may be missing.

use std::sync::Arc;

use wasm_operator_runtime::backend::access::Access;
use wasm_operator_types::{Description, KindRef};

use crate::cluster::discovery::Discovery;

/// A declared kind that does not match what the cluster serves.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum KindError {
    /// Discovery does not list the kind (yet).
    #[error("plugin {plugin}: {field} {kind} is not served by the API server: {message}")]
    NotServed {
        plugin: String,
        field: String,
        kind: String,
        message: String,
    },
    /// The declared plural is not the served resource.
    #[error(
        "plugin {plugin}: {field} {kind} declares plural {declared:?}, but the API server serves \
         {kind} as {served:?}"
    )]
    Plural {
        plugin: String,
        field: String,
        kind: String,
        declared: String,
        served: String,
    },
    /// The declared scope is not the served one.
    #[error(
        "plugin {plugin}: {field} {kind} declares namespaced: {declared}, but the API server \
         serves it {}", if *declared { "cluster-scoped" } else { "namespaced" }
    )]
    Scope {
        plugin: String,
        field: String,
        kind: String,
        declared: bool,
    },
    /// A cluster-scoped kind without the grant.
    #[error(
        "plugin {plugin}: {field} {kind} is cluster-scoped, and plugins.toml does not grant it \
         cluster_scoped = true"
    )]
    ClusterScoped {
        plugin: String,
        field: String,
        kind: String,
    },
    /// Discovery could not be asked.
    #[error("plugin {plugin}: cannot check {kind} through API discovery: {message}")]
    Unavailable {
        plugin: String,
        kind: String,
        message: String,
    },
}

impl KindError {
    /// Whether the same file may pass later (a CRD installed, the API server back).
    pub(crate) fn retryable(&self) -> bool {
        matches!(self, Self::NotServed { .. } | Self::Unavailable { .. })
    }
}

/// Checks declared kinds through the cluster's discovery cache.
pub(crate) struct KindResolver {
    discovery: Arc<Discovery>,
}

impl KindResolver {
    pub(crate) fn new(discovery: Arc<Discovery>) -> Self {
        Self { discovery }
    }

    /// Ticks whenever what the cluster serves may have changed (a CRD event).
    pub(crate) fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.discovery.changes()
    }

    /// `Ok` when every kind `description` names is served with its declared plural and
    /// scope, and each cluster-scoped one is granted by `access`. The primary and the
    /// required watches must be served now; a kind named only by optional watches or
    /// permissions may not be served yet (its calls fail `not-served`, its optional watch
    /// waits for it, and its plural and scope are checked when it appears).
    pub(crate) async fn check(
        &self,
        description: &Description,
        access: &Access,
    ) -> Result<(), KindError> {
        let declared = std::iter::once(("primary".to_owned(), &description.primary, true))
            .chain(
                description
                    .watches
                    .iter()
                    .enumerate()
                    .map(|(i, w)| (format!("watches[{i}].kind"), &w.kind, !w.optional)),
            )
            .chain(
                description
                    .permissions
                    .iter()
                    .enumerate()
                    .map(|(i, p)| (format!("permissions[{i}].kind"), &p.kind, false)),
            )
            .chain(
                description
                    .subresources
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (format!("subresources[{i}].kind"), &s.kind, false)),
            );
        for (field, kind, required) in declared {
            self.check_one(&description.name, field, kind, access, required)
                .await?;
        }
        Ok(())
    }

    /// Checks one kind; one that is not served is an error only when `required`.
    pub(crate) async fn check_one(
        &self,
        plugin: &str,
        field: String,
        kind: &KindRef,
        access: &Access,
        required: bool,
    ) -> Result<(), KindError> {
        let name = kind.to_string();
        let served = self
            .discovery
            .kind(&kind.api_version, &kind.kind)
            .await
            .map_err(|error| KindError::Unavailable {
                plugin: plugin.to_owned(),
                kind: name.clone(),
                message: error.to_string(),
            })?;
        let Some(served) = served else {
            if !required {
                return Ok(());
            }
            return Err(KindError::NotServed {
                plugin: plugin.to_owned(),
                field,
                kind: name,
                message: format!("discovery of {} does not list it", kind.api_version),
            });
        };
        if served.plural != kind.plural {
            return Err(KindError::Plural {
                plugin: plugin.to_owned(),
                field,
                kind: name,
                declared: kind.plural.clone(),
                served: served.plural,
            });
        }
        if served.namespaced != kind.namespaced {
            return Err(KindError::Scope {
                plugin: plugin.to_owned(),
                field,
                kind: name,
                declared: kind.namespaced,
            });
        }
        if !served.namespaced && !access.cluster_scoped {
            return Err(KindError::ClusterScoped {
                plugin: plugin.to_owned(),
                field,
                kind: name,
            });
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "demo"))]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use wasm_operator_apiserver::{ApiServer, ServerConfig};
    use wasm_operator_types::{Permission, Verb};

    fn description(kind: KindRef) -> Description {
        Description {
            name: "p".into(),
            version: "1.0.0".into(),
            field_manager: "p".into(),
            primary: KindRef::of::<ConfigMap>(),
            primary_predicates: vec![],
            watches: vec![],
            watched_indexes: vec![],
            subresources: vec![],
            admission: vec![],
            egress: vec![],
            indexes: vec![],
            permissions: vec![Permission {
                kind,
                verbs: vec![Verb::Get],
            }],
            targets: Default::default(),
            primary_selector: None,
        }
    }

    #[tokio::test]
    async fn a_declared_kind_must_match_its_discovered_plural_and_scope() {
        let server = ApiServer::start(ServerConfig::default())
            .await
            .expect("the API server starts");
        let resolver =
            KindResolver::new(Arc::new(Discovery::new(server.client().expect("a client"))));
        let granted = Access {
            cluster_scoped: true,
            ..Access::default()
        };
        let field = "permissions[0].kind".to_owned();
        let kind = |plural: &str, namespaced: bool| KindRef {
            plural: plural.into(),
            namespaced,
            ..KindRef::of::<ConfigMap>()
        };
        let widget = KindRef {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            plural: "widgets".into(),
            namespaced: true,
        };
        let cases: [(KindRef, &Access, Result<(), KindError>); 7] = [
            (KindRef::of::<ConfigMap>(), &Access::default(), Ok(())),
            (
                kind("secrets", true),
                &Access::default(),
                Err(KindError::Plural {
                    plugin: "p".into(),
                    field: field.clone(),
                    kind: "v1/ConfigMap".into(),
                    declared: "secrets".into(),
                    served: "configmaps".into(),
                }),
            ),
            (
                kind("configmaps", false),
                &granted,
                Err(KindError::Scope {
                    plugin: "p".into(),
                    field: field.clone(),
                    kind: "v1/ConfigMap".into(),
                    declared: false,
                }),
            ),
            (
                KindRef::of::<Namespace>(),
                &Access::default(),
                Err(KindError::ClusterScoped {
                    plugin: "p".into(),
                    field: field.clone(),
                    kind: "v1/Namespace".into(),
                }),
            ),
            (KindRef::of::<Namespace>(), &granted, Ok(())),
            // Named by a permission only: it may be missing.
            (widget.clone(), &Access::default(), Ok(())),
            (
                widget,
                &Access::default(),
                Err(KindError::NotServed {
                    plugin: "p".into(),
                    field: "primary".into(),
                    kind: "example.com/v1/Widget".into(),
                    message: String::new(),
                }),
            ),
        ];
        for (i, (kind, access, expected)) in cases.into_iter().enumerate() {
            let mut described = description(kind.clone());
            if i == 6 {
                // The unserved kind as the primary: required.
                described.primary = kind.clone();
            }
            let got = resolver.check(&described, access).await;
            match (&got, &expected) {
                (Err(KindError::NotServed { message, .. }), Err(KindError::NotServed { .. })) => {
                    assert!(got.as_ref().is_err_and(KindError::retryable));
                    assert!(!message.is_empty(), "{kind:?}");
                }
                _ => assert_eq!(got, expected, "{kind:?}"),
            }
        }
        let scope = KindError::Scope {
            plugin: "p".into(),
            field,
            kind: "v1/ConfigMap".into(),
            declared: false,
        };
        assert_eq!(
            scope.to_string(),
            "plugin p: permissions[0].kind v1/ConfigMap declares namespaced: false, but the API \
             server serves it namespaced"
        );
        assert!(!scope.retryable());
    }
}
