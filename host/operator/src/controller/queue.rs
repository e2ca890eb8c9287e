//! The work queue: what to reconcile next, with controller-runtime's guarantees.
//!
//! - A key is never handed out twice at once: a key added while its pass runs is marked
//!   and queued again when the pass is [`done`](WorkQueue::done).
//! - Duplicates coalesce: a key already waiting is not queued twice; of two delays the
//!   earlier wins.
//! - A failed pass is retried after a per-key exponential backoff ([`Backoff`]: 5 ms
//!   doubling to 1000 s by default); a success resets it. A requested requeue-after is
//!   honoured as given.
//! - At most `concurrency` keys are handed out at once.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// Per-key exponential backoff: `base * 2^failures`, capped at `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    pub base: Duration,
    pub max: Duration,
}

impl Default for Backoff {
    /// controller-runtime's default: 5 ms to 1000 s.
    fn default() -> Self {
        Self {
            base: Duration::from_millis(5),
            max: Duration::from_secs(1000),
        }
    }
}

impl Backoff {
    /// The delay after `failures` consecutive failures (the first failure waits `base`).
    pub(crate) fn delay(&self, failures: u32) -> Duration {
        let factor = 2u32
            .checked_pow(failures.saturating_sub(1))
            .unwrap_or(u32::MAX);
        self.base
            .checked_mul(factor)
            .unwrap_or(self.max)
            .min(self.max)
    }
}

/// How a pass ended, for the queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Done {
    /// Succeeded: forget the key's failures.
    Success,
    /// Succeeded and asked to run again after this long.
    RequeueAfter(Duration),
    /// Failed: retry after the key's backoff.
    Failed,
    /// Failed in a way a retry cannot fix: wait for the next change.
    FailedPermanently,
    /// Failed, and the plugin asked to be retried after this long (contract 1.1's
    /// `retry-after`): the delay replaces the backoff for this try, and the key's failure
    /// count is left as it was (neither raised nor reset). The plugin paces itself here
    /// (e.g. by a server's Retry-After), so this try does not lengthen the backoff of the
    /// key's next transient failure, and only a success resets it.
    FailedRetryAfter(Duration),
}

struct Inner<K> {
    ready: VecDeque<K>,
    waiting: HashSet<K>,
    active: HashSet<K>,
    dirty: HashSet<K>,
    delayed: BTreeMap<(Instant, u64), K>,
    delayed_at: HashMap<K, (Instant, u64)>,
    failures: HashMap<K, u32>,
    sequence: u64,
}

/// The work queue of one controller.
pub struct WorkQueue<K> {
    inner: Mutex<Inner<K>>,
    changed: Notify,
    backoff: Backoff,
    concurrency: usize,
}

