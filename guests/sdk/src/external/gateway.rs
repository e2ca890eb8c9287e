//! Gateway API's `gateway.networking.k8s.io/v1` HTTPRoute: the subset a service operator
//! sets to expose its API through an existing Gateway (parentRefs, hostnames, rules with
//! path matches and backendRefs) and reads back (whether a parent accepted the route).
//!
//! The kind is optional in a cluster: ask [`Cluster::served`](crate::Cluster::served)
//! before reading or writing it.

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::{StatusCondition, condition_true, external_kind};

/// The route condition a Gateway controller sets on each parent it evaluated
/// (`gatewayv1.RouteConditionAccepted`).
pub const ROUTE_ACCEPTED: &str = "Accepted";
/// The path match type of a prefix match (`gatewayv1.PathMatchPathPrefix`).
pub const PATH_PREFIX: &str = "PathPrefix";

/// A Gateway (or one listener of it) a route attaches to (`spec.parentRefs[]`, and
/// `status.parents[].parentRef`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ParentReference {
    /// `gateway.networking.k8s.io` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `Gateway` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    /// The route's namespace when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// A listener of the Gateway, by name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub section_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
}

/// `spec.rules[].matches[].path`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpPathMatch {
    /// `Exact`, `PathPrefix` (the default) or `RegularExpression`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub type_: Option<String>,
    /// `/` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// `spec.rules[].matches[]`: only the path is modelled.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRouteMatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<HttpPathMatch>,
}

/// `spec.rules[].backendRefs[]`: where matching requests go.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpBackendRef {
    /// The core group (`""`) when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// `Service` when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<i32>,
}

/// `spec.rules[]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteRule {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub matches: Vec<HttpRouteMatch>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backend_refs: Vec<HttpBackendRef>,
}

/// `HTTPRoute.spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpRouteSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parent_refs: Vec<ParentReference>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hostnames: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<HttpRouteRule>,
}

/// `status.parents[]`: one Gateway controller's verdict on one parent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RouteParentStatus {
    #[serde(default)]
    pub parent_ref: ParentReference,
    #[serde(default)]
    pub controller_name: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<StatusCondition>,
}

/// `HTTPRoute.status`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HttpRouteStatus {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parents: Vec<RouteParentStatus>,
}

/// A Gateway API HTTPRoute.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HttpRoute {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: HttpRouteSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<HttpRouteStatus>,
}
external_kind!(
    HttpRoute,
    "gateway.networking.k8s.io",
    "v1",
    "HTTPRoute",
    "httproutes",
    NamespaceResourceScope
);

impl HttpRoute {
    /// Whether any parent reports `Accepted=True` (`IsHTTPRouteAccepted`). A route no
    /// Gateway controller has evaluated yet has no parents and is not accepted.
    pub fn accepted(&self) -> bool {
        self.status.as_ref().is_some_and(|s| {
            s.parents
                .iter()
                .any(|p| condition_true(&p.conditions, ROUTE_ACCEPTED))
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn route(status: serde_json::Value) -> HttpRoute {
        serde_json::from_value(json!({
            "apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": "ks", "namespace": "ns"},
            "spec": {"parentRefs": [{"name": "gw"}]},
            "status": status,
        }))
        .expect("an HTTPRoute")
    }

    #[test]
    fn a_route_is_accepted_when_any_parent_reports_accepted_true() {
        let parent = |name: &str, status: &str| {
            json!({"parentRef": {"name": name}, "controllerName": "example.com/gw",
                "conditions": [
                    {"type": "ResolvedRefs", "status": "True"},
                    {"type": "Accepted", "status": status}]})
        };
        let cases = [
            ("no status", json!(null), false),
            ("no parents yet", json!({"parents": []}), false),
            (
                "refused by its only parent",
                json!({"parents": [parent("gw", "False")]}),
                false,
            ),
            (
                "accepted by one of two parents",
                json!({"parents": [parent("a", "False"), parent("b", "True")]}),
                true,
            ),
        ];
        for (case, status, accepted) in cases {
            assert_eq!(route(status).accepted(), accepted, "{case}");
        }
    }
}
