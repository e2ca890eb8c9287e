use super::*;
use crate::entries::Charset;

fn field(path: &str, shape: Shape) -> RailsField {
    RailsField {
        path: path.into(),
        shape,
        charset: Some(Charset::Hex),
        length: Some(8),
        bits: Some(2048),
    }
}

fn rails(fields: Vec<RailsField>) -> RailsSecrets {
    RailsSecrets {
        key: "secrets.yml".into(),
        env: "production".into(),
        fields,
    }
}

/// The chart's fields, shortened.
fn chart() -> RailsSecrets {
    rails(vec![
        field("secret_key_base", Shape::Scalar),
        field("otp_key_base", Shape::Scalar),
        field("openid_connect_signing_key", Shape::Pem),
        field("active_record_encryption_primary_key", Shape::List),
        field(
            "active_record_encryption_key_derivation_salt",
            Shape::Scalar,
        ),
    ])
}

/// Deterministic stand-ins for generated values, named after the field.
fn value(field: &RailsField) -> FieldValue {
    match field.shape {
        Shape::Scalar => FieldValue::Scalar(format!("new-{}", field.path.len())),
        Shape::List => FieldValue::List(format!("item-{}", field.path.len())),
        Shape::Pem => FieldValue::Pem(
            "-----BEGIN PRIVATE KEY-----\nMIIB\nAAAA\n-----END PRIVATE KEY-----\n".into(),
        ),
    }
}

/// Fills the missing fields of `existing` with stand-ins; none when nothing is missing.
fn fill(existing: Option<&str>, generator: &RailsSecrets) -> Option<String> {
    let yml = SecretsYml::read(existing.map(str::as_bytes)).expect("reads");
    let missing = yml.missing(generator).expect("plans");
    if missing.is_empty() {
        return None;
    }
    let values = missing.into_iter().map(|f| (f, value(f))).collect();
    Some(yml.fill(generator, values).expect("fills"))
}

#[test]
fn a_new_secrets_yml_has_the_jobs_layout_and_ends_with_a_newline() {
    let expected = "\
production:
  secret_key_base: new-15
  otp_key_base: new-12
  openid_connect_signing_key: |
    -----BEGIN PRIVATE KEY-----
    MIIB
    AAAA
    -----END PRIVATE KEY-----
  active_record_encryption_primary_key:
    - item-36
  active_record_encryption_key_derivation_salt: new-44
";
    assert_eq!(fill(None, &chart()).as_deref(), Some(expected));
}

#[test]
fn absent_null_and_empty_string_fields_are_generated_and_everything_else_is_kept() {
    let existing = "\
production:
  secret_key_base: ''
  otp_key_base: ~
  active_record_encryption_primary_key: []
  undeclared: keep me
staging:
  secret_key_base: other
";
    let expected = "\
production:
  secret_key_base: new-15
  otp_key_base: new-12
  active_record_encryption_primary_key: []
  undeclared: keep me
  openid_connect_signing_key: |
    -----BEGIN PRIVATE KEY-----
    MIIB
    AAAA
    -----END PRIVATE KEY-----
  active_record_encryption_key_derivation_salt: new-44
staging:
  secret_key_base: other
";
    assert_eq!(fill(Some(existing), &chart()).as_deref(), Some(expected));
}

#[test]
fn a_complete_document_needs_nothing() {
    let complete = fill(None, &chart()).expect("fills");
    assert_eq!(fill(Some(&complete), &chart()), None);
}

#[test]
fn lists_are_never_shortened_or_reordered() {
    let existing = "production:\n  active_record_encryption_primary_key: [b, a, c]\n";
    let out = fill(Some(existing), &chart()).expect("fills");
    assert!(out.contains("  active_record_encryption_primary_key:\n    - b\n    - a\n    - c\n"));
}

#[test]
fn a_generated_value_yaml_reads_as_another_type_is_quoted() {
    let yml = SecretsYml::read(None).expect("reads");
    let generator = rails(vec![field("a", Shape::Scalar), field("b", Shape::List)]);
    let values = vec![
        (&generator.fields[0], FieldValue::Scalar("12345".into())),
        (&generator.fields[1], FieldValue::List("1e10".into())),
    ];
    let out = yml.fill(&generator, values).expect("fills");
    assert_eq!(out, "production:\n  a: \"12345\"\n  b:\n    - \"1e10\"\n");
}

#[test]
fn an_existing_bare_value_stays_bare() {
    let out = fill(Some("production:\n  otp_key_base: 12345\n"), &chart()).expect("fills");
    assert!(out.contains("\n  otp_key_base: 12345\n"), "{out}");
}

