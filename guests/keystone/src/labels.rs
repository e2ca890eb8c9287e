//! The labels of the Keystone's children (facts, conventions).

use std::collections::BTreeMap;

/// The app name every label set carries.
pub(crate) const APP: &str = "keystone";
/// The managed-by value.
pub(crate) const MANAGED_BY: &str = "keystone-operator";

/// `app.kubernetes.io/name` and `instance`: what selects the Keystone's pods.
pub(crate) fn selector_labels(name: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app.kubernetes.io/name".to_owned(), APP.to_owned()),
        ("app.kubernetes.io/instance".to_owned(), name.to_owned()),
    ])
}

/// [`selector_labels`] and `app.kubernetes.io/managed-by`.
pub(crate) fn common_labels(name: &str) -> BTreeMap<String, String> {
    let mut labels = selector_labels(name);
    labels.insert(
        "app.kubernetes.io/managed-by".to_owned(),
        MANAGED_BY.to_owned(),
    );
    labels
}

/// [`common_labels`] and `app.kubernetes.io/component`.
pub(crate) fn component_labels(name: &str, component: &str) -> BTreeMap<String, String> {
    let mut labels = common_labels(name);
    labels.insert(
        "app.kubernetes.io/component".to_owned(),
        component.to_owned(),
    );
    labels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_labels_are_common_labels_with_the_component() {
        let labels = component_labels("ks", "api");
        let pairs: Vec<(&str, &str)> = labels
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("app.kubernetes.io/component", "api"),
                ("app.kubernetes.io/instance", "ks"),
                ("app.kubernetes.io/managed-by", "keystone-operator"),
                ("app.kubernetes.io/name", "keystone"),
            ]
        );
        assert_eq!(selector_labels("ks").len(), 2);
    }
}