impl<K: Clone + Eq + Hash> WorkQueue<K> {
    /// An empty queue handing out at most `concurrency` keys at once.
    pub(crate) fn new(backoff: Backoff, concurrency: usize) -> Self {
        Self {
            inner: Mutex::new(Inner {
                ready: VecDeque::new(),
                waiting: HashSet::new(),
                active: HashSet::new(),
                dirty: HashSet::new(),
                delayed: BTreeMap::new(),
                delayed_at: HashMap::new(),
                failures: HashMap::new(),
                sequence: 0,
            }),
            changed: Notify::new(),
            backoff,
            concurrency: concurrency.max(1),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner<K>> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues `key` now.
    pub(crate) fn add(&self, key: K) {
        let mut inner = self.lock();
        if let Some(at) = inner.delayed_at.remove(&key) {
            inner.delayed.remove(&at);
        }
        if inner.active.contains(&key) {
            inner.dirty.insert(key);
        } else if inner.waiting.insert(key.clone()) {
            inner.ready.push_back(key);
        }
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Queues `key` after `delay` (unless it is queued sooner).
    pub(crate) fn add_after(&self, key: K, delay: Duration) {
        if delay.is_zero() {
            return self.add(key);
        }
        let at = Instant::now() + delay;
        let mut inner = self.lock();
        if inner.waiting.contains(&key) {
            return;
        }
        if let Some(&existing) = inner.delayed_at.get(&key) {
            if existing.0 <= at {
                return;
            }
            inner.delayed.remove(&existing);
        }
        inner.sequence += 1;
        let slot = (at, inner.sequence);
        inner.delayed.insert(slot, key.clone());
        inner.delayed_at.insert(key, slot);
        drop(inner);
        self.changed.notify_waiters();
    }

    /// Waits for the next key to reconcile and marks it active.
    pub(crate) async fn next(&self) -> K {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let wake_at = {
                let mut inner = self.lock();
                let now = Instant::now();
                while let Some((&slot, _)) = inner.delayed.first_key_value() {
                    if slot.0 > now {
                        break;
                    }
                    if let Some(key) = inner.delayed.remove(&slot) {
                        inner.delayed_at.remove(&key);
                        if inner.active.contains(&key) {
                            inner.dirty.insert(key);
                        } else if inner.waiting.insert(key.clone()) {
                            inner.ready.push_back(key);
                        }
                    }
                }
                if inner.active.len() < self.concurrency
                    && let Some(key) = inner.ready.pop_front()
                {
                    inner.waiting.remove(&key);
                    inner.active.insert(key.clone());
                    return key;
                }
                inner.delayed.first_key_value().map(|(slot, _)| slot.0)
            };
            match wake_at {
                Some(at) => {
                    let _ = tokio::time::timeout_at(at, notified).await;
                }
                None => notified.await,
            }
        }
    }

    /// Ends the pass of `key`, scheduling what comes next.
    pub(crate) fn done(&self, key: K, done: Done) {
        let retry = {
            let mut inner = self.lock();
            inner.active.remove(&key);
            let dirty = inner.dirty.remove(&key);
            let retry = match done {
                Done::Success => {
                    inner.failures.remove(&key);
                    None
                }
                Done::RequeueAfter(after) => {
                    inner.failures.remove(&key);
                    Some(after)
                }
                Done::FailedPermanently => None,
                Done::FailedRetryAfter(after) => Some(after),
                Done::Failed => {
                    let failures = inner.failures.entry(key.clone()).or_insert(0);
                    *failures += 1;
                    Some(self.backoff.delay(*failures))
                }
            };
            if dirty && inner.waiting.insert(key.clone()) {
                inner.ready.push_back(key.clone());
            }
            retry
        };
        if let Some(after) = retry {
            self.add_after(key, after);
        }
        // A key made dirty during its pass is ready now: wake the waiters for it too.
        self.changed.notify_waiters();
    }

    /// Hands back a key taken with [`next`](Self::next) without running it (this replica
    /// stopped leading): it goes first in line again, its failures untouched.
    pub(crate) fn give_back(&self, key: K) {
        {
            let mut inner = self.lock();
            inner.active.remove(&key);
            inner.dirty.remove(&key);
            if inner.waiting.insert(key.clone()) {
                inner.ready.push_front(key);
            }
        }
        self.changed.notify_waiters();
    }

    /// Consecutive failures of `key` so far.
    pub fn failures(&self, key: &K) -> u32 {
        self.lock().failures.get(key).copied().unwrap_or(0)
    }

    /// Keys handed out and not done yet.
    pub fn in_flight(&self) -> usize {
        self.lock().active.len()
    }

    /// Whether no key is running or ready to run (keys may wait for a later time).
    pub fn is_idle(&self) -> bool {
        let inner = self.lock();
        inner.active.is_empty() && inner.ready.is_empty()
    }

    /// Keys waiting (ready or delayed), for the queue-depth metric.
    pub(crate) fn depth(&self) -> usize {
        let inner = self.lock();
        inner.ready.len() + inner.delayed.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue() -> WorkQueue<&'static str> {
        WorkQueue::new(Backoff::default(), 2)
    }

    async fn next_within(q: &WorkQueue<&'static str>, ms: u64) -> Option<&'static str> {
        tokio::time::timeout(Duration::from_millis(ms), q.next())
            .await
            .ok()
    }

    #[test]
    fn the_default_backoff_doubles_from_5_ms_to_at_most_1000_s() {
        let b = Backoff::default();
        let delays: Vec<Duration> = [1, 2, 3, 10].iter().map(|&f| b.delay(f)).collect();
        assert_eq!(delays, [5, 10, 20, 2560].map(Duration::from_millis));
        assert_eq!(b.delay(40), Duration::from_secs(1000));
    }

    #[tokio::test]
    async fn duplicates_coalesce() {
        let q = queue();
        q.add("a");
        q.add("a");
        assert_eq!(q.depth(), 1);
        assert_eq!(next_within(&q, 50).await, Some("a"));
        assert_eq!(next_within(&q, 50).await, None);
    }

    #[tokio::test]
    async fn a_key_added_during_its_pass_runs_again_only_after_the_pass() {
        let q = queue();
        q.add("a");
        let key = next_within(&q, 50).await.expect("a");
        q.add(key);
        assert_eq!(
            next_within(&q, 50).await,
            None,
            "never two passes of one key at once"
        );
        q.done(key, Done::Success);
        assert_eq!(next_within(&q, 50).await, Some("a"));
    }

    #[tokio::test]
    async fn a_waiter_is_woken_for_a_key_changed_during_a_pass_that_asked_for_a_requeue() {
        let q = std::sync::Arc::new(queue());
        q.add("a");
        let key = next_within(&q, 50).await.expect("a");
        let waiter = {
            let q = q.clone();
            tokio::spawn(async move { q.next().await })
        };
        tokio::task::yield_now().await;
        q.add(key);
        // The waiter wakes for the add, finds the key still in its pass, and waits again.
        tokio::time::sleep(Duration::from_millis(20)).await;
        q.done(key, Done::RequeueAfter(Duration::from_secs(3600)));
        let next = tokio::time::timeout(Duration::from_secs(1), waiter)
            .await
            .expect("the waiting dispatcher is woken")
            .expect("joined");
        assert_eq!(
            next, "a",
            "the change during the pass runs now, not in an hour"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn backoff_grows_per_key_and_resets_on_success() {
        let q = queue();
        q.add("a");
        for expected in [1, 2, 3] {
            let key = q.next().await;
            q.done(key, Done::Failed);
            assert_eq!(q.failures(&"a"), expected);
        }
        let started = Instant::now();
        let key = q.next().await;
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(20),
            "the third failure waits 20 ms"
        );
        q.done(key, Done::Success);
        assert_eq!(q.failures(&"a"), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn requeue_after_is_honoured() {
        let q = queue();
        q.add("a");
        let key = q.next().await;
        let started = Instant::now();
        q.done(key, Done::RequeueAfter(Duration::from_secs(5)));
        assert_eq!(q.next().await, "a");
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[tokio::test]
    async fn at_most_concurrency_keys_are_handed_out() {
        let q = queue();
        for key in ["a", "b", "c"] {
            q.add(key);
        }
        let a = next_within(&q, 50).await.expect("first");
        next_within(&q, 50).await.expect("second");
        assert_eq!(next_within(&q, 50).await, None, "the limit is 2");
        q.done(a, Done::Success);
        assert_eq!(next_within(&q, 50).await, Some("c"));
    }

    #[tokio::test]
    async fn a_permanent_failure_waits_for_the_next_change() {
        let q = queue();
        q.add("a");
        let key = q.next().await;
        q.done(key, Done::FailedPermanently);
        assert_eq!(next_within(&q, 50).await, None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_retry_after_failure_waits_its_delay_and_leaves_the_backoff_count() {
        let q = queue();
        q.add("a");
        let key = q.next().await;
        q.done(key, Done::Failed);
        assert_eq!(q.failures(&"a"), 1);
        let key = q.next().await;
        let started = Instant::now();
        q.done(key, Done::FailedRetryAfter(Duration::from_secs(7)));
        assert_eq!(q.next().await, "a");
        assert_eq!(
            started.elapsed(),
            Duration::from_secs(7),
            "the plugin's delay, not the backoff"
        );
        assert_eq!(q.failures(&"a"), 1, "neither raised nor reset");
    }
}
