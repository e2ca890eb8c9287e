//! INI rendering as oslo.config reads it.
//!
//! Sections and keys are sorted so the rendered text, and the content hash of the
//! ConfigMap it lands in, are the same on every pass. Every option renders as
//! `key = value` (an empty value as `key = `), with a blank line between sections.

use std::collections::BTreeMap;

/// INI sections: section name → key → value.
pub type Sections = BTreeMap<String, BTreeMap<String, String>>;

/// Multi-valued INI sections: a key renders once per value, in order (oslo's
/// `MultiStrOpt`, e.g. `[federation] trusted_dashboard`).
pub type MultiSections = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// Renders `sections` as INI text; no sections render as "".
pub fn render_ini(sections: &Sections) -> String {
    render_ini_multi(&lift(sections))
}

/// Renders multi-valued sections: one `key = value` line per value, in order. A key
/// without values renders no line; a section without keys still renders its header.
pub fn render_ini_multi(sections: &MultiSections) -> String {
    let mut out = String::new();
    for (i, (name, keys)) in sections.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!("[{name}]\n"));
        for (key, values) in keys {
            for value in values {
                out.push_str(&format!("{key} = {value}\n"));
            }
        }
    }
    out
}

/// Lifts single-valued sections to the multi-valued shape.
pub fn lift(sections: &Sections) -> MultiSections {
    sections
        .iter()
        .map(|(name, keys)| {
            let keys = keys
                .iter()
                .map(|(k, v)| (k.clone(), vec![v.clone()]))
                .collect();
            (name.clone(), keys)
        })
        .collect()
}

/// Merges `user` over `defaults`: every default, with the user's value winning on a
/// collision. The inputs are not changed.
pub fn merge_defaults(user: &Sections, defaults: &Sections) -> Sections {
    let mut merged = defaults.clone();
    for (section, keys) in user {
        let target = merged.entry(section.clone()).or_default();
        for (k, v) in keys {
            target.insert(k.clone(), v.clone());
        }
    }
    merged
}

/// `map` as the comma-separated `key<sep>value` list an oslo option reads (`=` for
/// `default_log_levels`, `:` for a DictOpt), keys sorted; an empty map renders "".
pub fn render_sorted_pairs(map: &BTreeMap<String, String>, sep: &str) -> String {
    map.iter()
        .map(|(k, v)| format!("{k}{sep}{v}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(entries: &[(&str, &[(&str, &str)])]) -> Sections {
        entries
            .iter()
            .map(|(name, keys)| {
                let keys = keys
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect();
                (name.to_string(), keys)
            })
            .collect()
    }

    #[test]
    fn sections_and_keys_render_sorted_with_a_blank_line_between_sections() {
        let rendered = render_ini(&sections(&[
            ("token", &[("provider", "fernet")]),
            ("DEFAULT", &[("use_stderr", "true"), ("debug", "false")]),
        ]));
        assert_eq!(
            rendered,
            "[DEFAULT]\ndebug = false\nuse_stderr = true\n\n[token]\nprovider = fernet\n"
        );
    }

    #[test]
    fn an_empty_value_renders_as_key_equals_nothing() {
        let rendered = render_ini(&sections(&[("DEFAULT", &[("keystone_user", "")])]));
        assert_eq!(rendered, "[DEFAULT]\nkeystone_user = \n");
    }

    #[test]
    fn no_sections_render_as_empty_text() {
        assert_eq!(render_ini(&Sections::new()), "");
    }

    #[test]
    fn a_section_without_keys_still_renders_its_header() {
        assert_eq!(render_ini(&sections(&[("empty", &[])])), "[empty]\n");
    }

    #[test]
    fn a_multi_valued_key_renders_one_line_per_value_in_order() {
        let mut multi = MultiSections::new();
        multi.entry("federation".into()).or_default().insert(
            "trusted_dashboard".into(),
            vec!["https://b".into(), "https://a".into()],
        );
        multi
            .entry("federation".into())
            .or_default()
            .insert("unset".into(), vec![]);
        assert_eq!(
            render_ini_multi(&multi),
            "[federation]\ntrusted_dashboard = https://b\ntrusted_dashboard = https://a\n"
        );
    }

    #[test]
    fn sorted_pairs_join_keys_in_order_with_the_separator() {
        let map: BTreeMap<String, String> = [("b", "2"), ("a", "1")]
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(render_sorted_pairs(&map, "="), "a=1,b=2");
        assert_eq!(render_sorted_pairs(&BTreeMap::new(), ":"), "");
    }

    #[test]
    fn user_values_win_over_defaults_and_the_rest_of_both_is_kept() {
        let defaults = sections(&[("cache", &[("enabled", "true"), ("backend", "x")])]);
        let user = sections(&[("cache", &[("backend", "y")]), ("extra", &[("k", "v")])]);
        let merged = merge_defaults(&user, &defaults);
        assert_eq!(
            merged,
            sections(&[
                ("cache", &[("backend", "y"), ("enabled", "true")]),
                ("extra", &[("k", "v")]),
            ])
        );
    }
}
