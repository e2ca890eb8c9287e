//! Field errors worded as kube-apiserver's `field.ErrorList`, and the denial they make.

use serde_json::Value;

use super::{AdmissionRequest, Denial, FieldError};

/// Field errors of one object, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors {
    errors: Vec<FieldError>,
}

/// A value as kube-apiserver quotes it in an error: strings quoted, numbers and booleans
/// as they are, anything else as compact JSON.
fn quoted(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

impl FieldErrors {
    /// No errors yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn push(&mut self, field: &str, message: String) -> &mut Self {
        self.errors.push(FieldError {
            field: field.to_owned(),
            message,
        });
        self
    }

    /// `field: Required value` (with `: detail` when one is given).
    pub fn required(&mut self, field: &str, detail: &str) -> &mut Self {
        let message = if detail.is_empty() {
            "Required value".to_owned()
        } else {
            format!("Required value: {detail}")
        };
        self.push(field, message)
    }

    /// `field: Invalid value: <value>: detail`.
    pub fn invalid(&mut self, field: &str, value: &Value, detail: &str) -> &mut Self {
        self.push(field, format!("Invalid value: {}: {detail}", quoted(value)))
    }

    /// `field: Unsupported value: "x": supported values: "a", "b"`.
    pub fn not_supported(&mut self, field: &str, value: &Value, supported: &[&str]) -> &mut Self {
        let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        self.push(
            field,
            format!(
                "Unsupported value: {}: supported values: {}",
                quoted(value),
                list.join(", ")
            ),
        )
    }

    /// `field: Forbidden: detail`.
    pub fn forbidden(&mut self, field: &str, detail: &str) -> &mut Self {
        self.push(field, format!("Forbidden: {detail}"))
    }

    /// `field: Duplicate value: <value>`.
    pub fn duplicate(&mut self, field: &str, value: &Value) -> &mut Self {
        self.push(field, format!("Duplicate value: {}", quoted(value)))
    }

    /// `field: Too long: may not be more than <max> bytes` (the value is not shown).
    pub fn too_long(&mut self, field: &str, max: u64) -> &mut Self {
        self.push(field, format!("Too long: may not be more than {max} bytes"))
    }

    /// `field: Too many: <count>: must have at most <max> items`.
    pub fn too_many(&mut self, field: &str, count: u64, max: u64) -> &mut Self {
        self.push(
            field,
            format!("Too many: {count}: must have at most {max} items"),
        )
    }

    /// `field: Internal error: detail` — a check that could not be made (a failed read),
    /// which fails the request closed.
    pub fn internal(&mut self, field: &str, detail: &str) -> &mut Self {
        self.push(field, format!("Internal error: {detail}"))
    }

    /// Whether no error was found.
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The errors found.
    pub fn errors(&self) -> &[FieldError] {
        &self.errors
    }

    /// `Ok` without errors; otherwise the denial of `request`'s object, worded as
    /// kube-apiserver's Invalid status: `Kind.group "name" is invalid: <error>`, or
    /// `[<error>, <error>]` for several.
    pub fn into_result(self, request: &AdmissionRequest) -> Result<(), Denial> {
        if self.errors.is_empty() {
            return Ok(());
        }
        let group = request
            .kind
            .api_version
            .rsplit_once('/')
            .map(|(group, _)| group)
            .unwrap_or("");
        let qualified = if group.is_empty() {
            request.kind.kind.clone()
        } else {
            format!("{}.{group}", request.kind.kind)
        };
        let listed: Vec<String> = self.errors.iter().map(ToString::to_string).collect();
        let body = match listed.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        Err(Denial {
            message: format!("{qualified} {:?} is invalid: {body}", request.name),
            fields: self.errors,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::KindRef;
    use crate::admission::{Operation, UserInfo};

    fn request() -> AdmissionRequest {
        AdmissionRequest {
            operation: Operation::Create,
            kind: KindRef {
                api_version: "keystone.openstack.c5c3.io/v1alpha1".into(),
                kind: "Keystone".into(),
                plural: "keystones".into(),
                namespaced: true,
            },
            namespace: Some("ns".into()),
            name: "k".into(),
            object: Some(json!({})),
            old_object: None,
            user: UserInfo::default(),
            dry_run: false,
        }
    }

    #[test]
    fn field_errors_are_worded_as_kube_apiserver_words_them() {
        type Add = fn(&mut FieldErrors);
        let cases: [(Add, &str); 9] = [
            (
                |e| {
                    e.invalid("spec.fernet.maxActiveKeys", &json!(2), "must be at least 3");
                },
                "spec.fernet.maxActiveKeys: Invalid value: 2: must be at least 3",
            ),
            (
                |e| {
                    e.invalid("spec.region", &json!("a b"), "must be a DNS label");
                },
                "spec.region: Invalid value: \"a b\": must be a DNS label",
            ),
            (
                |e| {
                    e.required("spec.database", "");
                },
                "spec.database: Required value",
            ),
            (
                |e| {
                    e.not_supported("spec.mode", &json!("x"), &["a", "b"]);
                },
                "spec.mode: Unsupported value: \"x\": supported values: \"a\", \"b\"",
            ),
            (
                |e| {
                    e.forbidden("spec.extraConfig.database", "operator-owned");
                },
                "spec.extraConfig.database: Forbidden: operator-owned",
            ),
            (
                |e| {
                    e.duplicate("spec.backends[1].name", &json!("ldap"));
                },
                "spec.backends[1].name: Duplicate value: \"ldap\"",
            ),
            (
                |e| {
                    e.too_long("spec.database.database", 64);
                },
                "spec.database.database: Too long: may not be more than 64 bytes",
            ),
            (
                |e| {
                    e.too_many("spec.federation.trustedDashboards", 9, 8);
                },
                "spec.federation.trustedDashboards: Too many: 9: must have at most 8 items",
            ),
            (
                |e| {
                    e.internal("spec.domain.name", "listing failed: timeout");
                },
                "spec.domain.name: Internal error: listing failed: timeout",
            ),
        ];
        for (add, expected) in cases {
            let mut errors = FieldErrors::new();
            add(&mut errors);
            assert_eq!(errors.errors()[0].to_string(), expected);
        }
    }

    #[test]
    fn one_error_is_named_bare_and_several_in_brackets() {
        assert_eq!(FieldErrors::new().into_result(&request()), Ok(()));
        let mut one = FieldErrors::new();
        one.required("spec.database", "");
        let denial = one.into_result(&request()).expect_err("denied");
        assert_eq!(
            denial.message,
            "Keystone.keystone.openstack.c5c3.io \"k\" is invalid: spec.database: Required value"
        );
        assert_eq!(denial.fields.len(), 1);
        let mut two = FieldErrors::new();
        two.required("spec.a", "").forbidden("spec.b", "no");
        let denial = two.into_result(&request()).expect_err("denied");
        assert_eq!(
            denial.message,
            "Keystone.keystone.openstack.c5c3.io \"k\" is invalid: [spec.a: Required value, spec.b: Forbidden: no]"
        );
    }
}
