//! The JSON text guests read shared objects as: serialized once per cached object version,
//! however many passes read it.
//!
//! A guest gets every object as JSON text, written as kube-apiserver writes it: `kind`,
//! `apiVersion` and `metadata` first ([`object_text`]), so a guest that wants only the
//! metadata (a Secret's resourceVersion, not its data) can stop reading there.
//!
//! An object the informer cache shares (an
//! `Arc<Value>` someone else also holds) keeps its text here for as long as that `Arc`
//! lives; the entries of objects the cache has let go are swept as the memo grows. An object
//! read past the cache (held by this pass alone) is serialized and not kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value};

/// Fewest entries before the memo sweeps entries whose object is gone.
const FIRST_SWEEP: usize = 256;

/// The text of shared objects, keyed by the address of their `Arc`.
#[derive(Default)]
pub(crate) struct Texts {
    memo: Mutex<Memo>,
}

#[derive(Default)]
struct Memo {
    by_address: HashMap<usize, (Weak<Value>, Arc<str>)>,
    /// The size at which the next insert sweeps.
    sweep_at: usize,
}

impl Texts {
    /// The JSON text of `object`.
    pub(crate) fn of(&self, object: &Arc<Value>) -> Arc<str> {
        if Arc::strong_count(object) < 2 {
            // Not shared: no later read can find it again.
            return object_text(object).into();
        }
        let address = Arc::as_ptr(object) as usize;
        let same = |weak: &Weak<Value>| weak.upgrade().is_some_and(|o| Arc::ptr_eq(&o, object));
        if let Some((weak, text)) = self.lock().by_address.get(&address)
            && same(weak)
        {
            return text.clone();
        }
        let text: Arc<str> = object_text(object).into();
        let mut memo = self.lock();
        memo.by_address
            .insert(address, (Arc::downgrade(object), text.clone()));
        if memo.by_address.len() >= memo.sweep_at {
            memo.by_address
                .retain(|_, (weak, _)| weak.strong_count() > 0);
            memo.sweep_at = (memo.by_address.len() * 2).max(FIRST_SWEEP);
        }
        text
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Memo> {
        self.memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// How many texts are kept.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().by_address.len()
    }
}

/// The fields kube-apiserver writes first, in its order.
const LEADING_FIELDS: [&str; 3] = ["kind", "apiVersion", "metadata"];

/// The JSON text of `object` with [`LEADING_FIELDS`] first and its other fields after them
/// in their map's order; any other value as `serde_json` writes it.
pub(crate) fn object_text(object: &Value) -> String {
    match object {
        Value::Object(fields) => serde_json::to_string(&LeadingFieldsFirst(fields))
            // Writing a map of JSON values to a string does not fail; were it to, the
            // plain text is the same object.
            .unwrap_or_else(|_| object.to_string()),
        _ => object.to_string(),
    }
}

/// An object's fields, serialized with [`LEADING_FIELDS`] first.
struct LeadingFieldsFirst<'a>(&'a Map<String, Value>);

impl Serialize for LeadingFieldsFirst<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for key in LEADING_FIELDS {
            if let Some(value) = self.0.get(key) {
                map.serialize_entry(key, value)?;
            }
        }
        for (key, value) in self.0 {
            if !LEADING_FIELDS.contains(&key.as_str()) {
                map.serialize_entry(key, value)?;
            }
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shared_object_is_serialized_once_and_a_private_one_not_kept() {
        let texts = Texts::default();
        let cached = Arc::new(json!({"metadata": {"name": "a"}}));
        let held_by_cache = cached.clone();
        let first = texts.of(&cached);
        let second = texts.of(&cached);
        assert!(
            Arc::ptr_eq(&first, &second),
            "the kept text is handed out again"
        );
        assert_eq!(&*first, r#"{"metadata":{"name":"a"}}"#);

        let private = Arc::new(json!({"metadata": {"name": "b"}}));
        assert_eq!(&*texts.of(&private), r#"{"metadata":{"name":"b"}}"#);
        assert_eq!(texts.len(), 1, "only the shared object's text is kept");
        drop(held_by_cache);
    }

    #[test]
    fn an_object_is_written_kind_api_version_and_metadata_first_as_kube_apiserver_writes_it() {
        let secret = json!({
            "apiVersion": "v1",
            "data": {"a": "YQ=="},
            "kind": "Secret",
            "metadata": {"name": "s", "resourceVersion": "7"},
            "type": "Opaque",
        });
        let text = object_text(&secret);
        assert_eq!(
            text,
            r#"{"kind":"Secret","apiVersion":"v1","metadata":{"name":"s","resourceVersion":"7"},"data":{"a":"YQ=="},"type":"Opaque"}"#
        );
        assert_eq!(
            serde_json::from_str::<Value>(&text).expect("JSON"),
            secret,
            "the same object"
        );
        for other in [json!({"data": {}}), json!([1, 2]), json!("x"), json!({})] {
            assert_eq!(object_text(&other), other.to_string(), "{other}");
        }
        let texts = Texts::default();
        let cached = Arc::new(secret);
        let _held_by_cache = cached.clone();
        assert_eq!(
            &*texts.of(&cached),
            text,
            "the cache's texts are written alike"
        );
    }

    #[test]
    fn a_new_object_at_the_address_of_a_dropped_one_gets_its_own_text() {
        let texts = Texts::default();
        for i in 0..3 * FIRST_SWEEP {
            let object = Arc::new(json!({"i": i}));
            let _cache = object.clone();
            assert_eq!(&*texts.of(&object), format!(r#"{{"i":{i}}}"#));
        }
        assert!(
            texts.len() < FIRST_SWEEP,
            "entries of dropped objects are swept"
        );
    }
}
