use axum::http::HeaderMap;
use serde_json::json;

use super::{Include, TableRequest, column_errors, negotiate};
use crate::route::Params;

const KUBECTL: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

fn accept(value: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert("accept", value.parse().expect("a header value"));
    headers
}

fn table(api_version: &'static str, include: Include) -> Option<TableRequest> {
    Some(TableRequest {
        api_version,
        include,
    })
}

#[test]
fn the_first_servable_accept_clause_decides_between_a_table_and_the_object() {
    let cases = [
        (KUBECTL, table("meta.k8s.io/v1", Include::Metadata)),
        (
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            table("meta.k8s.io/v1beta1", Include::Metadata),
        ),
        (
            "application/json; as=Table; g=meta.k8s.io; v=v1",
            table("meta.k8s.io/v1", Include::Metadata),
        ),
        (
            "application/json;as=Table;v=v2;g=meta.k8s.io,application/json;as=Table;v=v1;g=meta.k8s.io",
            table("meta.k8s.io/v1", Include::Metadata),
        ),
        (
            "application/json;as=Table;v=v1;g=example.com,application/json",
            None,
        ),
        (
            "application/json,application/json;as=Table;v=v1;g=meta.k8s.io",
            None,
        ),
        ("application/json", None),
        ("*/*", None),
        (
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
            None,
        ),
    ];
    for (header, expected) in cases {
        let got = negotiate(&accept(header), &Params::default()).expect(header);
        assert_eq!(got, expected, "{header}");
    }
    assert_eq!(
        negotiate(&HeaderMap::new(), &Params::default()).expect("no Accept"),
        None
    );
}

#[test]
fn only_unservable_table_clauses_are_not_acceptable() {
    let error = negotiate(
        &accept("application/json;as=Table;v=v2;g=meta.k8s.io"),
        &Params::default(),
    )
    .expect_err("406");
    assert_eq!((error.code, error.reason.as_ref()), (406, "NotAcceptable"));
    assert!(
        error
            .message
            .starts_with("only the following media types are accepted: application/json"),
        "{}",
        error.message
    );
}

#[test]
fn include_object_picks_what_each_row_carries() {
    let cases = [
        ("", Include::Metadata),
        ("includeObject=Metadata", Include::Metadata),
        ("includeObject=Object", Include::Object),
        ("includeObject=None", Include::None),
    ];
    for (query, include) in cases {
        let got = negotiate(&accept(KUBECTL), &Params::parse(Some(query))).expect(query);
        assert_eq!(got, table("meta.k8s.io/v1", include), "{query}");
    }
    let error = negotiate(&accept(KUBECTL), &Params::parse(Some("includeObject=All")))
        .expect_err("an unknown value");
    assert_eq!(error.code, 400);
    assert_eq!(
        error.message,
        "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": must be 'Metadata', 'Object', 'None', or empty"
    );
}

#[test]
fn printer_columns_are_validated_as_kube_apiserver_does() {
    let path = "spec.versions[0].additionalPrinterColumns";
    let cases = [
        (
            json!({"type": "string", "jsonPath": ".spec.x"}),
            ("name", "Required value".to_owned()),
        ),
        (
            json!({"name": "X", "jsonPath": ".spec.x"}),
            (
                "type",
                "Required value: must be one of boolean,date,integer,number,string".to_owned(),
            ),
        ),
        (
            json!({"name": "X", "type": "text", "jsonPath": ".spec.x"}),
            (
                "type",
                "Invalid value: \"text\": must be one of boolean,date,integer,number,string"
                    .to_owned(),
            ),
        ),
        (
            json!({"name": "X", "type": "string", "format": "uuid", "jsonPath": ".spec.x"}),
            (
                "format",
                "Invalid value: \"uuid\": must be one of byte,date,date-time,double,float,int32,int64,password"
                    .to_owned(),
            ),
        ),
        (
            json!({"name": "X", "type": "string"}),
            ("JSONPath", "Required value".to_owned()),
        ),
        (
            json!({"name": "X", "type": "string", "jsonPath": "spec.x"}),
            (
                "JSONPath",
                "Invalid value: \"spec.x\": must be a simple json path starting with ."
                    .to_owned(),
            ),
        ),
    ];
    for (column, (field, error)) in cases {
        let errors = column_errors(std::slice::from_ref(&column), path);
        assert_eq!(
            errors,
            vec![(format!("{path}[0].{field}"), error)],
            "{column}"
        );
    }
    let valid = json!({"name": "Ready", "type": "string", "format": "date",
        "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"});
    assert!(column_errors(&[valid], path).is_empty());
}
