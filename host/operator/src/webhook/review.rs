//! AdmissionReview v1 as the API server sends it and as the host answers it.

use base64::Engine as _;
use serde_json::{Value, json};
use wasm_operator_types::admission::{AdmissionRequest, Denial, Operation, UserInfo};
use wasm_operator_types::{KindRef, split_api_version};

/// Why a review cannot be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub(crate) enum ReviewError {
    #[error("the body is not an admission.k8s.io/v1 AdmissionReview: {0}")]
    NotAReview(String),
    #[error("request.{field} is missing")]
    Missing { field: &'static str },
}

/// The parts of `request` the host uses.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Review {
    pub uid: String,
    /// `None` for an operation admission does not serve (`CONNECT`).
    pub operation: Option<Operation>,
    pub group: String,
    pub version: String,
    pub kind: String,
    pub resource: String,
    pub sub_resource: String,
    pub namespace: Option<String>,
    pub name: String,
    pub object: Option<Value>,
    pub old_object: Option<Value>,
    pub user: UserInfo,
    pub dry_run: bool,
}

fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

impl Review {
    /// Reads an AdmissionReview body.
    pub(crate) fn parse(body: &[u8]) -> Result<Self, ReviewError> {
        let review: Value =
            serde_json::from_slice(body).map_err(|e| ReviewError::NotAReview(e.to_string()))?;
        if review.get("apiVersion").and_then(Value::as_str) != Some("admission.k8s.io/v1")
            || review.get("kind").and_then(Value::as_str) != Some("AdmissionReview")
        {
            return Err(ReviewError::NotAReview(format!(
                "apiVersion {:?}, kind {:?}",
                review.get("apiVersion"),
                review.get("kind")
            )));
        }
        let request = review
            .get("request")
            .ok_or(ReviewError::Missing { field: "request" })?;
        let uid = text(request, "/uid");
        if uid.is_empty() {
            return Err(ReviewError::Missing { field: "uid" });
        }
        let present = |key: &str| request.get(key).filter(|v| !v.is_null()).cloned();
        Ok(Self {
            uid,
            operation: Operation::parse(&text(request, "/operation")),
            group: text(request, "/kind/group"),
            version: text(request, "/kind/version"),
            kind: text(request, "/kind/kind"),
            resource: text(request, "/resource/resource"),
            sub_resource: text(request, "/subResource"),
            namespace: Some(text(request, "/namespace")).filter(|ns| !ns.is_empty()),
            name: text(request, "/name"),
            object: present("object"),
            old_object: present("oldObject"),
            user: UserInfo {
                username: text(request, "/userInfo/username"),
                uid: text(request, "/userInfo/uid"),
                groups: request
                    .pointer("/userInfo/groups")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|g| g.as_str().map(str::to_owned))
                    .collect(),
            },
            dry_run: request.get("dryRun").and_then(Value::as_bool) == Some(true),
        })
    }

    /// `group/version` (or `version` for the core group).
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the review is about `kind` (same group, version and kind).
    pub(crate) fn is_of(&self, kind: &KindRef) -> bool {
        let (group, version) = split_api_version(&kind.api_version);
        group == self.group && version == self.version && kind.kind == self.kind
    }

    /// The request in the contract's types, for a kind the plugin admits.
    pub(crate) fn request(&self, kind: &KindRef, operation: Operation) -> AdmissionRequest {
        // A create with generateName has no name yet; the object may still carry one.
        let name = if self.name.is_empty() {
            self.object
                .as_ref()
                .and_then(|o| o.pointer("/metadata/name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        } else {
            self.name.clone()
        };
        AdmissionRequest {
            operation,
            kind: kind.clone(),
            namespace: self.namespace.clone(),
            name,
            object: self.object.clone(),
            old_object: self.old_object.clone(),
            user: self.user.clone(),
            dry_run: self.dry_run,
        }
    }
}

/// How the host answers one review.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// Allowed, with a JSON patch when the object changed.
    Allowed {
        patch: Option<json_patch::Patch>,
        warnings: Vec<String>,
    },
    /// Refused by the plugin.
    Denied {
        denial: Denial,
        warnings: Vec<String>,
    },
    /// The plugin failed and its failure policy refuses the write.
    Failed { message: String },
}