#[test]
fn fields_brought_in_by_a_merge_key_are_present_and_the_merge_key_is_tagged() {
    let existing = "\
defaults: &defaults
  secret_key_base: from-defaults
production:
  <<: *defaults
  otp_key_base: own
";
    let out = fill(Some(existing), &chart()).expect("fills");
    assert!(out.contains("  !!merge <<: *defaults\n"), "{out}");
    assert!(
        !out.contains("new-15"),
        "secret_key_base came from the merge: {out}"
    );
    assert!(out.contains("new-44"), "{out}");
}

#[test]
fn a_null_brought_in_by_a_merge_key_is_generated_as_an_own_key() {
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    let existing = "d: &d\n  secret_key_base:\nproduction:\n  <<: *d\n";
    let out = fill(Some(existing), &generator).expect("fills");
    assert_eq!(
        out,
        "d: &d\n  secret_key_base:\nproduction:\n  !!merge <<: *d\n  secret_key_base: new-15\n"
    );
}

#[test]
fn an_environment_that_is_an_alias_becomes_a_mapping_that_merges_it() {
    let generator = rails(vec![
        field("secret_key_base", Shape::Scalar),
        field("otp_key_base", Shape::Scalar),
    ]);
    let existing = "base: &b\n  secret_key_base: kept\nproduction: *b\n";
    let out = fill(Some(existing), &generator).expect("fills");
    assert_eq!(
        out,
        "base: &b\n  secret_key_base: kept\nproduction:\n  !!merge <<: *b\n  otp_key_base: new-12\n"
    );
}

#[test]
fn a_null_or_absent_environment_gets_every_field() {
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    for existing in [
        "production:\n",
        "production: ~\nother: 1\n",
        "other: 1\n",
        "{}\n",
    ] {
        let out = fill(Some(existing), &generator).expect("fills");
        assert!(
            out.contains("production:\n  secret_key_base: new-15\n"),
            "{existing:?}: {out}"
        );
    }
}

#[test]
fn a_document_of_comments_only_keeps_its_comments() {
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    let existing = "# Managed by hand.\n#\n# production:\n#   secret_key_base: x\n";
    let out = fill(Some(existing), &generator).expect("fills");
    assert_eq!(
        out,
        "# Managed by hand.\n#\n# production:\n#   secret_key_base: x\nproduction:\n  secret_key_base: new-15\n"
    );
}

#[test]
fn a_rewrite_drops_markers_joins_folded_scalars_and_indents_by_2() {
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    let existing =
        "---\nproduction:\n    note: >\n        one\n        two\n    list:\n    - a\n...\n";
    let out = fill(Some(existing), &generator).expect("fills");
    assert_eq!(
        out,
        "production:\n  note: >\n    one two\n  list:\n    - a\n  secret_key_base: new-15\n"
    );
}

#[test]
fn a_rewritten_document_writes_the_same_bytes_again() {
    let existing = "a: &x {k: 'v', l: [1, \"2\"]}\nproduction:\n  <<: *x\n";
    let once = fill(Some(existing), &chart()).expect("fills");
    let doc = Document::parse(&once).expect("parses");
    assert_eq!(yaml::emit::write(&doc).expect("writes"), once);
}

#[test]
fn documents_that_cannot_take_the_fields_are_errors() {
    let cases = [
        ("a list", "- a\n"),
        ("a scalar", "just text\n"),
        ("an environment that is a string", "production: text\n"),
        ("an environment that is a list", "production: [a]\n"),
        ("two documents", "a: 1\n---\nb: 2\n"),
        ("not YAML", "a: [\n"),
        (
            "an environment from a merge",
            "x: &x\n  production: {}\n<<: *x\n",
        ),
    ];
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    for (name, text) in cases {
        let result = SecretsYml::read(Some(text.as_bytes())).and_then(|yml| {
            let missing = yml.missing(&generator)?;
            let values = missing.into_iter().map(|f| (f, value(f))).collect();
            yml.fill(&generator, values)
        });
        assert!(result.is_err(), "{name}: {result:?}");
    }
    assert!(matches!(
        SecretsYml::read(Some(&[0xff, 0xfe, 0x00])),
        Err(RailsError::NotUtf8)
    ));
}

#[test]
fn merge_keys_that_fan_out_are_searched_once_per_mapping() {
    // Eight levels, each merging the level below 64 times: 64^8 paths, 8 mappings.
    let mut text = String::from("l0: &l0\n  a: 1\n");
    for level in 1..=8 {
        let aliases = vec![format!("*l{}", level - 1); 64].join(", ");
        text.push_str(&format!("l{level}: &l{level}\n  <<: [{aliases}]\n"));
    }
    text.push_str("production:\n  <<: *l8\n");
    let generator = rails(vec![field("secret_key_base", Shape::Scalar)]);
    let yml = SecretsYml::read(Some(text.as_bytes())).expect("reads");
    assert_eq!(yml.missing(&generator).expect("plans").len(), 1);
}
