//! A session's outbox: what the server sends on its own, queued until the transport takes it,
//! bounded whether or not anyone reads.
//!
//! The policy, for a client that does not read (a Streamable HTTP client that never opens,
//! or lost, its `GET` stream):
//! - `notifications/{tools,prompts,resources}/list_changed` are coalesced: at most one of each
//!   kind is pending (a second says nothing the first does not), and they are never dropped;
//! - `notifications/resources/updated` is coalesced per URI: at most one pending per resource;
//! - everything else (progress and log messages of calls without a stream of their own,
//!   requests to the client) is kept up to [`OUTBOX_CAPACITY`] messages; past it the oldest
//!   is dropped for the newest, and a warning is logged once per overflow.

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::sync::mpsc::error::TryRecvError;

use crate::protocol::{META_SUBSCRIPTION_ID, method};
use crate::tool::NotificationSink;

/// The most messages a session's outbox holds besides its coalesced `list_changed`
/// notifications; past it the oldest is dropped (see [`Outgoing`]).
pub const OUTBOX_CAPACITY: usize = 1024;

/// What makes two queued messages the same news.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Key {
    /// A `list_changed` notification, by method and by the 2026-07-28 subscription it
    /// answers (none for a legacy session's own).
    ListChanged(&'static str, Option<String>),
    /// `notifications/resources/updated`, by URI.
    Updated(String),
}

impl Key {
    fn of(message: &Value) -> Option<Key> {
        let name = message.get("method")?.as_str()?;
        let list = [
            method::TOOLS_LIST_CHANGED,
            method::PROMPTS_LIST_CHANGED,
            method::RESOURCES_LIST_CHANGED,
        ];
        if let Some(list) = list.into_iter().find(|m| *m == name) {
            let subscription = message
                .get("params")
                .and_then(|p| p.get("_meta")?.get(META_SUBSCRIPTION_ID))
                .map(Value::to_string);
            return Some(Key::ListChanged(list, subscription));
        }
        if name == method::RESOURCES_UPDATED {
            let uri = message.get("params")?.get("uri")?.as_str()?;
            return Some(Key::Updated(uri.to_owned()));
        }
        None
    }
}

struct Entry {
    message: Value,
    key: Option<Key>,
}

#[derive(Default)]
struct Queue {
    entries: VecDeque<Entry>,
    /// The keys of the entries queued, for coalescing.
    pending: HashSet<Key>,
    /// How many entries are `list_changed` (outside the cap).
    listed: usize,
    /// Set once the receiver is gone: messages are dropped as they come.
    closed: bool,
    /// Whether the current overflow has been logged.
    overflow_logged: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    /// Wakes receivers waiting on an empty queue.
    arrived: Notify,
    senders: AtomicUsize,
}

impl Shared {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A new outbox: its sending half (the session's) and its receiving half (the transport's).
pub(crate) fn channel() -> (Sender, Outgoing) {
    let shared = Arc::new(Shared::default());
    shared.senders.store(1, Ordering::Relaxed);
    (
        Sender {
            shared: shared.clone(),
        },
        Outgoing { shared },
    )
}

/// The session's end of its outbox.
pub(crate) struct Sender {
    shared: Arc<Shared>,
}

impl Clone for Sender {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Sender {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last sender: a waiting receiver learns that nothing more will come.
            self.shared.arrived.notify_waiters();
        }
    }
}

impl Sender {
    /// Queues `message` under the outbox's policy; `false` once the receiver is gone.
    pub(crate) fn send(&self, message: Value) -> bool {
        let key = Key::of(&message);
        let mut queue = self.shared.queue();
        if queue.closed {
            return false;
        }
        if let Some(key) = &key {
            if queue.pending.contains(key) {
                return true;
            }
            queue.pending.insert(key.clone());
        }
        // `list_changed` notifications (at most one per kind) do not count against the cap.
        if matches!(key, Some(Key::ListChanged(..))) {
            queue.listed += 1;
        } else if queue.entries.len() - queue.listed >= OUTBOX_CAPACITY {
            queue.drop_oldest();
        }
        queue.entries.push_back(Entry { message, key });
        drop(queue);
        self.shared.arrived.notify_waiters();
        true
    }

    /// A notification sink into this outbox.
    pub(crate) fn sink(&self) -> NotificationSink {
        let sender = self.clone();
        NotificationSink::new(move |message| {
            sender.send(message);
        })
    }
}

