//! The requests a session is answering, each with its cancellation token: what
//! `notifications/cancelled`, [`reset`](ServerSession::reset) and
//! [`shutdown`](ServerSession::shutdown) stop.
//!
//! Every request kind enters the table for as long as it runs. Each entry has a generation
//! of its own, and a request leaves only its own entry: a client that reuses the id of a
//! request still running does not make the first one uncancellable when the second ends.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::MutexGuard;

use tokio_util::sync::CancellationToken;

use super::ServerSession;
use crate::protocol::RequestId;
use crate::registry::CallOptions;
use crate::sync::MutexExt;

/// The requests in flight: the first in a slot of its own, the others by id. A session
/// mostly has one request at a time: entering and leaving the slot hashes nothing (issue #41:
/// about 0.4k instructions a call), and an idle session keeps no allocation for the table
/// (about 200 bytes); a client that keeps several in flight finds the rest hashed, so no scan
/// grows with it.
#[derive(Default)]
pub(super) struct InFlightTable {
    /// The last generation handed out.
    last: u64,
    /// One request, kept in place: its id, generation and token.
    one: Option<(RequestId, u64, CancellationToken)>,
    entries: HashMap<RequestId, Entries>,
}

/// The requests running under one id: one, unless the client reused it.
enum Entries {
    One(u64, CancellationToken),
    Many(Vec<(u64, CancellationToken)>),
}

impl Entries {
    fn cancel(self) {
        match self {
            Entries::One(_, token) => token.cancel(),
            Entries::Many(tokens) => tokens.iter().for_each(|(_, t)| t.cancel()),
        }
    }

    /// `earlier` entries (if any) and generation `generation`'s `token`.
    fn joined(earlier: Option<Entries>, generation: u64, token: CancellationToken) -> Entries {
        match earlier {
            None => Entries::One(generation, token),
            Some(entries) => entries.with(generation, token),
        }
    }

    /// These entries and generation `generation`'s `token`.
    fn with(self, generation: u64, token: CancellationToken) -> Entries {
        let mut tokens = match self {
            Entries::One(g, t) => vec![(g, t)],
            Entries::Many(tokens) => tokens,
        };
        tokens.push((generation, token));
        Entries::Many(tokens)
    }

    /// These entries without generation `generation`: `None` when none is left.
    fn without(self, generation: u64) -> Option<Entries> {
        match self {
            Entries::One(g, _) if g == generation => None,
            one @ Entries::One(..) => Some(one),
            Entries::Many(mut tokens) => {
                tokens.retain(|(g, _)| *g != generation);
                match tokens.len() {
                    0 => None,
                    1 => tokens.pop().map(|(g, t)| Entries::One(g, t)),
                    _ => Some(Entries::Many(tokens)),
                }
            }
        }
    }
}

impl InFlightTable {
    /// Enters request `id` with `token`: its generation, to [`remove`](Self::remove) it by.
    fn insert(&mut self, id: &RequestId, token: CancellationToken) -> u64 {
        self.last += 1;
        let generation = self.last;
        if self.one.is_none() {
            self.one = Some((id.clone(), generation, token));
            return generation;
        }
        // One lookup (the id hashed once); the id is cloned either way, as a new key.
        match self.entries.entry(id.clone()) {
            Entry::Vacant(vacant) => {
                vacant.insert(Entries::One(generation, token));
            }
            Entry::Occupied(mut occupied) => {
                // Rare (a client error): the id is in use by a request still running.
                let entries = occupied.get_mut();
                let earlier = std::mem::replace(entries, Entries::Many(Vec::new()));
                *entries = earlier.with(generation, token);
            }
        }
        generation
    }

    /// The token of request `id` of generation `generation`, while it is in the table
    /// (`None` once cancelled).
    pub(super) fn token(&self, id: &RequestId, generation: u64) -> Option<&CancellationToken> {
        if let Some((i, g, token)) = &self.one
            && *g == generation
            && i == id
        {
            return Some(token);
        }
        match self.entries.get(id)? {
            Entries::One(g, token) => (*g == generation).then_some(token),
            Entries::Many(tokens) => tokens
                .iter()
                .find_map(|(g, token)| (*g == generation).then_some(token)),
        }
    }

