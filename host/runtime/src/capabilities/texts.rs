//! The JSON text guests read shared objects as: serialized once per cached object version,
//! however many passes read it.
//!
//! A guest gets every object as JSON text. An object the informer cache shares (an
//! `Arc<Value>` someone else also holds) keeps its text here for as long as that `Arc`
//! lives; the entries of objects the cache has let go are swept as the memo grows. An object
//! read past the cache (held by this pass alone) is serialized and not kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

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
            return object.to_string().into();
        }
        let address = Arc::as_ptr(object) as usize;
        let same = |weak: &Weak<Value>| weak.upgrade().is_some_and(|o| Arc::ptr_eq(&o, object));
        if let Some((weak, text)) = self.lock().by_address.get(&address)
            && same(weak)
        {
            return text.clone();
        }
        let text: Arc<str> = object.to_string().into();
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
