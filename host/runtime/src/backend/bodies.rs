//! What a plugin may write into an object beyond its verbs: owner references only to its
//! own primary, and no service-account-token Secrets.
//!
//! An owner reference names the object whose deletion collects the owned one, and whose
//! controller is woken by it; a plugin that could name any owner could have the garbage
//! collector delete another plugin's objects. A `kubernetes.io/service-account-token`
//! Secret is filled with a token of the account it names: creating one mints credentials.

use serde_json::Value;
use wasm_operator_types::{ApiError, ObjectRef, Owner, Patch};

/// The primary of one pass: the only owner a plugin may name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Primary {
    pub object: ObjectRef,
    /// Its uid; `None` when it no longer exists (then nothing may be owned by it).
    pub uid: Option<String>,
}

/// `apiVersion/kind namespace/name`, for messages.
struct Full<'a>(&'a ObjectRef);

impl std::fmt::Display for Full<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.0.api_version, self.0)
    }
}

const SERVICE_ACCOUNT_TOKEN: &str = "kubernetes.io/service-account-token";

fn forbidden(plugin: &str, message: String) -> ApiError {
    tracing::warn!(plugin, %message, "refused a write");
    ApiError::Forbidden(format!("plugin {plugin}: {message}"))
}

impl Primary {
    fn is(&self, api_version: &str, kind: &str, name: &str, uid: &str) -> bool {
        self.object.api_version == api_version
            && self.object.kind == kind
            && self.object.name == name
            && self.uid.as_deref() == Some(uid)
    }

    fn describe(&self) -> String {
        let uid = self.uid.as_deref().unwrap_or("<gone>");
        format!("{} (uid {uid})", Full(&self.object))
    }

    /// `Ok` when `owner` is this primary, and `target` (the owned object) lives in its
    /// namespace.
    pub(crate) fn check_owner(
        &self,
        plugin: &str,
        owner: &Owner,
        target: &ObjectRef,
    ) -> Result<(), ApiError> {
        let same_namespace = target.namespace == self.object.namespace;
        let target = Full(target);
        if !self.is(&owner.api_version, &owner.kind, &owner.name, &owner.uid) {
            return Err(forbidden(
                plugin,
                format!(
                    "{target}: the owner {}/{} {} (uid {}) is not the pass's primary {}",
                    owner.api_version,
                    owner.kind,
                    owner.name,
                    owner.uid,
                    self.describe()
                ),
            ));
        }
        if !same_namespace && self.object.namespace.is_some() {
            return Err(forbidden(
                plugin,
                format!(
                    "{target}: an object owned by {} must be in its namespace",
                    self.describe()
                ),
            ));
        }
        Ok(())
    }

