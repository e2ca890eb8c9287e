//! The satellite block as far as it touches the cluster: observing whether a section is
//! projected into the Secret a parent's Deployment mounts.

use serde_json::{Map, Value, json};
use wasm_operator_sdk::Cluster;
use wasm_operator_sdk::blocks::satellite::{ObserveParams, section_projected};

use crate::error::ScenarioError;
use crate::scenario::Scenario;
use crate::workloads::outcome;

/// SectionProjected over Deployment `params.deployment`, its volume `params.volume`, the
/// Secret's key `params.dataKey` and header `params.section`. Outcome: `projected`.
pub fn observe(cluster: &dyn Cluster, s: &Scenario) -> Result<Map<String, Value>, ScenarioError> {
    let deployment = s.text("deployment", "parent")?;
    let volume = s.text("volume", "config")?;
    let data_key = s.text("dataKey", "app.conf")?;
    let section = s.text("section", "[store]")?;
    let projected = section_projected(&ObserveParams {
        children: cluster,
        deployment_namespace: &s.namespace,
        deployment_name: &deployment,
        volume_name: &volume,
        data_key: &data_key,
        section_header: &section,
    })?;
    Ok(outcome([("projected", json!(projected))]))
}
