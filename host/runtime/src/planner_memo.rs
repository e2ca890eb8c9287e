//! The answers a planner plugin gave to calls that read nothing but their request, kept so
//! that the same request is answered again without running the planner.
//!
//! A planner call is kept when, between its start and its answer, the planner called no
//! import at all (no WASI: no clock, no randomness, no stream; no `crypto`, no `logging`):
//! its answer is then a function of the planner's code and the request alone, so the same
//! request gets the same answer. Only answers that add no key are kept (a converged Secret,
//! a report, the planner's refusal): nothing generated is held here, and an answer that adds
//! keys is not asked for twice, since writing them changes the next request.
//!
//! A memo belongs to one loaded planner plugin: a planner replaced or relinked starts with
//! an empty one. Requests are kept as their SHA-256 (the fields' `Hash` encoding), so no
//! Secret text stays in the memo. It holds at most its capacity in answers, and
//! [`BYTES_PER_ANSWER`] times that in bytes, in two generations: a lookup moves its answer
//! to the current one, and when the current one is full the older is dropped — the answers
//! not used for a whole generation go first.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};
use wasm_operator_planner::{
    CertificatesPlan, CertificatesRequest, Entry, PlanError, SecretPlan, SecretRequest,
};

/// A request as the memo keys it: the SHA-256 of its call and fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RequestKey([u8; 32]);

impl RequestKey {
    /// The key of a `plan` call.
    pub(crate) fn secret(request: &SecretRequest) -> Self {
        Self::of("plan", request)
    }

    /// The key of a `plan-certificates` call.
    pub(crate) fn certificates(request: &CertificatesRequest) -> Self {
        Self::of("plan-certificates", request)
    }

    fn of(call: &str, request: &impl Hash) -> Self {
        let mut hasher = Sha256Hasher(Sha256::new());
        call.hash(&mut hasher);
        request.hash(&mut hasher);
        Self(hasher.0.finalize().into())
    }
}

/// Feeds `Hash`'s encoding (length-prefixed lists, terminated strings, tagged options) to
/// SHA-256.
struct Sha256Hasher(Sha256);

impl Hasher for Sha256Hasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    fn finish(&self) -> u64 {
        // Only the digest is used; `finish` is what `Hasher` must offer besides.
        let digest = self.0.clone().finalize();
        u64::from_le_bytes([
            digest[0], digest[1], digest[2], digest[3], digest[4], digest[5], digest[6], digest[7],
        ])
    }
}

/// A kept answer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    Secret(Result<SecretPlan, PlanError>),
    Certificates(Result<CertificatesPlan, PlanError>),
}

impl Answer {
    /// About the bytes the answer and its key take in the memo.
    fn size(&self) -> usize {
        fn texts(list: &[String]) -> usize {
            list.iter().map(|t| size_of::<String>() + t.len()).sum()
        }
        fn plan(plan: &SecretPlan) -> usize {
            size_of::<SecretPlan>()
                + plan.name.len()
                + plan.secret_type.len()
                + plan
                    .add
                    .iter()
                    .map(|e| size_of::<Entry>() + e.key.len() + e.value.len())
                    .sum::<usize>()
                + texts(&plan.reports)
                + texts(&plan.declared_units)
                + texts(&plan.next_ready_units)
                + plan
                    .type_kept
                    .as_ref()
                    .map_or(0, |(a, b)| a.len() + b.len())
        }
        let answer = match self {
            Self::Secret(Ok(secret)) => plan(secret),
            Self::Certificates(Ok(set)) => set.secrets.iter().map(plan).sum(),
            Self::Secret(Err(error)) | Self::Certificates(Err(error)) => {
                error.subject.len() + error.message.len()
            }
        };
        size_of::<RequestKey>() + size_of::<Self>() + answer
    }
}

/// A planner's answer the memo can keep: [`SecretPlan`] and [`CertificatesPlan`].
pub(crate) trait Plan: Clone + Sized {
    /// Whether the plan adds no key.
    fn adds_nothing(&self) -> bool;
    fn into_answer(answer: Result<Self, PlanError>) -> Answer;
    fn from_answer(answer: Answer) -> Option<Result<Self, PlanError>>;
}

impl Plan for SecretPlan {
    fn adds_nothing(&self) -> bool {
        self.add.is_empty()
    }

    fn into_answer(answer: Result<Self, PlanError>) -> Answer {
        Answer::Secret(answer)
    }

    fn from_answer(answer: Answer) -> Option<Result<Self, PlanError>> {
        match answer {
            Answer::Secret(answer) => Some(answer),
            Answer::Certificates(_) => None,
        }
    }
}

