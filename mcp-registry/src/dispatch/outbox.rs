//! A session's outbox: what the server sends on its own, queued until the transport takes it,
//! bounded whether or not anyone reads. Its rule is the one every path to a client follows
//! (the stdio writer, a `POST`'s SSE stream, the `GET` stream, listen streams):
//!
//! - responses are never dropped (what bounds them is the transport's cap on requests);
//! - `notifications/{tools,prompts,resources}/list_changed` are coalesced: at most one of each
//!   kind is pending (a second says nothing the first does not), and they are never dropped;
//! - `notifications/resources/updated` is coalesced per URI: at most one pending per resource;
//! - everything else (progress and log messages, requests to the client) is kept up to
//!   [`OUTBOX_CAPACITY`] messages; past it the oldest is dropped for the newest, counted
//!   ([`Outgoing::dropped`]), and a warning is logged once per overflow;
//! - a peer that never reads is disconnected in the end by its transport (a write that makes
//!   no progress for a while ends the connection, the reason logged).

use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Notify;
use tokio::sync::mpsc::error::TryRecvError;

use crate::protocol::{META_SUBSCRIPTION_ID, method};
use crate::sync::MutexExt;
use crate::tool::NotificationSink;

/// The most messages a session's outbox holds besides its coalesced `list_changed`
/// notifications; past it the oldest is dropped (see [`Outgoing`]).
pub const OUTBOX_CAPACITY: usize = 1024;

/// What makes two queued messages the same news.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum Key {
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

/// How a queued message is treated (see the module's rule).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Class {
    /// A response: never dropped, outside the cap.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    Reply,
    /// A notification or a request to the client: coalesced by its key, if it has one, else
    /// capped.
    Note(Option<Key>),
}

impl Class {
    /// The class of the notification `message`.
    pub(crate) fn of_note(message: &Value) -> Class {
        Class::Note(Key::of(message))
    }
}

struct Entry<T> {
    message: T,
    /// `None` for a response.
    key: Option<Key>,
    reply: bool,
}

struct Queue<T> {
    entries: VecDeque<Entry<T>>,
    /// The keys of the entries queued, for coalescing.
    pending: HashSet<Key>,
    /// How many entries are `list_changed` or responses (outside the cap).
    uncapped: usize,
    /// How many entries are responses.
    replies: usize,
    /// How many messages were dropped for newer ones, in all.
    dropped: u64,
    /// Set once the receiver is gone: messages are dropped as they come.
    closed: bool,
    /// Whether the current overflow has been logged.
    overflow_logged: bool,
    /// What the queue feeds, for the log.
    what: &'static str,
}

struct Shared<T> {
    queue: Mutex<Queue<T>>,
    /// Wakes receivers waiting on an empty queue.
    arrived: Notify,
    senders: AtomicUsize,
}

/// A new outbox: its sending half (the session's) and its receiving half (the transport's).
pub(crate) fn channel() -> (Sender, Outgoing) {
    let (sender, receiver) =
        bounded("a session's outbox (its client reads no notifications, e.g. no GET stream open)");
    (sender, Outgoing(receiver))
}

