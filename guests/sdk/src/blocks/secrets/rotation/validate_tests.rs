use super::*;

/// A valid key: `first` then 42 `A`s and the padding (URL-safe base64 of 32 bytes).
fn key(first: char) -> String {
    format!("{first}{}=", "A".repeat(42))
}

fn keys(values: &[&str]) -> BTreeMap<String, ByteString> {
    values
        .iter()
        .enumerate()
        .map(|(i, v)| (i.to_string(), ByteString(v.as_bytes().to_vec())))
        .collect()
}

#[test]
fn staged_keys_are_three_to_n_plus_one_distinct_44_character_url_safe_keys_of_32_bytes() {
    let (a, b, c, d, e) = (key('a'), key('b'), key('c'), key('d'), key('e'));
    let long = format!("{c}A");
    let two_pads = format!("{}==", "A".repeat(42));
    let no_pad = "A".repeat(44);
    let std_alphabet = format!("+{}=", "A".repeat(42));
    let pad_inside = format!("A=A{}=", "A".repeat(40));
    let cases: &[(&str, Vec<&str>, Option<Rejection>)] = &[
        ("three distinct valid keys", vec![&a, &b, &c], None),
        (
            "two keys are too few",
            vec![&a, &b],
            Some(Rejection::KeyCount {
                count: 2,
                min: 3,
                max: 4,
            }),
        ),
        (
            "N+2 keys are too many",
            vec![&a, &b, &c, &d, &e],
            Some(Rejection::KeyCount {
                count: 5,
                min: 3,
                max: 4,
            }),
        ),
        (
            "a key of 43 characters",
            vec![&a, &b, &c[..43]],
            Some(Rejection::KeyLength {
                key: "2".into(),
                length: 43,
            }),
        ),
        (
            "a key of 45 characters",
            vec![&a, &b, &long],
            Some(Rejection::KeyLength {
                key: "2".into(),
                length: 45,
            }),
        ),
        (
            "a key in the standard alphabet (+)",
            vec![&a, &b, &std_alphabet],
            Some(Rejection::KeyNotBase64 { key: "2".into() }),
        ),
        (
            "padding inside a key",
            vec![&a, &b, &pad_inside],
            Some(Rejection::KeyNotBase64 { key: "2".into() }),
        ),
        (
            "44 characters ending in == decode to 31 bytes",
            vec![&a, &b, &two_pads],
            Some(Rejection::KeyBytes {
                key: "2".into(),
                bytes: 31,
            }),
        ),
        (
            "44 characters without padding decode to 33 bytes",
            vec![&a, &b, &no_pad],
            Some(Rejection::KeyBytes {
                key: "2".into(),
                bytes: 33,
            }),
        ),
        (
            "two keys alike",
            vec![&a, &b, &a],
            Some(Rejection::DuplicateKeys {
                first: "0".into(),
                second: "2".into(),
            }),
        ),
    ];
    for (case, values, rejection) in cases {
        let got = validate_keys(&keys(values), 3);
        assert_eq!(got.err(), *rejection, "{case}");
    }
}

#[test]
fn a_staged_key_set_may_reach_n_plus_one_keys() {
    let values = [key('a'), key('b'), key('c'), key('d'), key('e'), key('f')];
    let values: Vec<&str> = values.iter().map(String::as_str).collect();
    assert_eq!(validate_keys(&keys(&values), 5), Ok(()));
}

#[test]
fn a_rejection_never_quotes_a_staged_value() {
    let secret = "SECRETvalueSECRETvalue";
    let data = BTreeMap::from([
        ("0".to_owned(), ByteString(secret.as_bytes().to_vec())),
        ("1".to_owned(), ByteString(key('b').into_bytes())),
        ("2".to_owned(), ByteString(key('c').into_bytes())),
    ]);
    let text = validate_keys(&data, 3).expect_err("short key").to_string();
    assert_eq!(text, "key \"0\" is 22 characters long, want 44");
    let data = BTreeMap::from([(
        PASSWORD_KEY.to_owned(),
        ByteString(secret.as_bytes().to_vec()),
    )]);
    let text = validate_password(&data, 32).expect_err("short").to_string();
    assert_eq!(
        text,
        "the staged password is 22 characters long, want at least 32"
    );
}

#[test]
fn a_staged_admin_password_is_present_non_empty_and_at_least_the_length() {
    let password = |p: &str| BTreeMap::from([(PASSWORD_KEY.to_owned(), ByteString(p.into()))]);
    let cases: &[(&str, BTreeMap<String, ByteString>, Option<Rejection>)] = &[
        ("a password of the length", password(&"p".repeat(24)), None),
        (
            "no password key",
            BTreeMap::from([("other".to_owned(), ByteString(b"x".to_vec()))]),
            Some(Rejection::PasswordMissing),
        ),
        (
            "an empty password",
            password(""),
            Some(Rejection::PasswordEmpty),
        ),
        (
            "a password one short",
            password(&"p".repeat(23)),
            Some(Rejection::PasswordTooShort {
                length: 23,
                min: 24,
            }),
        ),
    ];
    for (case, data, rejection) in cases {
        assert_eq!(validate_password(data, 24).err(), *rejection, "{case}");
    }
}

#[test]
fn the_completion_annotation_must_be_an_rfc3339_time() {
    let cases: &[(&str, &str, bool)] = &[
        ("UTC seconds with Z", "2026-03-01T12:00:00Z", true),
        ("empty", "", false),
        ("words", "yesterday", false),
        ("a date only", "2026-03-01", false),
        ("a space for T", "2026-03-01 12:00:00Z", false),
        ("lower-case t and z", "2026-03-01t12:00:00z", false),
        ("no zone", "2026-03-01T12:00:00", false),
        ("no seconds", "2026-03-01T12:00Z", false),
        ("month 13", "2026-13-01T12:00:00Z", false),
        ("February 30", "2026-02-30T12:00:00Z", false),
        ("a dot without digits", "2026-03-01T12:00:00.Z", false),
        ("an offset without colon", "2026-03-01T12:00:00+0100", false),
        ("trailing text", "2026-03-01T12:00:00Z now", false),
    ];
    for (case, value, valid) in cases {
        assert_eq!(parse_rfc3339(value).is_some(), *valid, "{case}: {value:?}");
    }
}

#[test]
fn an_rfc3339_time_may_carry_a_fraction_and_an_offset() {
    let utc = parse_rfc3339("2026-03-01T12:00:00Z").expect("utc");
    let offset = parse_rfc3339("2026-03-01T13:00:00.250+01:00").expect("offset");
    assert_eq!(offset.as_millisecond() - utc.as_millisecond(), 250);
}