    /// `Ok` when every entry of `references` (a `metadata.ownerReferences` value, or one
    /// entry of it) names this primary.
    fn check_references(
        &self,
        plugin: &str,
        target: &ObjectRef,
        references: &Value,
    ) -> Result<(), ApiError> {
        let target = Full(target);
        let entries: Vec<&Value> = match references {
            Value::Null => return Ok(()),
            Value::Array(entries) => entries.iter().collect(),
            entry => vec![entry],
        };
        for entry in entries {
            let field = |name: &str| entry.get(name).and_then(Value::as_str).unwrap_or("");
            if !self.is(
                field("apiVersion"),
                field("kind"),
                field("name"),
                field("uid"),
            ) {
                return Err(forbidden(
                    plugin,
                    format!(
                        "{target}: metadata.ownerReferences names {}/{} {} (uid {}); a plugin \
                         may only name its pass's primary {}",
                        field("apiVersion"),
                        field("kind"),
                        field("name"),
                        field("uid"),
                        self.describe()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks the body of an apply or create.
    pub(crate) fn check_body(
        &self,
        plugin: &str,
        target: &ObjectRef,
        body: &Value,
    ) -> Result<(), ApiError> {
        if let Some(references) = body.pointer("/metadata/ownerReferences") {
            self.check_references(plugin, target, references)?;
        }
        check_type(plugin, target, body.get("type"))
    }

    /// Checks a patch of `target`.
    pub(crate) fn check_patch(
        &self,
        plugin: &str,
        target: &ObjectRef,
        patch: &Patch,
    ) -> Result<(), ApiError> {
        match patch {
            Patch::Merge(body) => self.check_body(plugin, target, body),
            Patch::Json(ops) => {
                const REFERENCES: &str = "/metadata/ownerReferences";
                for op in ops.as_array().into_iter().flatten() {
                    let path = op.get("path").and_then(Value::as_str).unwrap_or("");
                    let verb = op.get("op").and_then(Value::as_str).unwrap_or("");
                    let value = op.get("value").unwrap_or(&Value::Null);
                    let references =
                        path == REFERENCES || path.starts_with("/metadata/ownerReferences/");
                    if matches!(verb, "remove" | "test") {
                        continue;
                    }
                    if matches!(verb, "move" | "copy")
                        && (references || path.is_empty() || path == "/metadata" || path == "/type")
                    {
                        return Err(forbidden(
                            plugin,
                            format!(
                                "{}: a JSON patch may not {verb} into {path:?}",
                                Full(target)
                            ),
                        ));
                    }
                    match path {
                        "" => self.check_body(plugin, target, value)?,
                        "/metadata" => self.check_body(
                            plugin,
                            target,
                            &serde_json::json!({"metadata": value}),
                        )?,
                        "/type" => check_type(plugin, target, Some(value))?,
                        _ if references => self.check_references(plugin, target, value)?,
                        _ => {}
                    }
                }
                Ok(())
            }
        }
    }
}

/// Whether an apply or create body sets owner references (and so needs the primary's uid).
pub(crate) fn body_names_owners(body: &Value) -> bool {
    body.pointer("/metadata/ownerReferences").is_some()
}

/// Whether a patch may set owner references: a merge patch naming them, or a JSON patch
/// operation on the whole object or under `/metadata`.
pub(crate) fn patch_names_owners(patch: &Patch) -> bool {
    match patch {
        Patch::Merge(body) => body_names_owners(body),
        Patch::Json(ops) => ops.as_array().into_iter().flatten().any(|op| {
            op.get("path")
                .and_then(Value::as_str)
                .is_some_and(|p| p.is_empty() || p.starts_with("/metadata"))
        }),
    }
}

/// Refuses a Secret of type service-account-token.
fn check_type(plugin: &str, target: &ObjectRef, value: Option<&Value>) -> Result<(), ApiError> {
    let is_secret = target.api_version == "v1" && target.kind == "Secret";
    let target = Full(target);
    if is_secret && value.and_then(Value::as_str) == Some(SERVICE_ACCOUNT_TOKEN) {
        return Err(forbidden(
            plugin,
            format!("{target}: plugins may not write Secrets of type {SERVICE_ACCOUNT_TOKEN}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn primary() -> Primary {
        Primary {
            object: ObjectRef {
                api_version: "example.com/v1".into(),
                kind: "Widget".into(),
                namespace: Some("a".into()),
                name: "w".into(),
            },
            uid: Some("uid-w".into()),
        }
    }

    fn secret(namespace: &str) -> ObjectRef {
        ObjectRef {
            api_version: "v1".into(),
            kind: "Secret".into(),
            namespace: Some(namespace.into()),
            name: "s".into(),
        }
    }

    fn reference(name: &str, uid: &str) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": name, "uid": uid, "controller": true})
    }

    #[test]
    fn only_the_passs_primary_may_be_named_owner() {
        let p = primary();
        let owner = |name: &str, uid: &str| Owner {
            api_version: "example.com/v1".into(),
            kind: "Widget".into(),
            name: name.into(),
            uid: uid.into(),
        };
        assert_eq!(
            p.check_owner("p", &owner("w", "uid-w"), &secret("a")),
            Ok(())
        );
        let cases = [
            (
                owner("other", "uid-other"),
                secret("a"),
                "is not the pass's primary example.com/v1/Widget a/w (uid uid-w)",
            ),
            (
                owner("w", "forged"),
                secret("a"),
                "(uid forged) is not the pass's primary",
            ),
            (owner("w", "uid-w"), secret("b"), "must be in its namespace"),
        ];
        for (owner, target, fragment) in cases {
            match p.check_owner("p", &owner, &target) {
                Err(ApiError::Forbidden(message)) => {
                    assert!(message.contains(fragment), "{message:?} lacks {fragment:?}")
                }
                other => panic!("{owner:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn owner_references_in_a_body_or_patch_must_name_the_primary() {
        let p = primary();
        let target = secret("a");
        let ok_body = json!({"metadata": {"ownerReferences": [reference("w", "uid-w")]}});
        assert_eq!(p.check_body("p", &target, &ok_body), Ok(()));
        let foreign = json!({"metadata": {"ownerReferences": [reference("w", "uid-w"), reference("x", "uid-x")]}});
        let cases = [
            Patch::Merge(foreign.clone()),
            Patch::Json(
                json!([{"op": "add", "path": "/metadata/ownerReferences", "value": [reference("x", "uid-x")]}]),
            ),
            Patch::Json(
                json!([{"op": "add", "path": "/metadata/ownerReferences/-", "value": reference("x", "uid-x")}]),
            ),
            Patch::Json(
                json!([{"op": "replace", "path": "/metadata", "value": {"ownerReferences": [reference("x", "uid-x")]}}]),
            ),
        ];
        for patch in cases {
            match p.check_patch("p", &target, &patch) {
                Err(ApiError::Forbidden(message)) => assert!(
                    message.contains(
                        "metadata.ownerReferences names example.com/v1/Widget x (uid uid-x)"
                    ),
                    "{message:?}"
                ),
                other => panic!("{patch:?}: {other:?}"),
            }
        }
        let moved = Patch::Json(
            json!([{"op": "copy", "from": "/metadata/labels", "path": "/metadata/ownerReferences"}]),
        );
        assert!(
            matches!(p.check_patch("p", &target, &moved), Err(ApiError::Forbidden(m)) if m.contains("may not copy into \"/metadata/ownerReferences\""))
        );
        let removal = Patch::Json(json!([{"op": "remove", "path": "/metadata/ownerReferences/0"}]));
        assert_eq!(p.check_patch("p", &target, &removal), Ok(()));
    }

    #[test]
    fn a_service_account_token_secret_is_refused() {
        let p = primary();
        let target = secret("a");
        assert_eq!(
            p.check_body("p", &target, &json!({"type": "Opaque"})),
            Ok(())
        );
        for patch in [
            Patch::Merge(json!({"type": SERVICE_ACCOUNT_TOKEN})),
            Patch::Json(
                json!([{"op": "replace", "path": "/type", "value": SERVICE_ACCOUNT_TOKEN}]),
            ),
        ] {
            assert_eq!(
                p.check_patch("p", &target, &patch),
                Err(ApiError::Forbidden(format!(
                    "plugin p: v1/Secret a/s: plugins may not write Secrets of type {SERVICE_ACCOUNT_TOKEN}"
                )))
            );
        }
    }
}
