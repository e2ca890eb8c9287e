//! CustomResourceDefinitions: what the server checks and sets on a CRD, and how it admits
//! the custom resources a CRD serves.

use serde_json::{Value, json};

use crate::admission::Admitted;
use crate::objects::meta_str;
use crate::registry::ResourceType;
use crate::route::Params;
use crate::schema;
use crate::status::{ApiError, Result};

/// Checks a new CRD (names, versions, printer columns, structural schemas) and sets what the
/// server sets: default names, the status conditions `NamesAccepted` and `Established`,
/// accepted names and stored versions.
pub(crate) fn on_create(rt: &ResourceType, crd: &mut Value) -> Result<()> {
    let name = meta_str(crd, "name").unwrap_or_default().to_owned();
    let spec = crd
        .get_mut("spec")
        .ok_or_else(|| invalid(rt, &name, "spec", "Required value"))?;
    let group = spec["group"].as_str().unwrap_or_default().to_owned();
    let plural = spec
        .pointer("/names/plural")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let kind = spec
        .pointer("/names/kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    for (value, field) in [
        (&group, "spec.group"),
        (&plural, "spec.names.plural"),
        (&kind, "spec.names.kind"),
    ] {
        if value.is_empty() {
            return Err(invalid(rt, &name, field, "Required value"));
        }
    }
    if name != format!("{plural}.{group}") {
        return Err(invalid(
            rt,
            &name,
            "metadata.name",
            &format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        return Err(invalid(
            rt,
            &name,
            "spec.versions",
            "Invalid value: null: must have exactly one version marked as storage version",
        ));
    }
    let storage: Vec<&Value> = versions
        .iter()
        .filter(|v| v["storage"] == json!(true))
        .collect();
    if storage.len() != 1 {
        return Err(invalid(
            rt,
            &name,
            "spec.versions",
            "Invalid value: must have exactly one version marked as storage version",
        ));
    }
    for (i, version) in versions.iter().enumerate() {
        let columns = version["additionalPrinterColumns"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let path = format!("spec.versions[{i}].additionalPrinterColumns");
        if let Some((field, error)) = crate::table::column_errors(columns, &path).first() {
            return Err(invalid(rt, &name, field, error));
        }
    }
    check_schemas(rt, &name, &versions)?;
    let storage_version = storage[0]["name"].clone();
    let names = &mut spec["names"];
    if names.get("singular").is_none() {
        names["singular"] = json!(kind.to_lowercase());
    }
    if names.get("listKind").is_none() {
        names["listKind"] = json!(format!("{kind}List"));
    }
    let accepted = names.clone();
    if spec.get("conversion").is_none() {
        spec["conversion"] = json!({"strategy": "None"});
    }
    let now = crate::objects::now();
    crd["status"] = json!({
        "acceptedNames": accepted,
        "storedVersions": [storage_version],
        "conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found", "lastTransitionTime": now},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted", "message": "the initial names have been accepted", "lastTransitionTime": now},
        ],
    });
    Ok(())
}

/// Checks an updated CRD's version schemas as a new one's are checked.
pub(crate) fn on_update(rt: &ResourceType, name: &str, crd: &Value) -> Result<()> {
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    check_schemas(rt, name, versions)
}

/// The structural checks and the validation rules' checks of every version's schema: one
/// 422 with every error of the first version that has any.
fn check_schemas(rt: &ResourceType, name: &str, versions: &[Value]) -> Result<()> {
    for (i, version) in versions.iter().enumerate() {
        let Some(openapi) = version.pointer("/schema/openAPIV3Schema") else {
            continue;
        };
        let path = format!("spec.versions[{i}].schema.openAPIV3Schema");
        let mut errors = schema::check_structural(openapi, &path);
        errors.extend(schema::check_rules(openapi, &path));
        if !errors.is_empty() {
            return Err(invalid_object(rt, name, &errors));
        }
    }
    Ok(())
}

fn invalid(rt: &ResourceType, name: &str, field: &str, error: &str) -> ApiError {
    let reason = if error.starts_with("Required") {
        "FieldValueRequired"
    } else {
        "FieldValueInvalid"
    };
    ApiError::invalid_field(rt, name, field, reason, error)
}

/// The 422 of an object (a CRD, a custom resource) with field `errors`.
fn invalid_object(rt: &ResourceType, name: &str, errors: &[schema::FieldError]) -> ApiError {
    ApiError::invalid(
        rt,
        name,
        schema::invalid_message(&rt.qualified_kind(), name, errors),
        causes(errors),
    )
}

fn causes(errors: &[schema::FieldError]) -> Vec<Value> {
    schema::causes(errors)
        .into_iter()
        .filter_map(|c| serde_json::to_value(c).ok())
        .collect()
}

/// Admits a custom resource through its version's schema: unknown fields are pruned and
/// handled by `fieldValidation` (Strict: 400; Warn, the default: a warning; Ignore:
/// silently), defaults are applied, and the object is validated (422) by the schema and
/// its CEL rules (`old`: the stored object of an update, for transition rules and
/// ratcheting).
pub(crate) fn admit(
    rt: &ResourceType,
    openapi: &std::sync::Arc<Value>,
    name: &str,
    mut object: Value,
    old: Option<&Value>,
    params: &Params,
) -> Result<Admitted> {
    let unknown = schema::prune(openapi, &mut object);
    let mut warnings = Vec::new();
    if !unknown.is_empty() {
        match params.get("fieldValidation") {
            Some("Strict") => return Err(ApiError::bad_request(schema::strict_error(&unknown))),
            Some("Ignore") => {}
            _ => warnings = schema::warnings(&unknown),
        }
    }
    schema::apply_defaults(openapi, &mut object);
    let mut errors = schema::validate(openapi, &object);
    if errors
        .iter()
        .any(|e| e.kind == schema::FieldErrorKind::TypeInvalid)
    {
        // A value of the wrong type cannot be given to a rule (kube's hasBlockingErr).
        errors.push(schema::FieldError::invalid(
            "<nil>",
            Value::Null,
            "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
        ));
    } else {
        let rules = schema::validate_rules(openapi, &object, old);
        errors.extend(rules.errors);
        warnings.extend(rules.warnings);
    }
    if !errors.is_empty() {
        return Err(invalid_object(rt, name, &errors));
    }
    Ok(Admitted { object, warnings })
}

/// The fields of an applied object its schema does not declare, as server-side apply
/// reports them (`.spec.policy`).
pub(crate) fn undeclared(openapi: &Value, applied: &Value) -> Vec<String> {
    let mut copy = applied.clone();
    schema::prune(openapi, &mut copy)
}
