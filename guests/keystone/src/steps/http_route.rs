//! Step 11, HTTPRoute (facts §2.18): the API exposed through an existing Gateway.
//!
//! | HTTPRoute served | spec.gateway | HTTPRoute `{name}` | HTTPRouteReady |
//! |---|---|---|---|
//! | probe failed | — | — | False `CapabilityProbeFailed`, error |
//! | no | absent | — | True `HTTPRouteNotRequired` |
//! | no | set | — | False `GatewayAPINotInstalled` (no requeue) |
//! | yes | absent | deleted if the Keystone controls it | True `HTTPRouteNotRequired` |
//! | yes | set, no parent accepted it yet | applied | False `HTTPRouteNotAccepted`, 10 s |
//! | yes | set, a parent reports Accepted=True | applied | True `HTTPRouteAccepted` |
//!
//! The route: labels commonLabels, annotations `spec.gateway.annotations`, one parentRef
//! (name, and namespace and sectionName when set), hostnames `[hostname]`, one rule
//! matching PathPrefix `spec.gateway.path` (`/` when unset, `/`-prefixed) and sending to
//! Service `{name}` port 5000.
//!
//! The kind is asked for first: a cluster without the Gateway API cannot hold an
//! HTTPRoute, and every call on a kind not served fails. Like CobaltCore, the
//! not-installed case does not requeue; its message says how to recover.
//!
//! DECISION: children always live on the host's own cluster (a `targetClusterRef` stops
//! the pass in the prelude), so the not-installed message is CobaltCore's local one.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use wasm_operator_sdk::KindRef;
use wasm_operator_sdk::blocks::optional::{Optional, WhenAbsent, ensure_or_delete};
use wasm_operator_sdk::blocks::types::GatewaySpec;
use wasm_operator_sdk::external::gateway::{
    HttpBackendRef, HttpPathMatch, HttpRoute, HttpRouteMatch, HttpRouteRule, HttpRouteSpec,
    PATH_PREFIX, ParentReference,
};

use crate::conditions::HTTP_ROUTE_READY;
use crate::error::Error;
use crate::labels::common_labels;
use crate::pass::{DEPLOYMENT_POLLING, Pass, StepResult};
use crate::steps::deployment::API_PORT;

/// How long to wait for a Gateway controller to accept the route
/// (RequeueDeploymentPolling).
pub(crate) const ACCEPTED_POLLING: std::time::Duration = DEPLOYMENT_POLLING;

const NOT_CONFIGURED: &str = "External API exposure via Gateway API is not configured";
const NOT_INSTALLED: &str = "spec.gateway is set but the gateway.networking.k8s.io/v1 HTTPRoute \
     CRD is not installed in this cluster; install Gateway API and restart the operator to \
     enable external API exposure";

fn non_empty(value: &str) -> Option<String> {
    (!value.is_empty()).then(|| value.to_owned())
}

/// The HTTPRoute of a Keystone whose `spec.gateway` is `gateway`.
pub(crate) fn http_route(pass: &Pass<'_>, gateway: &GatewaySpec) -> HttpRoute {
    let name = pass.name();
    let annotations = gateway.annotations.clone();
    HttpRoute {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            annotations: (!annotations.is_empty()).then_some(annotations),
            ..Default::default()
        },
        spec: HttpRouteSpec {
            parent_refs: vec![ParentReference {
                name: gateway.parent_ref.name.clone(),
                namespace: non_empty(&gateway.parent_ref.namespace),
                section_name: non_empty(&gateway.parent_ref.section_name),
                ..Default::default()
            }],
            hostnames: vec![gateway.hostname.clone()],
            rules: vec![HttpRouteRule {
                matches: vec![HttpRouteMatch {
                    path: Some(HttpPathMatch {
                        type_: Some(PATH_PREFIX.into()),
                        value: Some(gateway.effective_path()),
                    }),
                }],
                backend_refs: vec![HttpBackendRef {
                    kind: Some("Service".into()),
                    name: name.to_owned(),
                    port: Some(API_PORT),
                    ..Default::default()
                }],
            }],
        },
        status: None,
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let served = match pass.cluster.served(&KindRef::of::<HttpRoute>()) {
        Ok(served) => served,
        Err(source) => {
            let message =
                format!("Probing the target cluster for the HTTPRoute kind failed: {source}");
            pass.condition(HTTP_ROUTE_READY, false, "CapabilityProbeFailed", &message);
            return Err(Error::Probe {
                kind: "HTTPRoute",
                source,
            });
        }
    };
    let gateway = pass.keystone.spec.gateway.clone();
    if !served {
        match gateway {
            None => pass.condition(
                HTTP_ROUTE_READY,
                true,
                "HTTPRouteNotRequired",
                NOT_CONFIGURED,
            ),
            Some(_) => pass.condition(
                HTTP_ROUTE_READY,
                false,
                "GatewayAPINotInstalled",
                NOT_INSTALLED,
            ),
        }
        return Ok(None);
    }
    let name = pass.name().to_owned();
    let desired = gateway.map(|gateway| http_route(pass, &gateway));
    let ensured = ensure_or_delete(
        pass.cluster,
        &pass.owner,
        pass.namespace(),
        &name,
        desired.as_ref(),
        WhenAbsent::Delete,
    )?;
    let Optional::Applied(route) = ensured else {
        pass.condition(
            HTTP_ROUTE_READY,
            true,
            "HTTPRouteNotRequired",
            NOT_CONFIGURED,
        );
        return Ok(None);
    };
    if route.accepted() {
        pass.condition(
            HTTP_ROUTE_READY,
            true,
            "HTTPRouteAccepted",
            "HTTPRoute accepted by Gateway",
        );
        Ok(None)
    } else {
        pass.condition(
            HTTP_ROUTE_READY,
            false,
            "HTTPRouteNotAccepted",
            "HTTPRoute not yet accepted by Gateway",
        );
        Ok(Some(ACCEPTED_POLLING))
    }
}

#[cfg(test)]
#[path = "http_route_tests.rs"]
mod tests;
