//! A cap on the watches one user holds open at once, so one client (a runaway informer, a
//! plugin host that leaks watches) cannot hold the server's memory and tasks. Users in
//! `system:masters` are exempt, as API Priority and Fairness exempts them; a watch past the
//! cap is a 429 with `Retry-After`, which client-go retries.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::authn::{MASTERS, User};
use crate::status::{ApiError, Result};

/// The default cap per user.
pub(crate) const DEFAULT_MAX_WATCHES_PER_USER: usize = 200;

/// The open watches of each user.
pub(crate) struct WatchSlots {
    max: usize,
    open: Mutex<HashMap<String, usize>>,
}

/// One open watch, given back when dropped (the watch's stream ends).
pub(crate) struct WatchSlot {
    slots: Arc<WatchSlots>,
    user: String,
}

impl WatchSlots {
    pub(crate) fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            max,
            open: Mutex::new(HashMap::new()),
        })
    }

    fn open(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A slot for `user`'s next watch; `None` for an exempt user; 429 past the cap.
    pub(crate) fn take(self: &Arc<Self>, user: &User) -> Result<Option<WatchSlot>> {
        if user.groups.iter().any(|g| g == MASTERS) {
            return Ok(None);
        }
        let mut open = self.open();
        let count = open.entry(user.name.clone()).or_insert(0);
        if *count >= self.max {
            return Err(ApiError::too_many_requests(
                format!(
                    "too many open watches for user {:?}: {} (the limit per user)",
                    user.name, self.max
                ),
                1,
            ));
        }
        *count += 1;
        Ok(Some(WatchSlot {
            slots: self.clone(),
            user: user.name.clone(),
        }))
    }

    /// How many watches `user` holds open.
    #[cfg(test)]
    pub(crate) fn held(&self, user: &str) -> usize {
        self.open().get(user).copied().unwrap_or(0)
    }
}

impl Drop for WatchSlot {
    fn drop(&mut self) {
        let mut open = self.slots.open();
        if let Some(count) = open.get_mut(&self.user) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                open.remove(&self.user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(name: &str, groups: &[&str]) -> User {
        User {
            name: name.into(),
            uid: None,
            groups: groups.iter().map(|g| (*g).to_owned()).collect(),
        }
    }

    #[test]
    fn a_user_past_the_cap_gets_a_429_until_a_watch_ends_and_masters_are_exempt() {
        let slots = WatchSlots::new(2);
        let robot = user("system:serviceaccount:ns:robot", &["system:authenticated"]);
        let first = slots.take(&robot).expect("first");
        let _second = slots.take(&robot).expect("second");
        let refused = slots.take(&robot).err().expect("third refused");
        assert_eq!(
            (refused.code, refused.reason.as_ref()),
            (429, "TooManyRequests")
        );
        assert!(
            refused.message.contains("the limit per user"),
            "{}",
            refused.message
        );
        let other = user("someone-else", &[]);
        assert!(slots.take(&other).expect("another user").is_some());
        drop(first);
        assert_eq!(slots.held(&robot.name), 1);
        assert!(slots.take(&robot).expect("a slot given back").is_some());
        let admin = user("admin", &[MASTERS]);
        for _ in 0..5 {
            assert!(slots.take(&admin).expect("exempt").is_none());
        }
    }
}