    /// Removes the entry of request `id` of generation `generation`, if still there (a
    /// cancellation removed it already; a later request with the same id keeps its own).
    fn remove(&mut self, id: &RequestId, generation: u64) {
        if self.one.as_ref().is_some_and(|(_, g, _)| *g == generation) {
            self.one = None;
            return;
        }
        let Some((id, entries)) = self.entries.remove_entry(id) else {
            return;
        };
        if let Some(others) = entries.without(generation) {
            self.entries.insert(id, others);
        }
    }

    /// Takes every request running under `id` out of the table.
    fn take(&mut self, id: &RequestId) -> Option<Entries> {
        let hashed = self.entries.remove(id);
        match self.one.take_if(|(i, _, _)| i == id) {
            // A reused id can be both in place and hashed: both are taken.
            Some((_, generation, token)) => Some(Entries::joined(hashed, generation, token)),
            None => hashed,
        }
    }
}

impl ServerSession {
    pub(super) fn in_flight(&self) -> MutexGuard<'_, InFlightTable> {
        self.inner.in_flight.lock_unpoisoned()
    }

    /// Cancels the in-flight request `id`, as `notifications/cancelled` does (every request
    /// running under that id, should the client have reused it). Returns whether such a
    /// request was running.
    pub fn cancel(&self, id: &RequestId) -> bool {
        // Taken under the lock, cancelled after it.
        let entries = self.in_flight().take(id);
        entries.map(Entries::cancel).is_some()
    }

    /// Cancels every request in flight.
    pub(super) fn cancel_all(&self) {
        let (one, entries) = {
            let mut table = self.in_flight();
            (table.one.take(), std::mem::take(&mut table.entries))
        };
        if let Some((_, _, token)) = one {
            token.cancel();
        }
        entries.into_values().for_each(Entries::cancel);
    }

    /// Enters request `id` in the in-flight table with a cancellation token (a child of the
    /// caller's own, so an HTTP stream closing still cancels it), set in `options`, until the
    /// returned generation is removed. With `own`, the caller's token is this request's
    /// alone (a Streamable HTTP POST's): it is entered as it is, cancelling it through the
    /// table cancels nothing else, and no child is made (issue #41).
    fn enter(&self, id: &RequestId, options: &mut CallOptions, own: bool) -> u64 {
        if own && let Some(token) = &options.cancellation {
            return self.in_flight().insert(id, token.clone());
        }
        let token = options
            .cancellation
            .as_ref()
            .map_or_else(CancellationToken::new, CancellationToken::child_token);
        let generation = self.in_flight().insert(id, token.clone());
        *options = std::mem::take(options).cancellation(token);
        generation
    }

    /// [`enter`](Self::enter), until the guard drops.
    pub(super) fn track(&self, id: &RequestId, options: &mut CallOptions, own: bool) -> InFlight {
        let generation = self.enter(id, options, own);
        InFlight {
            session: self.clone(),
            id: id.clone(),
            generation,
        }
    }

    /// Enters request `id` in the in-flight table now, before it is answered (a transport
    /// that answers it in a task of its own calls this where it reads the request, so that a
    /// `notifications/cancelled` read right behind it finds it). `options` get its
    /// cancellation token; answer it with [`Registered::answer_as_text`], which leaves the
    /// table when dropped.
    #[cfg(feature = "stdio")]
    pub(crate) fn register(&self, id: &RequestId, options: &mut CallOptions) -> Registered {
        let generation = self.enter(id, options, false);
        Registered {
            session: self.clone(),
            id: id.clone(),
            generation,
        }
    }
}

/// A request in the in-flight table; leaves it when dropped (answered, or abandoned by its
/// caller).
pub(super) struct InFlight {
    session: ServerSession,
    pub(super) id: RequestId,
    pub(super) generation: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.session.in_flight().remove(&self.id, self.generation);
    }
}

/// A request entered in the in-flight table where it was read
/// ([`ServerSession::register`]), with its session, until it is answered; leaves the table
/// when dropped, whether or not it was answered.
#[cfg(feature = "stdio")]
pub(crate) struct Registered {
    pub(super) session: ServerSession,
    pub(super) id: RequestId,
    pub(super) generation: u64,
}

#[cfg(feature = "stdio")]
impl Drop for Registered {
    fn drop(&mut self) {
        self.session.in_flight().remove(&self.id, self.generation);
    }
}
