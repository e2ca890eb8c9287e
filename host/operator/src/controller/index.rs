//! The field indexes of one plugin: for each index, which primaries name which keys.
//!
//! The keys of a primary come from the plugin's own `index(name, object)` export, called
//! whenever the primary changes; a field-index watch maps a changed object to every primary
//! whose keys include the object's `namespace/name`, and `list` with a field index answers
//! from here.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use wasm_operator_types::Request;

#[derive(Default)]
struct Index {
    primaries_by_key: HashMap<String, BTreeSet<(Option<String>, String)>>,
    keys_of_primary: HashMap<(Option<String>, String), Vec<String>>,
}

/// Every field index of one plugin.
#[derive(Default)]
pub struct FieldIndexes {
    indexes: Mutex<HashMap<String, Index>>,
}

fn id(request: &Request) -> (Option<String>, String) {
    (request.namespace.clone(), request.name.clone())
}

impl FieldIndexes {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Index>> {
        self.indexes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records that `primary`'s keys of index `name` are now `keys`.
    pub fn set(&self, name: &str, primary: &Request, keys: Vec<String>) {
        let mut indexes = self.lock();
        let index = indexes.entry(name.to_owned()).or_default();
        let primary = id(primary);
        if let Some(old) = index.keys_of_primary.remove(&primary) {
            for key in old {
                if let Some(set) = index.primaries_by_key.get_mut(&key) {
                    set.remove(&primary);
                    if set.is_empty() {
                        index.primaries_by_key.remove(&key);
                    }
                }
            }
        }
        for key in &keys {
            index
                .primaries_by_key
                .entry(key.clone())
                .or_default()
                .insert(primary.clone());
        }
        if !keys.is_empty() {
            index.keys_of_primary.insert(primary, keys);
        }
    }

    /// Forgets `primary` in every index (it was deleted).
    pub(crate) fn remove(&self, primary: &Request) {
        let names: Vec<String> = self.lock().keys().cloned().collect();
        for name in names {
            self.set(&name, primary, Vec::new());
        }
    }

    /// The primaries whose keys of index `name` include `key`, sorted.
    pub(crate) fn lookup(&self, name: &str, key: &str) -> Vec<Request> {
        self.lock()
            .get(name)
            .and_then(|index| index.primaries_by_key.get(key))
            .map(|set| {
                set.iter()
                    .map(|(namespace, name)| Request {
                        namespace: namespace.clone(),
                        name: name.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn primary(name: &str) -> Request {
        Request {
            namespace: Some("ns".into()),
            name: name.into(),
        }
    }

    #[test]
    fn a_key_maps_to_every_primary_that_names_it() {
        let indexes = FieldIndexes::default();
        indexes.set(
            "secrets",
            &primary("a"),
            vec!["ns/s1".into(), "ns/s2".into()],
        );
        indexes.set("secrets", &primary("b"), vec!["ns/s2".into()]);
        assert_eq!(indexes.lookup("secrets", "ns/s1"), [primary("a")]);
        assert_eq!(
            indexes.lookup("secrets", "ns/s2"),
            [primary("a"), primary("b")]
        );
        assert!(indexes.lookup("secrets", "ns/s3").is_empty());
        assert!(indexes.lookup("other", "ns/s1").is_empty());
    }

    #[test]
    fn changed_keys_replace_the_old_ones_and_a_removed_primary_is_forgotten() {
        let indexes = FieldIndexes::default();
        indexes.set("secrets", &primary("a"), vec!["ns/s1".into()]);
        indexes.set("secrets", &primary("a"), vec!["ns/s2".into()]);
        assert!(indexes.lookup("secrets", "ns/s1").is_empty());
        assert_eq!(indexes.lookup("secrets", "ns/s2"), [primary("a")]);
        indexes.remove(&primary("a"));
        assert!(indexes.lookup("secrets", "ns/s2").is_empty());
    }
}
