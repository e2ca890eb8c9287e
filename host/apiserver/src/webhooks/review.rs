//! The AdmissionReview a webhook receives, and what the server accepts back
//! (`VerifyAdmissionResponse`): the uid, the kind, patch and patchType together.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::authn::User;
use crate::registry::ResourceType;

/// What one call sends: the request's attributes as one webhook sees them.
pub(crate) struct ReviewRequest<'a> {
    pub uid: &'a str,
    /// The resource type the webhook matched (the request's, or an equivalent version).
    pub matched: &'a ResourceType,
    /// The request's own resource type.
    pub requested: &'a ResourceType,
    pub subresource: Option<&'a str>,
    pub name: &'a str,
    pub namespace: Option<&'a str>,
    pub operation: &'a str,
    pub user: &'a User,
    pub object: Option<&'a Value>,
    pub old: Option<&'a Value>,
    pub dry_run: bool,
    pub options: &'a Value,
}

fn gvk(rt: &ResourceType) -> Value {
    json!({"group": rt.group, "version": rt.version, "kind": rt.kind})
}

fn gvr(rt: &ResourceType) -> Value {
    json!({"group": rt.group, "version": rt.version, "resource": rt.plural})
}

/// `object` as the matched version names it (the apiVersion of an equivalent version).
pub(crate) fn as_version(object: &Value, rt: &ResourceType) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.insert("apiVersion".into(), json!(rt.api_version()));
    }
    object
}

impl ReviewRequest<'_> {
    /// The AdmissionReview body in `version` (`v1` or `v1beta1`).
    pub(crate) fn body(&self, version: &str) -> Value {
        let mut request = Map::new();
        request.insert("uid".into(), json!(self.uid));
        request.insert("kind".into(), gvk(self.matched));
        request.insert("resource".into(), gvr(self.matched));
        request.insert("requestKind".into(), gvk(self.requested));
        request.insert("requestResource".into(), gvr(self.requested));
        if let Some(sub) = self.subresource {
            request.insert("subResource".into(), json!(sub));
            request.insert("requestSubResource".into(), json!(sub));
        }
        if !self.name.is_empty() {
            request.insert("name".into(), json!(self.name));
        }
        if let Some(ns) = self.namespace {
            request.insert("namespace".into(), json!(ns));
        }
        request.insert("operation".into(), json!(self.operation));
        request.insert("userInfo".into(), self.user.info());
        let versioned = |o: Option<&Value>| {
            o.map(|o| as_version(o, self.matched))
                .unwrap_or(Value::Null)
        };
        request.insert("object".into(), versioned(self.object));
        request.insert("oldObject".into(), versioned(self.old));
        request.insert("dryRun".into(), json!(self.dry_run));
        request.insert("options".into(), self.options.clone());
        json!({
            "apiVersion": format!("admission.k8s.io/{version}"),
            "kind": "AdmissionReview",
            "request": request,
        })
    }
}

/// A webhook's verified answer.
#[derive(Debug)]
pub(crate) struct ReviewResponse {
    pub allowed: bool,
    /// `response.status` (the denial's Status), if any.
    pub status: Option<Value>,
    /// The decoded JSONPatch, if the webhook returned one.
    pub patch: Option<Vec<u8>>,
    pub warnings: Vec<String>,
}

/// Checks `body` as kube-apiserver's `VerifyAdmissionResponse` does; `Err` carries its
/// text (wrapped by the caller as `received invalid webhook response: ...`).
pub(crate) fn verify(
    body: &[u8],
    uid: &str,
    version: &str,
    mutating: bool,
) -> Result<ReviewResponse, String> {
    let review: Value = serde_json::from_slice(body)
        .map_err(|e| format!("cannot decode the AdmissionReview: {e}"))?;
    let response = review
        .get("response")
        .filter(|r| r.is_object())
        .ok_or("webhook response was absent")?;
    let got_uid = response["uid"].as_str().unwrap_or_default();
    if got_uid != uid {
        return Err(format!(
            "expected response.uid=\"{uid}\", got \"{got_uid}\""
        ));
    }
    let expected = format!("admission.k8s.io/{version}");
    let api_version = review["apiVersion"].as_str().unwrap_or_default();
    let kind = review["kind"].as_str().unwrap_or_default();
    if api_version != expected || kind != "AdmissionReview" {
        let (group, ver) = api_version.split_once('/').unwrap_or(("", api_version));
        return Err(format!(
            "expected webhook response of {expected}, Kind=AdmissionReview, got {group}/{ver}, Kind={kind}"
        ));
    }
    let patch = response["patch"].as_str().filter(|p| !p.is_empty());
    let patch_type = response["patchType"].as_str();
    if mutating {
        match (patch, patch_type) {
            (Some(_), None) => {
                return Err("webhook returned response.patch but not response.patchType".into());
            }
            (None, Some(_)) => {
                return Err("webhook returned response.patchType but not response.patch".into());
            }
            (Some(_), Some(t)) if t != "JSONPatch" => {
                return Err(format!(
                    "webhook returned invalid response.patchType of \"{t}\""
                ));
            }
            _ => {}
        }
    } else if patch.is_some() || patch_type.is_some() {
        return Err(
            "validating webhook may not return response.patch or response.patchType".into(),
        );
    }
    let patch = patch
        .map(|p| {
            base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("response.patch is not base64: {e}"))
        })
        .transpose()?;
    Ok(ReviewResponse {
        allowed: response["allowed"].as_bool().unwrap_or(false),
        status: response.get("status").filter(|s| s.is_object()).cloned(),
        patch,
        warnings: response["warnings"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
    })
}