impl Plan for CertificatesPlan {
    fn adds_nothing(&self) -> bool {
        self.secrets.iter().all(SecretPlan::adds_nothing)
    }

    fn into_answer(answer: Result<Self, PlanError>) -> Answer {
        Answer::Certificates(answer)
    }

    fn from_answer(answer: Answer) -> Option<Result<Self, PlanError>> {
        match answer {
            Answer::Certificates(answer) => Some(answer),
            Answer::Secret(_) => None,
        }
    }
}

/// The bytes of answers a memo may hold per answer of its capacity. A converged Secret's
/// plan takes a few hundred; a planner whose answers are larger than this gets fewer kept,
/// never more memory.
pub(crate) const BYTES_PER_ANSWER: usize = 2048;

/// The kept answers of one planner plugin.
pub(crate) struct PlanMemo {
    /// How many answers each generation holds; 0 keeps none.
    generation_answers: usize,
    /// How many bytes of answers each generation holds.
    generation_bytes: usize,
    answers: Mutex<Generations>,
}

#[derive(Default)]
struct Generations {
    current: Generation,
    older: Generation,
}

/// Answers with their sizes, and the sum of those.
#[derive(Default)]
struct Generation {
    answers: HashMap<RequestKey, (Answer, usize)>,
    bytes: usize,
}

impl Generation {
    fn remove(&mut self, key: &RequestKey) -> Option<(Answer, usize)> {
        let (answer, size) = self.answers.remove(key)?;
        self.bytes -= size;
        Some((answer, size))
    }
}

