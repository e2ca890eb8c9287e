//! The labels a Secret gets.
//!
//! A Secret gets the labels of its GitLabSecrets without the `operator.gitlab.com/release-*`
//! ones. A label the Secret lacks or holds with another value is set; none is removed. A
//! Secret that another GitLabSecrets of the namespace also declares gets none (not even when
//! it is created), and keeps those it has.

use std::collections::BTreeMap;

/// The prefix of the labels that are not copied.
pub const RELEASE_LABEL_PREFIX: &str = "operator.gitlab.com/release-";

/// The labels of a GitLabSecrets to copy onto its Secrets.
pub fn copied(labels: Option<&BTreeMap<String, String>>) -> BTreeMap<String, String> {
    labels
        .into_iter()
        .flatten()
        .filter(|(k, _)| !k.starts_with(RELEASE_LABEL_PREFIX))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The labels of `wanted` that `secret` (its JSON) lacks or holds with another value.
pub fn differing(
    existing: Option<&BTreeMap<String, String>>,
    wanted: &BTreeMap<String, String>,
) -> BTreeMap<String, String> {
    wanted
        .iter()
        .filter(|(k, v)| existing.and_then(|labels| labels.get(*k)) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn release_labels_are_not_copied() {
        let from = labels(&[
            ("app", "gitlab"),
            ("operator.gitlab.com/release-name", "demo"),
            ("operator.gitlab.com/other", "kept"),
        ]);
        assert_eq!(
            copied(Some(&from)),
            labels(&[("app", "gitlab"), ("operator.gitlab.com/other", "kept")])
        );
        assert!(copied(None).is_empty());
    }

    #[test]
    fn a_label_the_secret_lacks_or_holds_otherwise_is_set_and_none_is_removed() {
        let secret = labels(&[("app", "old"), ("release", "demo"), ("mine", "x")]);
        let wanted = labels(&[("app", "gitlab"), ("release", "demo"), ("heritage", "Helm")]);
        assert_eq!(
            differing(Some(&secret), &wanted),
            labels(&[("app", "gitlab"), ("heritage", "Helm")])
        );
        assert_eq!(differing(None, &wanted), wanted);
    }
}
