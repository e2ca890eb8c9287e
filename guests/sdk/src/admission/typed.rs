//! The request's objects as typed values, and defaulting through a typed value.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{AdmissionRequest, Defaulted, Denial, FieldError};

/// The request's object and old object as `K` (`None` where the request has none). An
/// object that does not read as `K` is refused, naming the kind and the serde error.
pub fn typed<K: DeserializeOwned>(
    request: &AdmissionRequest,
) -> Result<(Option<K>, Option<K>), Denial> {
    let read = |value: &Option<Value>| -> Result<Option<K>, Denial> {
        value
            .as_ref()
            .map(|v| {
                serde_json::from_value(v.clone()).map_err(|e| Denial {
                    message: format!(
                        "{} {:?} cannot be read: {e}",
                        request.kind.kind, request.name
                    ),
                    fields: Vec::<FieldError>::new(),
                })
            })
            .transpose()
    };
    Ok((read(&request.object)?, read(&request.old_object)?))
}

/// Defaults the request's object through `K`: `default` changes the typed value, and what
/// it serializes to is laid over the object as it came. A field `K` does not know, or
/// leaves unset (`null`), keeps its value: defaulting never removes a field. Lists are
/// taken whole from the typed value.
pub fn default_typed<K: DeserializeOwned + Serialize>(
    request: &AdmissionRequest,
    default: impl FnOnce(&mut K),
) -> Result<Defaulted, Denial> {
    let (Some(mut object), _) = typed::<K>(request)? else {
        return Ok(super::unchanged(request));
    };
    default(&mut object);
    let typed = serde_json::to_value(&object).map_err(|e| Denial {
        message: format!(
            "{} {:?} cannot be written: {e}",
            request.kind.kind, request.name
        ),
        fields: Vec::new(),
    })?;
    let mut merged = request.object.clone().unwrap_or(Value::Null);
    overlay(&mut merged, typed);
    Ok(Defaulted {
        object: merged,
        warnings: Vec::new(),
    })
}

/// Lays `top` over `base`: maps key by key (a `null` in `top` leaves `base`'s value),
/// everything else replaced.
fn overlay(base: &mut Value, top: Value) {
    match (base, top) {
        (_, Value::Null) => {}
        (Value::Object(base), Value::Object(top)) => {
            for (key, value) in top {
                match base.get_mut(&key) {
                    Some(slot) => overlay(slot, value),
                    None if value.is_null() => {}
                    None => {
                        base.insert(key, value);
                    }
                }
            }
        }
        (base, top) => *base = top,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::KindRef;
    use crate::admission::{Operation, UserInfo};

    #[derive(serde::Deserialize, serde::Serialize)]
    struct Widget {
        spec: Spec,
    }

    #[derive(serde::Deserialize, serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Spec {
        replicas: Option<u32>,
        mode: Option<String>,
    }

    fn request(object: Value) -> AdmissionRequest {
        AdmissionRequest {
            operation: Operation::Create,
            kind: KindRef {
                api_version: "example.com/v1".into(),
                kind: "Widget".into(),
                plural: "widgets".into(),
                namespaced: true,
            },
            namespace: Some("ns".into()),
            name: "w".into(),
            object: Some(object),
            old_object: None,
            user: UserInfo::default(),
            dry_run: false,
        }
    }

    #[test]
    fn typed_defaulting_keeps_every_field_the_type_does_not_know() {
        let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "labels": {"a": "b"}},
            "spec": {"mode": "fast", "extra": {"kept": true}},
            "status": {"ready": true}});
        let defaulted = default_typed::<Widget>(&request(object), |w| {
            w.spec.replicas.get_or_insert(3);
        })
        .expect("defaulted");
        assert_eq!(
            defaulted.object,
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w", "labels": {"a": "b"}},
                "spec": {"mode": "fast", "replicas": 3, "extra": {"kept": true}},
                "status": {"ready": true}})
        );
    }

    #[test]
    fn an_object_that_does_not_read_as_the_type_is_refused_naming_it() {
        let denial = default_typed::<Widget>(&request(json!({"spec": {"replicas": "x"}})), |_| {})
            .expect_err("refused");
        assert!(
            denial
                .message
                .starts_with("Widget \"w\" cannot be read: invalid type: string \"x\""),
            "{}",
            denial.message
        );
        let ok = default_typed::<Widget>(&request(json!({"spec": {}})), |_| {});
        assert!(ok.is_ok());
    }
}