impl PlanMemo {
    /// A memo holding at most `capacity` answers and `capacity` × [`BYTES_PER_ANSWER`]
    /// bytes of them (0: none).
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            generation_answers: capacity / 2,
            generation_bytes: capacity / 2 * BYTES_PER_ANSWER,
            answers: Mutex::default(),
        }
    }

    /// The answer kept for `key`, if any.
    pub(crate) fn get<P: Plan>(&self, key: &RequestKey) -> Option<Result<P, PlanError>> {
        let mut answers = self.lock();
        let answer = match answers.current.answers.get(key) {
            Some((answer, _)) => answer.clone(),
            None => {
                let (answer, size) = answers.older.remove(key)?;
                self.insert_current(&mut answers, *key, answer.clone(), size);
                answer
            }
        };
        P::from_answer(answer)
    }

    /// Keeps `answer` to the request of `key`, unless it adds a key or is larger than a
    /// generation holds. The caller has checked that the call read nothing but its
    /// request.
    pub(crate) fn keep<P: Plan>(&self, key: RequestKey, answer: &Result<P, PlanError>) {
        let adds = answer.as_ref().is_ok_and(|plan| !plan.adds_nothing());
        if self.generation_answers == 0 || adds {
            return;
        }
        let answer = P::into_answer(answer.clone());
        let size = answer.size();
        if size > self.generation_bytes {
            return;
        }
        let mut answers = self.lock();
        self.insert_current(&mut answers, key, answer, size);
    }

    /// How many answers are kept, and their bytes.
    #[cfg(test)]
    fn held(&self) -> (usize, usize) {
        let answers = self.lock();
        (
            answers.current.answers.len() + answers.older.answers.len(),
            answers.current.bytes + answers.older.bytes,
        )
    }

    /// Puts `answer` in the current generation, which becomes the older one first when it
    /// is full.
    fn insert_current(
        &self,
        answers: &mut Generations,
        key: RequestKey,
        answer: Answer,
        size: usize,
    ) {
        answers.current.remove(&key);
        let current = &answers.current;
        if current.answers.len() >= self.generation_answers
            || current.bytes + size > self.generation_bytes
        {
            answers.older = std::mem::take(&mut answers.current);
        }
        answers.current.bytes += size;
        answers.current.answers.insert(key, (answer, size));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        // A panic while holding the lock leaves whole maps behind: still a valid memo.
        self.answers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(name: &str) -> SecretRequest {
        SecretRequest {
            name: name.into(),
            entries: r#"[{"name":"s","generators":[{"type":"random","key":"k"}]}]"#.into(),
            existing: Some(r#"{"data":{"k":"dg=="}}"#.into()),
            ready_units: vec!["k".into()],
            generate: true,
        }
    }

    fn converged(name: &str) -> Result<SecretPlan, PlanError> {
        Ok(SecretPlan {
            name: name.into(),
            secret_type: "Opaque".into(),
            ready: true,
            ..SecretPlan::default()
        })
    }

    #[test]
    fn requests_that_differ_in_any_field_have_different_keys() {
        let base = request("s");
        let variants: Vec<SecretRequest> = vec![
            SecretRequest {
                name: "t".into(),
                ..base.clone()
            },
            SecretRequest {
                entries: "[]".into(),
                ..base.clone()
            },
            SecretRequest {
                existing: None,
                ..base.clone()
            },
            SecretRequest {
                existing: Some(String::new()),
                ..base.clone()
            },
            SecretRequest {
                ready_units: vec![],
                ..base.clone()
            },
            SecretRequest {
                ready_units: vec!["k".into(), String::new()],
                ..base.clone()
            },
            SecretRequest {
                generate: false,
                ..base.clone()
            },
        ];
        let mut keys: Vec<RequestKey> = variants.iter().map(RequestKey::secret).collect();
        keys.push(RequestKey::secret(&base));
        let distinct: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(distinct.len(), keys.len(), "every field is part of the key");
        assert_eq!(RequestKey::secret(&base), RequestKey::secret(&base.clone()));
    }

    #[test]
    fn a_plan_request_and_a_certificates_request_never_share_a_key() {
        let certificates = CertificatesRequest::default();
        let secret = SecretRequest::default();
        assert_ne!(
            RequestKey::certificates(&certificates),
            RequestKey::secret(&secret)
        );
    }

    #[test]
    fn only_answers_that_add_no_key_are_kept() {
        let memo = PlanMemo::new(16);
        let adding = Ok(SecretPlan {
            add: vec![wasm_operator_planner::Entry {
                key: "k".into(),
                value: b"generated".to_vec(),
            }],
            ..SecretPlan::default()
        });
        let refused = Err(PlanError {
            subject: "s".into(),
            message: "bad entry".into(),
        });
        let cases = [
            ("adds a key", adding, false),
            ("converged", converged("s"), true),
            ("refused", refused, true),
        ];
        for (i, (case, answer, kept)) in cases.into_iter().enumerate() {
            let key = RequestKey::secret(&request(&i.to_string()));
            memo.keep(key, &answer);
            assert_eq!(
                memo.get::<SecretPlan>(&key),
                kept.then_some(answer),
                "{case}"
            );
        }
    }

    #[test]
    fn the_memo_holds_at_most_its_capacity_and_drops_the_least_used_generation() {
        let memo = PlanMemo::new(4);
        let key = |i: usize| RequestKey::secret(&request(&i.to_string()));
        for i in 0..4 {
            memo.keep(key(i), &converged(&i.to_string()));
        }
        assert_eq!(memo.held().0, 4);
        // 0 is used again: it moves to the current generation, 1 does not.
        assert!(memo.get::<SecretPlan>(&key(0)).is_some());
        memo.keep(key(4), &converged("4"));
        memo.keep(key(5), &converged("5"));
        assert!(memo.held().0 <= 4, "{:?}", memo.held());
        assert!(
            memo.get::<SecretPlan>(&key(5)).is_some(),
            "the newest is kept"
        );
        assert!(
            memo.get::<SecretPlan>(&key(1)).is_none(),
            "an unused one is dropped"
        );
    }

    #[test]
    fn a_planner_cannot_make_the_memo_hold_more_than_its_bytes() {
        let memo = PlanMemo::new(4);
        let budget = 4 * BYTES_PER_ANSWER;
        let with_report = |bytes: usize| -> Result<SecretPlan, PlanError> {
            Ok(SecretPlan {
                reports: vec!["x".repeat(bytes)],
                ..SecretPlan::default()
            })
        };
        let key = |i: usize| RequestKey::secret(&request(&i.to_string()));
        memo.keep(key(0), &with_report(budget));
        assert_eq!(memo.held(), (0, 0), "larger than a generation: not kept");
        for i in 1..10 {
            memo.keep(key(i), &with_report(BYTES_PER_ANSWER + 500));
            let (answers, bytes) = memo.held();
            assert!(bytes <= budget, "{answers} answers, {bytes} bytes");
        }
        assert!(
            memo.get::<SecretPlan>(&key(9)).is_some(),
            "the newest is kept"
        );
    }

    #[test]
    fn a_memo_of_capacity_zero_keeps_nothing() {
        let memo = PlanMemo::new(0);
        let key = RequestKey::secret(&request("s"));
        memo.keep(key, &converged("s"));
        assert_eq!(memo.get::<SecretPlan>(&key), None);
    }
}