/// The AdmissionReview answering `uid` with `answer`, for an object of `review`'s kind.
pub(crate) fn response(review: &Review, answer: &Answer) -> Value {
    let mut response = json!({"uid": review.uid});
    match answer {
        Answer::Allowed { patch, warnings } => {
            response["allowed"] = json!(true);
            if let Some(patch) = patch {
                let bytes = serde_json::to_vec(patch).unwrap_or_default();
                response["patchType"] = json!("JSONPatch");
                response["patch"] = json!(base64::engine::general_purpose::STANDARD.encode(bytes));
            }
            if !warnings.is_empty() {
                response["warnings"] = json!(warnings);
            }
        }
        Answer::Denied { denial, warnings } => {
            response["allowed"] = json!(false);
            response["status"] = denial_status(review, denial);
            if !warnings.is_empty() {
                response["warnings"] = json!(warnings);
            }
        }
        Answer::Failed { message } => {
            response["allowed"] = json!(false);
            response["status"] = json!({"status": "Failure", "code": 500,
                "reason": "InternalError", "message": message});
        }
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// A denial as kube-apiserver's Status: 422 Invalid with one cause per field, or 403
/// Forbidden when it names no field.
fn denial_status(review: &Review, denial: &Denial) -> Value {
    if denial.fields.is_empty() {
        return json!({"status": "Failure", "code": 403, "reason": "Forbidden",
            "message": denial.message});
    }
    let causes: Vec<Value> = denial
        .fields
        .iter()
        .map(|f| json!({"reason": "FieldValueInvalid", "field": f.field, "message": f.message}))
        .collect();
    json!({"status": "Failure", "code": 422, "reason": "Invalid", "message": denial.message,
        "details": {"name": review.name, "group": review.group, "kind": review.kind,
            "causes": causes}})
}

#[cfg(test)]
mod tests {
    use wasm_operator_types::admission::FieldError;

    use super::*;

    fn body(request: Value) -> Vec<u8> {
        serde_json::to_vec(&json!({"apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview", "request": request}))
        .expect("JSON")
    }

    fn review() -> Review {
        Review::parse(&body(json!({"uid": "u-1", "operation": "CREATE",
            "kind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "resource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "namespace": "ns", "name": "w",
            "userInfo": {"username": "alice", "uid": "a-1", "groups": ["dev"]},
            "object": {"spec": {}}, "oldObject": null, "dryRun": true})))
        .expect("a review")
    }

    #[test]
    fn a_review_is_read_with_its_kind_user_and_objects() {
        let r = review();
        assert_eq!(r.operation, Some(Operation::Create));
        assert_eq!(r.api_version(), "example.com/v1");
        assert_eq!(r.namespace.as_deref(), Some("ns"));
        assert_eq!(r.user.username, "alice");
        assert_eq!(r.user.groups, ["dev"]);
        assert_eq!(r.object, Some(json!({"spec": {}})));
        assert_eq!(r.old_object, None);
        assert!(r.dry_run);
    }

    #[test]
    fn a_body_that_is_not_a_review_is_refused_naming_why() {
        let cases: [(&[u8], ReviewError); 3] = [
            (b"{", ReviewError::NotAReview("EOF while parsing an object at line 1 column 1".into())),
            (
                br#"{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview"}"#,
                ReviewError::NotAReview(
                    "apiVersion Some(String(\"admission.k8s.io/v1beta1\")), kind Some(String(\"AdmissionReview\"))".into(),
                ),
            ),
            (
                br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"operation":"CREATE"}}"#,
                ReviewError::Missing { field: "uid" },
            ),
        ];
        for (bad, expected) in cases {
            assert_eq!(Review::parse(bad), Err(expected));
        }
        assert!(Review::parse(&body(json!({"uid": "u"}))).is_ok());
    }

    #[test]
    fn a_denial_with_fields_answers_422_invalid_with_one_cause_per_field() {
        let denial = Denial {
            message: "Widget.example.com \"w\" is invalid: spec.size: Required value".into(),
            fields: vec![FieldError {
                field: "spec.size".into(),
                message: "Required value".into(),
            }],
        };
        let answer = response(
            &review(),
            &Answer::Denied {
                denial,
                warnings: vec!["careful".into()],
            },
        );
        assert_eq!(
            answer["response"],
            json!({"uid": "u-1", "allowed": false, "warnings": ["careful"],
                "status": {"status": "Failure", "code": 422, "reason": "Invalid",
                    "message": "Widget.example.com \"w\" is invalid: spec.size: Required value",
                    "details": {"name": "w", "group": "example.com", "kind": "Widget",
                        "causes": [{"reason": "FieldValueInvalid", "field": "spec.size",
                            "message": "Required value"}]}}})
        );
    }

    #[test]
    fn an_allowed_change_answers_a_base64_json_patch() {
        let patch = json_patch::diff(&json!({"spec": {}}), &json!({"spec": {"size": 3}}));
        let answer = response(
            &review(),
            &Answer::Allowed {
                patch: Some(patch),
                warnings: vec![],
            },
        );
        assert_eq!(answer["response"]["patchType"], "JSONPatch");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(answer["response"]["patch"].as_str().expect("patch"))
            .expect("base64");
        assert_eq!(
            serde_json::from_slice::<Value>(&bytes).expect("JSON"),
            json!([{"op": "add", "path": "/spec/size", "value": 3}])
        );
        assert!(answer["response"].get("warnings").is_none());
    }
}