/// A queue under the outbox's rule for any path to a client, `what` naming it in the log.
pub(crate) fn bounded<T>(what: &'static str) -> (Sender<T>, Receiver<T>) {
    let shared = Arc::new(Shared {
        queue: Mutex::new(Queue {
            entries: VecDeque::new(),
            pending: HashSet::new(),
            uncapped: 0,
            replies: 0,
            dropped: 0,
            closed: false,
            overflow_logged: false,
            what,
        }),
        arrived: Notify::new(),
        senders: AtomicUsize::new(1),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

/// The sending end of a queue under the outbox's rule.
pub(crate) struct Sender<T = Value> {
    shared: Arc<Shared<T>>,
}

impl<T> Clone for Sender<T> {
    fn clone(&self) -> Self {
        self.shared.senders.fetch_add(1, Ordering::Relaxed);
        Sender {
            shared: self.shared.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        if self.shared.senders.fetch_sub(1, Ordering::AcqRel) == 1 {
            // The last sender: a waiting receiver learns that nothing more will come.
            self.shared.arrived.notify_waiters();
        }
    }
}

impl<T> Sender<T> {
    /// Queues `message` as `class` says; `false` once the receiver is gone.
    pub(crate) fn push(&self, message: T, class: Class) -> bool {
        let mut queue = self.shared.queue.lock_unpoisoned();
        if queue.closed {
            return false;
        }
        let (key, reply) = match class {
            Class::Reply => (None, true),
            Class::Note(key) => (key, false),
        };
        if let Some(key) = &key {
            if queue.pending.contains(key) {
                return true;
            }
            queue.pending.insert(key.clone());
        }
        // Responses and `list_changed` notifications (at most one per kind) are not capped.
        if reply || matches!(key, Some(Key::ListChanged(..))) {
            queue.uncapped += 1;
            queue.replies += usize::from(reply);
        } else if queue.entries.len() - queue.uncapped >= OUTBOX_CAPACITY {
            queue.drop_oldest();
        }
        queue.entries.push_back(Entry {
            message,
            key,
            reply,
        });
        drop(queue);
        self.shared.arrived.notify_waiters();
        true
    }

    /// Queues the response `reply` (never dropped); `false` once the receiver is gone.
    #[cfg_attr(not(any(feature = "stdio", feature = "http")), allow(dead_code))]
    pub(crate) fn reply(&self, reply: T) -> bool {
        self.push(reply, Class::Reply)
    }
}

impl Sender<Value> {
    /// Queues the notification (or request to the client) `message` under the outbox's
    /// rule; `false` once the receiver is gone.
    pub(crate) fn send(&self, message: Value) -> bool {
        let class = Class::of_note(&message);
        self.push(message, class)
    }

    /// A notification sink into this outbox.
    pub(crate) fn sink(&self) -> NotificationSink {
        let sender = self.clone();
        NotificationSink::new(move |message| {
            sender.send(message);
        })
    }
}

impl<T> Queue<T> {
    /// Makes room: drops the oldest message that is neither a response nor a `list_changed`
    /// (those are never dropped).
    fn drop_oldest(&mut self) {
        let oldest = self
            .entries
            .iter()
            .position(|e| !e.reply && !matches!(e.key, Some(Key::ListChanged(..))));
        let Some(entry) = oldest.and_then(|i| self.entries.remove(i)) else {
            return;
        };
        self.forget(&entry);
        self.dropped += 1;
        if !std::mem::replace(&mut self.overflow_logged, true) {
            tracing::warn!(
                capacity = OUTBOX_CAPACITY,
                dropped_so_far = self.dropped,
                "{} is full: dropping the oldest notifications",
                self.what
            );
        }
    }

    /// `entry` has left the queue.
    fn forget(&mut self, entry: &Entry<T>) {
        if entry.reply || matches!(entry.key, Some(Key::ListChanged(..))) {
            self.uncapped -= 1;
            self.replies -= usize::from(entry.reply);
        }
        if let Some(key) = &entry.key {
            self.pending.remove(key);
        }
    }

    fn pop(&mut self) -> Option<T> {
        let entry = self.entries.pop_front()?;
        self.forget(&entry);
        if self.entries.len() < OUTBOX_CAPACITY / 2 {
            self.overflow_logged = false;
        }
        Some(entry.message)
    }
}

/// The receiving end of a queue under the outbox's rule.
pub(crate) struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let mut queue = self.shared.queue.lock_unpoisoned();
        queue.closed = true;
        queue.entries.clear();
        queue.pending.clear();
        queue.uncapped = 0;
        queue.replies = 0;
    }
}

impl<T> Receiver<T> {
    /// The next message; `None` once every sender is gone and the queue is empty.
    ///
    /// Cancel-safe: a message is taken only when this returns it.
    pub(crate) async fn next(&self) -> Option<T> {
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

    /// Whether nothing is queued now.
    #[cfg_attr(not(feature = "http"), allow(dead_code))]
    pub(crate) fn is_empty(&self) -> bool {
        self.shared.queue.lock_unpoisoned().entries.is_empty()
    }

    /// The next message if one is queued.
    pub(crate) fn take(&self) -> Result<T, TryRecvError> {
        let mut queue = self.shared.queue.lock_unpoisoned();
        match queue.pop() {
            Some(message) => Ok(message),
            None if self.shared.senders.load(Ordering::Acquire) == 0 => {
                Err(TryRecvError::Disconnected)
            }
            None => Err(TryRecvError::Empty),
        }
    }

    /// How many messages are queued.
    pub(crate) fn len(&self) -> usize {
        self.shared.queue.lock_unpoisoned().entries.len()
    }

    /// How many notifications were dropped for newer ones, in all.
    pub(crate) fn dropped(&self) -> u64 {
        self.shared.queue.lock_unpoisoned().dropped
    }

    /// How many responses are queued (what stdio's reading waits on).
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn replies(&self) -> usize {
        self.shared.queue.lock_unpoisoned().replies
    }
}

/// What a [`ServerSession`](super::ServerSession) sends on its own (list changes, resource
/// updates, the notifications of calls without a stream of their own), in order.
///
/// Bounded however long nobody reads it: `list_changed` notifications are coalesced (at most
/// one pending per kind, never dropped), `notifications/resources/updated` too (at most one
/// pending per URI), and past [`OUTBOX_CAPACITY`] other messages the oldest is dropped
/// (counted: [`dropped`](Self::dropped)). Dropping the receiver stops the queueing.
pub struct Outgoing(Receiver<Value>);

impl std::fmt::Debug for Outgoing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outgoing")
            .field("len", &self.len())
            .field("dropped", &self.dropped())
            .finish()
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
        self.0.take()
    }

    /// [`recv`](Self::recv) through a shared reference, for a transport whose successive
    /// streams (HTTP `GET`s) read the one outbox.
    pub(crate) async fn next(&self) -> Option<Value> {
        self.0.next().await
    }

    /// How many messages are queued.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no message is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many notifications were dropped, in all, because the queue was full (its client
    /// read too little): each overflow is also logged once.
    pub fn dropped(&self) -> u64 {
        self.0.dropped()
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
        assert_eq!(rx.dropped(), 10);
    }

    #[test]
    fn responses_are_never_dropped_and_keep_their_place() {
        let (tx, rx) = bounded::<String>("a test queue");
        tx.push("note 0".to_owned(), Class::Note(None));
        tx.reply("reply".to_owned());
        for i in 1..=OUTBOX_CAPACITY + 5 {
            tx.push(format!("note {i}"), Class::Note(None));
        }
        assert_eq!(rx.len(), OUTBOX_CAPACITY + 1);
        assert_eq!(rx.dropped(), 6);
        assert_eq!(rx.take().unwrap(), "reply");
        assert_eq!(rx.take().unwrap(), "note 6");
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
