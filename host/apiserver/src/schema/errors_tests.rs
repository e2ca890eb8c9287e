use super::*;
use serde_json::json;

#[test]
fn display_of_each_kind_matches_apimachinery() {
    let cases: Vec<(&str, FieldError, &str)> = vec![
        (
            "required shows no value",
            FieldError::required("spec.secrets[0].name", ""),
            "spec.secrets[0].name: Required value",
        ),
        (
            "invalid shows an integer plainly",
            FieldError::invalid("spec.a", json!(9000), "too big"),
            "spec.a: Invalid value: 9000: too big",
        ),
        (
            "invalid quotes a string",
            FieldError::invalid("spec.a", json!("x\"y"), "bad"),
            "spec.a: Invalid value: \"x\\\"y\": bad",
        ),
        (
            "invalid prints null as a quoted string",
            FieldError::invalid("spec.a", Value::Null, "bad"),
            "spec.a: Invalid value: \"null\": bad",
        ),
        (
            "not supported lists quoted values",
            FieldError::not_supported("spec.x", json!("foo"), &["a".into(), "b".into()]),
            "spec.x: Unsupported value: \"foo\": supported values: \"a\", \"b\"",
        ),
        (
            "too long hides the value",
            FieldError::too_long("spec.n", 5),
            "spec.n: Too long: may not be more than 5 bytes",
        ),
        (
            "too many shows the count",
            FieldError::too_many("spec.l", Some(3), 2),
            "spec.l: Too many: 3: must have at most 2 items",
        ),
        (
            "too many without a count omits it",
            FieldError::too_many("spec.l", None, 2),
            "spec.l: Too many: must have at most 2 items",
        ),
        (
            "duplicate prints a map in Go syntax",
            FieldError::duplicate("spec.l[1]", json!({"name": "a", "port": 80})),
            "spec.l[1]: Duplicate value: map[string]interface {}{\"name\":\"a\", \"port\":80}",
        ),
        (
            "forbidden shows only the detail",
            FieldError::forbidden("spec.f", "nope"),
            "spec.f: Forbidden: nope",
        ),
    ];
    for (name, err, want) in cases {
        assert_eq!(err.to_string(), want, "{name}");
    }
}

#[test]
fn go_float_switches_to_exponent_form_like_go() {
    for (f, want) in [
        (8192.0, "8192"),
        (0.5, "0.5"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1.5e-5, "1.5e-05"),
        (0.0001, "0.0001"),
    ] {
        assert_eq!(go_float(f), want, "{f}");
    }
}

#[test]
fn go_sharp_v_prints_slices_and_nil() {
    assert_eq!(
        go_sharp_v(&json!(["a", 1, null])),
        "[]interface {}{\"a\", 1, interface {}(nil)}"
    );
}

#[test]
fn invalid_message_of_one_error_has_no_brackets() {
    let errs = [FieldError::required("spec.a", "")];
    assert_eq!(
        invalid_message("GitLabSecrets.apps.gitlab.com", "demo", &errs),
        "GitLabSecrets.apps.gitlab.com \"demo\" is invalid: spec.a: Required value"
    );
}

#[test]
fn invalid_message_of_several_errors_is_bracketed_and_deduplicated() {
    let errs = [
        FieldError::required("spec.a", ""),
        FieldError::required("spec.a", ""),
        FieldError::invalid("spec.b", json!(1), "bad"),
    ];
    assert_eq!(
        invalid_message("GitLabSecrets.apps.gitlab.com", "demo", &errs),
        "GitLabSecrets.apps.gitlab.com \"demo\" is invalid: \
         [spec.a: Required value, spec.b: Invalid value: 1: bad]"
    );
}

#[test]
fn causes_carry_reason_body_and_field() {
    let errs = [
        FieldError::required("spec.a", ""),
        FieldError::not_supported("spec.b", json!("x"), &["y".into()]),
    ];
    let c = causes(&errs);
    assert_eq!(
        serde_json::to_value(&c).ok(),
        Some(json!([
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.a"},
            {"reason": "FieldValueNotSupported",
             "message": "Unsupported value: \"x\": supported values: \"y\"", "field": "spec.b"}
        ]))
    );
}

#[test]
fn go_quote_escapes_controls_like_strconv_quote() {
    assert_eq!(go_quote("a\nb\u{1}é"), "\"a\\nb\\x01é\"");
}
