use serde_json::{Value, json};

use super::{cell, crd_cells, crd_columns, human_age, short_age};

#[test]
fn cells_are_formatted_by_column_type_as_kube_apiserver_does() {
    let cases: &[(&str, Value, Value)] = &[
        ("string", json!("x"), json!("x")),
        ("string", json!(3), json!("3")),
        ("string", json!(1.5), json!("1.5")),
        ("string", json!(true), json!("true")),
        (
            "string",
            json!({"b": 1, "a": [2]}),
            json!(r#"{"a":[2],"b":1}"#),
        ),
        ("string", Value::Null, Value::Null),
        ("integer", json!(7), json!(7)),
        ("integer", json!(7.9), json!(7)),
        ("integer", json!("7"), Value::Null),
        ("number", json!(2), json!(2.0)),
        ("number", json!(2.5), json!(2.5)),
        ("number", json!("2.5"), Value::Null),
        ("boolean", json!(false), json!(false)),
        ("boolean", json!("true"), Value::Null),
        ("date", json!("not a time"), json!("<invalid>")),
        ("date", json!(5), Value::Null),
    ];
    for (kind, value, expected) in cases {
        assert_eq!(&cell(kind, value), expected, "{kind} of {value}");
    }
}

#[test]
fn a_date_cell_is_the_short_age_of_the_timestamp() {
    let ten_minutes_ago = k8s_openapi::jiff::Timestamp::from_second(
        k8s_openapi::jiff::Timestamp::now().as_second() - 600,
    )
    .expect("a time")
    .to_string();
    assert_eq!(cell("date", &json!(ten_minutes_ago)), json!("10m"));
}

#[test]
fn ages_follow_apimachinery_duration_formats() {
    let cases = [
        (-5, "<invalid>", "<invalid>"),
        (-1, "0s", "0s"),
        (45, "45s", "45s"),
        (90, "1m", "90s"),
        (200, "3m", "3m20s"),
        (240, "4m", "4m"),
        (3000, "50m", "50m"),
        (4 * 3600 + 600, "4h", "4h10m"),
        (30 * 3600, "1d", "30h"),
        (3 * 86_400 + 4 * 3600, "3d", "3d4h"),
        (20 * 86_400, "20d", "20d"),
        (3 * 365 * 86_400 + 10 * 86_400, "3y", "3y10d"),
        (10 * 365 * 86_400, "10y", "10y"),
    ];
    for (seconds, short, human) in cases {
        assert_eq!(short_age(seconds), short, "short {seconds}");
        assert_eq!(human_age(seconds), human, "human {seconds}");
    }
}

#[test]
fn a_crd_without_printer_columns_gets_name_and_age() {
    let columns = crd_columns(&[]);
    let names: Vec<(&str, &str)> = columns
        .iter()
        .map(|(c, _)| (c.name.as_str(), c.kind.as_str()))
        .collect();
    assert_eq!(names, [("Name", "string"), ("Age", "date")]);
}

#[test]
fn crd_columns_keep_their_definition_and_default_the_description() {
    let columns = crd_columns(&[
        json!({"name": "Size", "type": "integer", "jsonPath": ".spec.size", "priority": 1, "format": "int32"}),
        json!({"name": "Color", "type": "string", "jsonPath": ".spec.color", "description": "The colour."}),
    ]);
    let definitions: Vec<Value> = columns.iter().map(|(c, _)| c.definition()).collect();
    assert_eq!(definitions[0]["format"], "name");
    assert_eq!(
        definitions[1],
        json!({"name": "Size", "type": "integer", "format": "int32", "priority": 1,
            "description": "Custom resource definition column (in JSONPath format): .spec.size"})
    );
    assert_eq!(definitions[2]["description"], "The colour.");
    let object = json!({"metadata": {"name": "w"}, "spec": {"size": 3}});
    assert_eq!(
        crd_cells(&columns, &object),
        vec![json!("w"), json!(3), Value::Null]
    );
}

#[test]
fn an_unparseable_column_ends_the_columns_there() {
    let columns = crd_columns(&[
        json!({"name": "Size", "type": "integer", "jsonPath": ".spec.size"}),
        json!({"name": "Bad", "type": "string", "jsonPath": ".spec.ports["}),
        json!({"name": "Color", "type": "string", "jsonPath": ".spec.color"}),
    ]);
    let names: Vec<&str> = columns.iter().map(|(c, _)| c.name.as_str()).collect();
    assert_eq!(names, ["Name", "Size"]);
}