impl Queue {
    /// Makes room: drops the oldest message that is no `list_changed` (those are never dropped).
    fn drop_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .position(|e| !matches!(e.key, Some(Key::ListChanged(..))));
        let Some(entry) = oldest.and_then(|i| self.entries.remove(i)) else {
            return;
        };
        self.forget(entry.key);
        if !std::mem::replace(&mut self.overflow_logged, true) {
            tracing::warn!(
                capacity = OUTBOX_CAPACITY,
                "a session's outbox is full (its client reads no notifications, e.g. no GET stream open): dropping the oldest"
            );
        }
    }

    /// An entry with `key` has left the queue.
    fn forget(&mut self, key: Option<Key>) {
        if let Some(key) = key {
            if matches!(key, Key::ListChanged(..)) {
                self.listed -= 1;
            }
            self.pending.remove(&key);
        }
    }

    fn pop(&mut self) -> Option<Value> {
        let entry = self.entries.pop_front()?;
        self.forget(entry.key);
        if self.entries.len() < OUTBOX_CAPACITY / 2 {
            self.overflow_logged = false;
        }
        Some(entry.message)
    }
}

/// What a [`ServerSession`](super::ServerSession) sends on its own (list changes, resource
/// updates, the notifications of calls without a stream of their own), in order.
///
/// Bounded however long nobody reads it: `list_changed` notifications are coalesced (at most
/// one pending per kind, never dropped), `notifications/resources/updated` too (at most one
/// pending per URI), and past [`OUTBOX_CAPACITY`] other messages the oldest is dropped.
/// Dropping the receiver stops the queueing.
pub struct Outgoing {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outgoing")
            .field("len", &self.len())
            .finish()
    }
}

impl Drop for Outgoing {
    fn drop(&mut self) {
        let mut queue = self.shared.queue();
        queue.closed = true;
        queue.entries.clear();
        queue.pending.clear();
        queue.listed = 0;
    }
}

impl Outgoing {
    /// The next message; `None` once the session is gone and the queue is empty.
    ///
    /// Cancel-safe: a message is taken only when this returns it.
    pub async fn recv(&mut self) -> Option<Value> {
        self.next().await
    }

    /// The next message if one is queued.
    pub fn try_recv(&mut self) -> Result<Value, TryRecvError> {
        self.take()
    }

    /// [`recv`](Self::recv) through a shared reference, for a transport whose successive
    /// streams (HTTP `GET`s) read the one outbox.
    pub(crate) async fn next(&self) -> Option<Value> {
        loop {
            let arrived = self.shared.arrived.notified();
            tokio::pin!(arrived);
            // Registered before looking, so a message sent in between still wakes us.
            arrived.as_mut().enable();
            match self.take() {
                Ok(message) => return Some(message),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => arrived.await,
            }
        }
    }

    fn take(&self) -> Result<Value, TryRecvError> {
        let mut queue = self.shared.queue();
        match queue.pop() {
            Some(message) => Ok(message),
            None if self.shared.senders.load(Ordering::Acquire) == 0 => {
                Err(TryRecvError::Disconnected)
            }
            None => Err(TryRecvError::Empty),
        }
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.shared.queue().entries.len()
    }

    /// Whether no message is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn note(method: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": method})
    }

    #[test]
    fn list_changes_are_coalesced_per_kind_and_updates_per_uri() {
        let (tx, mut rx) = channel();
        for _ in 0..2000 {
            tx.send(note(method::TOOLS_LIST_CHANGED));
            tx.send(note(method::PROMPTS_LIST_CHANGED));
            let updated = json!({"jsonrpc": "2.0", "method": method::RESOURCES_UPDATED, "params": {"uri": "a://1"}});
            tx.send(updated);
        }
        assert_eq!(rx.len(), 3);
        assert_eq!(rx.try_recv().unwrap(), note(method::TOOLS_LIST_CHANGED));
        // Taken: the next change is news again.
        tx.send(note(method::TOOLS_LIST_CHANGED));
        assert_eq!(rx.len(), 3);
    }

    #[test]
    fn past_the_capacity_the_oldest_goes_but_list_changes_stay() {
        let (tx, mut rx) = channel();
        tx.send(note(method::TOOLS_LIST_CHANGED));
        for i in 0..OUTBOX_CAPACITY + 10 {
            tx.send(
                json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"i": i}}),
            );
        }
        assert_eq!(rx.len(), OUTBOX_CAPACITY + 1);
        assert_eq!(rx.try_recv().unwrap(), note(method::TOOLS_LIST_CHANGED));
        assert_eq!(rx.try_recv().unwrap()["params"]["i"], 10);
    }

    #[test]
    fn a_gone_receiver_stops_the_queueing_and_gone_senders_end_it() {
        let (tx, rx) = channel();
        drop(rx);
        assert!(!tx.send(note(method::TOOLS_LIST_CHANGED)));
        let (tx, mut rx) = channel();
        tx.send(note(method::TOOLS_LIST_CHANGED));
        drop(tx);
        assert!(rx.try_recv().is_ok());
        assert_eq!(rx.try_recv(), Err(TryRecvError::Disconnected));
    }
}
