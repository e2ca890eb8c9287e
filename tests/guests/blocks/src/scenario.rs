//! The BlockScenario primary: which block to run, with which parameters, for which owner.

use std::collections::BTreeMap;

use serde_json::{Map, Value};
use wasm_operator_sdk::{KindRef, Owner};

use crate::error::ScenarioError;

/// The API version of the BlockScenario kind.
pub const API_VERSION: &str = "tests.wasm-operator.dev/v1";
/// The BlockScenario kind.
pub const KIND: &str = "BlockScenario";

/// The BlockScenario kind.
pub fn scenario_kind() -> KindRef {
    KindRef {
        api_version: API_VERSION.into(),
        kind: KIND.into(),
        plural: "blockscenarios".into(),
        namespaced: true,
    }
}

/// One BlockScenario as a pass reads it.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// `metadata.name`; the objects a block makes are named after it.
    pub name: String,
    pub namespace: String,
    /// The controller owner of everything the block makes.
    pub owner: Owner,
    /// `spec.scenario`: which block to run.
    pub block: String,
    /// `spec.params`.
    pub params: Map<String, Value>,
    /// `metadata.generation`, reported back as `status.observedGeneration`.
    pub generation: i64,
}

fn text<'a>(
    object: &'a Value,
    pointer: &str,
    what: &'static str,
) -> Result<&'a str, ScenarioError> {
    object
        .pointer(pointer)
        .and_then(Value::as_str)
        .ok_or(ScenarioError::Missing(what))
}

impl Scenario {
    /// Reads a BlockScenario object.
    pub fn read(object: &Value) -> Result<Self, ScenarioError> {
        let name = text(object, "/metadata/name", "metadata.name")?.to_owned();
        let namespace = text(object, "/metadata/namespace", "metadata.namespace")?.to_owned();
        let uid = text(object, "/metadata/uid", "metadata.uid")?.to_owned();
        let block = text(object, "/spec/scenario", "spec.scenario")?.to_owned();
        let params = object
            .pointer("/spec/params")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let generation = object
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        Ok(Self {
            owner: Owner {
                api_version: API_VERSION.into(),
                kind: KIND.into(),
                name: name.clone(),
                uid,
            },
            name,
            namespace,
            block,
            params,
            generation,
        })
    }

    /// The namespace, as the blocks take it.
    pub fn ns(&self) -> Option<&str> {
        Some(&self.namespace)
    }

    /// The string parameter `key`, or `default` when absent.
    pub fn text(&self, key: &'static str, default: &str) -> Result<String, ScenarioError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(default.to_owned()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(ScenarioError::Param {
                name: key,
                problem: "not a string",
            }),
        }
    }

    /// The optional string parameter `key`.
    pub fn opt_text(&self, key: &'static str) -> Result<Option<String>, ScenarioError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ScenarioError::Param {
                name: key,
                problem: "not a string",
            }),
        }
    }

    /// The optional integer parameter `key`.
    pub fn int(&self, key: &'static str) -> Result<Option<i64>, ScenarioError> {
        match self.params.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or(ScenarioError::Param {
                name: key,
                problem: "not an integer",
            }),
        }
    }

    /// The string-to-string map parameter `key` (empty when absent).
    pub fn map(&self, key: &'static str) -> Result<BTreeMap<String, String>, ScenarioError> {
        let Some(value) = self.params.get(key) else {
            return Ok(BTreeMap::new());
        };
        let object = value.as_object().ok_or(ScenarioError::Param {
            name: key,
            problem: "not a map",
        })?;
        object
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|s| (k.clone(), s.to_owned()))
                    .ok_or(ScenarioError::Param {
                        name: key,
                        problem: "a value is not a string",
                    })
            })
            .collect()
    }

    /// The list-of-strings parameter `key` (empty when absent).
    pub fn list(&self, key: &'static str) -> Result<Vec<String>, ScenarioError> {
        let Some(value) = self.params.get(key) else {
            return Ok(Vec::new());
        };
        let items = value.as_array().ok_or(ScenarioError::Param {
            name: key,
            problem: "not a list",
        })?;
        items
            .iter()
            .map(|v| {
                v.as_str().map(str::to_owned).ok_or(ScenarioError::Param {
                    name: key,
                    problem: "an item is not a string",
                })
            })
            .collect()
    }
}
