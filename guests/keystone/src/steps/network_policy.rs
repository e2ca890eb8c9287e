//! Step 6c — NetworkPolicy (facts §2.13): network isolation of the API pods.
//!
//! | spec.networkPolicy | NetworkPolicy `{name}` | NetworkPolicyReady |
//! |---|---|---|
//! | absent | deleted if the Keystone controls it | True `NetworkPolicyNotRequired` |
//! | no ingress source | — | error |
//! | set | applied | True `NetworkPolicyReady` |
//!
//! Ingress: one rule from every source, the Gateway's namespace when a gateway is set,
//! on the port the Service targets: the API's 5000, or the federation proxy's 5050 when
//! federation is projected. Egress, ports only: DNS (UDP and TCP 53), the API server (TCP
//! 443 and 6443, for the rotation Jobs that share the pod selector), the database port,
//! the cache ports, the identity providers' ports when federation is projected (one rule,
//! one TCP port each, as [`egress_ports`](crate::federation::Federation::egress_ports)
//! lists them), then `additionalEgress` as written.
//!
//! DECISION: an identity provider's port already allowed by an earlier rule (443, most
//! often) is listed again in the federation rule, as CobaltCore does: each rule stands
//! for one kind of peer, and a reader of the policy sees the federation's needs whole.
//!
//! DECISION: CobaltCore also admits the operator's own namespace, which a plugin is not
//! told; the host reaches the API through the Service from outside the pod network in
//! the embedded cluster, and in a real cluster a source for the operator's namespace is
//! one entry of `ingress`.
//!
//! Applying and deleting go through the SDK's `blocks::optional::ensure_or_delete`: a
//! NetworkPolicy of the Keystone's name that someone else made is left alone, and a pass
//! that finds none in the cache sends no delete.

use std::collections::BTreeMap;

use k8s_openapi::api::networking::v1::{
    NetworkPolicy, NetworkPolicyEgressRule, NetworkPolicyIngressRule, NetworkPolicyPeer,
    NetworkPolicyPort, NetworkPolicySpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use wasm_operator_sdk::blocks::optional::{WhenAbsent, ensure_or_delete};

use crate::conditions::NETWORK_POLICY_READY;
use crate::error::Error;
use crate::federation::PROXY_PORT;
use crate::labels::{common_labels, selector_labels};
use crate::pass::{Pass, StepResult};
use crate::steps::deployment::API_PORT;

fn port(protocol: &str, number: i32) -> NetworkPolicyPort {
    NetworkPolicyPort {
        protocol: Some(protocol.into()),
        port: Some(IntOrString::Int(number)),
        ..Default::default()
    }
}

fn ports_rule(ports: Vec<NetworkPolicyPort>) -> NetworkPolicyEgressRule {
    NetworkPolicyEgressRule {
        ports: Some(ports),
        to: None,
    }
}

/// The NetworkPolicy of a Keystone whose `spec.networkPolicy` is set.
pub(crate) fn network_policy(pass: &Pass<'_>) -> NetworkPolicy {
    let spec = &pass.keystone.spec;
    let name = pass.name();
    let mut peers: Vec<NetworkPolicyPeer> = spec
        .network_policy
        .iter()
        .flat_map(|np| &np.ingress)
        .map(|source| NetworkPolicyPeer {
            namespace_selector: Some(source.namespace_selector.clone()),
            pod_selector: source.pod_selector.clone(),
            ..Default::default()
        })
        .collect();
    if let Some(gateway) = &spec.gateway {
        let namespace = if gateway.parent_ref.namespace.is_empty() {
            pass.namespace()
        } else {
            &gateway.parent_ref.namespace
        };
        peers.push(NetworkPolicyPeer {
            namespace_selector: Some(LabelSelector {
                match_labels: Some(BTreeMap::from([(
                    "kubernetes.io/metadata.name".to_owned(),
                    namespace.to_owned(),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        });
    }
    let mut egress = vec![
        ports_rule(vec![port("UDP", 53), port("TCP", 53)]),
        ports_rule(vec![port("TCP", 443), port("TCP", 6443)]),
        ports_rule(vec![port("TCP", spec.database.effective_port())]),
    ];
    let cache_ports: Vec<NetworkPolicyPort> = spec
        .cache
        .ports()
        .into_iter()
        .map(|p| port("TCP", i32::from(p)))
        .collect();
    if !cache_ports.is_empty() {
        egress.push(ports_rule(cache_ports));
    }
    let idp_ports: Vec<NetworkPolicyPort> = pass
        .federation
        .iter()
        .flat_map(|f| &f.egress_ports)
        .map(|p| port("TCP", *p))
        .collect();
    if !idp_ports.is_empty() {
        egress.push(ports_rule(idp_ports));
    }
    egress.extend(
        spec.network_policy
            .iter()
            .flat_map(|np| np.additional_egress.iter().cloned()),
    );
    let ingress_port = if pass.federation.is_some() {
        PROXY_PORT
    } else {
        API_PORT
    };
    NetworkPolicy {
        metadata: ObjectMeta {
            name: Some(name.to_owned()),
            namespace: Some(pass.namespace().to_owned()),
            labels: Some(common_labels(name)),
            ..Default::default()
        },
        spec: Some(NetworkPolicySpec {
            pod_selector: Some(LabelSelector {
                match_labels: Some(selector_labels(name)),
                ..Default::default()
            }),
            policy_types: Some(vec!["Ingress".into(), "Egress".into()]),
            ingress: Some(vec![NetworkPolicyIngressRule {
                ports: Some(vec![port("TCP", ingress_port)]),
                from: Some(peers),
            }]),
            egress: Some(egress),
        }),
    }
}

/// Runs the step.
pub(crate) fn run(pass: &mut Pass<'_>) -> StepResult {
    let name = pass.name().to_owned();
    let Some(spec) = &pass.keystone.spec.network_policy else {
        ensure_or_delete::<_, NetworkPolicy>(
            pass.cluster,
            &pass.owner,
            pass.namespace(),
            &name,
            None,
            WhenAbsent::Delete,
        )?;
        pass.condition(
            NETWORK_POLICY_READY,
            true,
            "NetworkPolicyNotRequired",
            "Network isolation is not configured",
        );
        return Ok(None);
    };
    if spec.ingress.is_empty() {
        return Err(Error::Spec(format!(
            "Keystone {}: spec.networkPolicy.ingress must name at least one source",
            pass.key(&name)
        )));
    }
    ensure_or_delete(
        pass.cluster,
        &pass.owner,
        pass.namespace(),
        &name,
        Some(&network_policy(pass)),
        WhenAbsent::Delete,
    )?;
    pass.condition(
        NETWORK_POLICY_READY,
        true,
        "NetworkPolicyReady",
        "NetworkPolicy is configured",
    );
    Ok(None)
}

#[cfg(test)]
#[path = "network_policy_tests.rs"]
mod tests;
