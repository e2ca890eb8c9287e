use super::*;

/// Each value of `cases` breaks `rule` with a message starting as given, or (`None`) not.
fn assert_rule(cases: &[(&str, Option<&str>)], rule: fn(&str) -> Option<String>) {
    for (value, expected) in cases {
        match (rule(value).as_deref(), expected) {
            (None, None) => {}
            (Some(error), Some(expected)) => {
                assert!(error.starts_with(expected), "{value}: {error}")
            }
            (error, _) => panic!("{value:?}: {error:?}"),
        }
    }
}

#[test]
fn label_and_annotation_keys_are_qualified_names_as_kube_words_them() {
    let cases: &[(&str, Option<&str>)] = &[
        // The one valid row.
        ("app.kubernetes.io/name", None),
        ("", Some("name part must be non-empty")),
        (
            "a b",
            Some("name part must consist of alphanumeric characters"),
        ),
        (
            "-a",
            Some("name part must consist of alphanumeric characters"),
        ),
        (
            &"a".repeat(64),
            Some("name part must be no more than 63 characters"),
        ),
        ("/a", Some("prefix part must be non-empty")),
        (
            "Example.com/a",
            Some("prefix part a lowercase RFC 1123 subdomain"),
        ),
        (
            "a/b/c",
            Some("a qualified name must consist of alphanumeric characters"),
        ),
    ];
    assert_rule(cases, qualified_name_error);
}

#[test]
fn label_values_and_data_keys_follow_their_rules() {
    assert_eq!(label_value_error(""), None);
    assert_eq!(label_value_error("v1.2_3-x"), None);
    assert!(label_value_error("a b").is_some_and(|e| e.starts_with("a valid label must be")));
    assert_eq!(
        label_value_error(&"a".repeat(64)).as_deref(),
        Some("must be no more than 63 characters")
    );
    let cases: &[(&str, Option<&str>)] = &[
        // The one valid row.
        ("tls.crt", None),
        ("a b", Some("a valid config key must consist of")),
        ("", Some("a valid config key must consist of")),
        (".", Some("must not be '.'")),
        ("..", Some("must not be '..'")),
        ("..a", Some("must not start with '..'")),
        (
            &"k".repeat(254),
            Some("must be no more than 253 characters"),
        ),
    ];
    assert_rule(cases, config_key_error);
}
