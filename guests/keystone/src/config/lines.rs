//! What may go into one INI line, as oslo.config's and PasteDeploy's parsers read them.
//!
//! A value holding a line break would start a line of its own — a new option or section
//! the operator never rendered (a plugin's value could override an operator default that
//! wins over it; an identity backend's attribute could rewrite another section). A key
//! that starts with whitespace continues the previous line, one starting with `#`, `;` or
//! `[` is a comment or a header, and `=` or `:` in a key splits it elsewhere. The check
//! names the file, section and key, never the value (extraConfig may hold secrets).

use wasm_operator_sdk::blocks::config::MultiSections;

use super::ConfigError;

/// Checks every section name, key and value of `sections`, rendered as `file`.
pub(crate) fn check(file: &'static str, sections: &MultiSections) -> Result<(), ConfigError> {
    for (section, keys) in sections {
        let fail = |location: String, problem| ConfigError::Line {
            file,
            location,
            problem,
        };
        if let Some(problem) = section_problem(section) {
            return Err(fail(format!("section [{}]", escaped(section)), problem));
        }
        for (key, values) in keys {
            let location = || format!("[{}] {}", escaped(section), escaped(key));
            if let Some(problem) = key_problem(key) {
                return Err(fail(location(), problem));
            }
            if values.iter().any(|v| v.contains(['\n', '\r'])) {
                return Err(fail(location(), "the value contains a line break"));
            }
        }
    }
    Ok(())
}

/// Why `name` cannot be a section header.
fn section_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("the section name is empty")
    } else if name.chars().any(char::is_control) {
        Some("the section name contains a control character")
    } else if name.contains(']') {
        Some("the section name contains ']'")
    } else {
        None
    }
}

/// Why `key` cannot start an option line.
fn key_problem(key: &str) -> Option<&'static str> {
    let Some(first) = key.chars().next() else {
        return Some("the key is empty");
    };
    if key.chars().any(char::is_control) {
        Some("the key contains a control character")
    } else if first.is_whitespace() {
        Some("the key starts with whitespace (a continuation line)")
    } else if matches!(first, '#' | ';' | '[') {
        Some("the key starts with '#', ';' or '[' (a comment or a section)")
    } else if key.contains(['=', ':']) {
        Some("the key contains '=' or ':'")
    } else {
        None
    }
}

/// `text` with control characters escaped, for an error message.
fn escaped(text: &str) -> String {
    text.escape_debug().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(section: &str, key: &str, value: &str) -> MultiSections {
        let mut sections = MultiSections::new();
        sections
            .entry(section.to_owned())
            .or_default()
            .insert(key.to_owned(), vec!["ok".to_owned(), value.to_owned()]);
        sections
    }

    #[test]
    fn a_line_that_would_not_stay_one_line_is_refused_naming_where_it_is() {
        let cases: &[(&str, &str, &str, &str, Option<&str>)] = &[
            ("a plain option is fine", "DEFAULT", "debug", "true", None),
            (
                "a value with a newline",
                "DEFAULT",
                "debug",
                "true\n[database]\nconnection = sqlite://",
                Some("keystone.conf: [DEFAULT] debug: the value contains a line break"),
            ),
            (
                "a value with a carriage return",
                "cache",
                "backend",
                "x\rbackend = y",
                Some("keystone.conf: [cache] backend: the value contains a line break"),
            ),
            (
                "an empty section name",
                "",
                "k",
                "v",
                Some("keystone.conf: section []: the section name is empty"),
            ),
            (
                "a section name closing early",
                "a]b",
                "k",
                "v",
                Some("keystone.conf: section [a]b]: the section name contains ']'"),
            ),
            (
                "a section name with a newline",
                "a\nb",
                "k",
                "v",
                Some(
                    "keystone.conf: section [a\\nb]: the section name contains a control character",
                ),
            ),
            (
                "a key continuing the previous line",
                "DEFAULT",
                " debug",
                "v",
                Some(
                    "keystone.conf: [DEFAULT]  debug: the key starts with whitespace (a continuation line)",
                ),
            ),
            (
                "a key that is a comment",
                "DEFAULT",
                "#debug",
                "v",
                Some(
                    "keystone.conf: [DEFAULT] #debug: the key starts with '#', ';' or '[' (a comment or a section)",
                ),
            ),
            (
                "a key splitting at '='",
                "DEFAULT",
                "a=b",
                "v",
                Some("keystone.conf: [DEFAULT] a=b: the key contains '=' or ':'"),
            ),
            (
                "an empty key",
                "DEFAULT",
                "",
                "v",
                Some("keystone.conf: [DEFAULT] : the key is empty"),
            ),
            (
                "a key with a tab",
                "DEFAULT",
                "a\tb",
                "v",
                Some("keystone.conf: [DEFAULT] a\\tb: the key contains a control character"),
            ),
        ];
        for (case, section, key, value, expected) in cases {
            let got = check("keystone.conf", &one(section, key, value));
            match (expected, got) {
                (None, Ok(())) => {}
                (Some(message), Err(err @ ConfigError::Line { .. })) => {
                    assert_eq!(err.to_string(), *message, "{case}");
                }
                (expected, got) => panic!("{case}: expected {expected:?}, got {got:?}"),
            }
        }
    }

    #[test]
    fn the_refusal_never_quotes_the_value() {
        let err = check(
            "keystone.conf",
            &one("ldap", "password", "s3cr3t\ninjected = 1"),
        )
        .expect_err("refused");
        assert!(!err.to_string().contains("s3cr3t"), "{err}");
    }
}
