//! Resumable SSE streams of legacy sessions (2025-11-25 "Resumability and Redelivery"):
//! every event of a session's POST and GET streams carries an id, `{stream}-{seq}`, and is
//! kept, before it is sent, in a bounded buffer per stream ([`HttpConfig::resume_buffer`]
//! events): in memory, or in the session store when it keeps events (Redis), so that a
//! stream resumes on another replica. A `GET` with `Last-Event-ID` replays what followed
//! that event on the stream it names, then goes on live.
//!
//! [`HttpConfig::resume_buffer`]: super::HttpConfig::resume_buffer

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures_util::stream;
use tokio::sync::mpsc;

use super::drain::{DRAIN_RETRY, Shutdown};
use super::error_response;
use super::kept::MemoryStreams;
use super::sessions::AppState;
use super::shared::{KeptEvent, KeptEvents, SessionStore, SessionStoreError};
use crate::protocol::ErrorCode;

/// How often a resumed stream whose events another replica writes looks for new ones.
const POLL: Duration = Duration::from_millis(100);
/// How many events wait between a stream's writer and its connection.
const IN_FLIGHT: usize = 16;
/// The length of a stream's name: its kind (`g`, `p`) and 16 hex digits.
const NAME_LEN: usize = 17;

/// A new stream's name: `kind` (`g` for a `GET` stream, `p` for a POST's) and 16 random hex
/// digits, so that names (and the event ids made of them) never repeat within a session,
/// whichever replica mints them.
pub(super) fn new_stream(kind: char) -> String {
    let random = uuid::Uuid::new_v4().simple().to_string();
    format!("{kind}{}", &random[..NAME_LEN - 1])
}

/// The id of event `seq` of `stream`.
fn event_id(stream: &str, seq: u64) -> String {
    format!("{stream}-{seq}")
}

/// The stream and sequence number a `Last-Event-ID` names; `None` when it is none of ours.
pub(super) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, seq) = id.split_once('-')?;
    let named = stream.len() == NAME_LEN
        && matches!(stream.as_bytes()[0], b'g' | b'p')
        && stream[1..].bytes().all(|b| b.is_ascii_hexdigit());
    let seq = seq.parse().ok().filter(|_| named)?;
    Some((stream, seq))
}

/// Where one session's stream events are kept: its memory, or the session store.
#[derive(Clone)]
pub(super) struct StreamLog {
    session: Arc<str>,
    memory: Arc<MemoryStreams>,
    store: Option<Arc<dyn SessionStore>>,
    cap: usize,
    ttl: Duration,
}

impl StreamLog {
    /// The log of session `session` (whose memory is `memory`) on `state`; `None` when
    /// resumption is off ([`HttpConfig::resume_buffer`](super::HttpConfig::resume_buffer) 0).
    pub(super) fn of(state: &AppState, session: &str, memory: &Arc<MemoryStreams>) -> Option<Self> {
        let cap = state.config.resume_buffer;
        (cap > 0).then(|| StreamLog {
            session: Arc::from(session),
            memory: memory.clone(),
            store: state
                .config
                .session_store
                .clone()
                .filter(|store| store.keeps_events()),
            cap,
            ttl: state.config.session_idle_timeout,
        })
    }

    /// `data` appended to `stream`, as the SSE event to send (with its id; without one when
    /// the store failed, which is logged).
    pub(super) async fn event(&self, stream: &str, data: String, last: bool) -> Event {
        let seq = match &self.store {
            None => Ok(self.memory.append(stream, &data, last, self.cap)),
            Some(store) => {
                let event = (data.as_str(), last);
                store
                    .append_event(&self.session, stream, event, self.cap, self.ttl)
                    .await
            }
        };
        let event = Event::default().event("message");
        match seq {
            Ok(seq) => event.id(event_id(stream, seq)).data(data),
            Err(e) => {
                tracing::warn!(session = %self.session, error = %e, "HTTP: an SSE event was not kept for resumption (sent without an id)");
                event.data(data)
            }
        }
    }

    async fn read(&self, stream: &str) -> Result<Option<KeptEvents>, SessionStoreError> {
        match &self.store {
            None => Ok(self.memory.read(stream)),
            Some(store) => store.read_events(&self.session, stream).await,
        }
    }

    /// Resolves when `stream` may have new events: at once when kept in memory and
    /// written to, after [`POLL`] at the latest.
    async fn wait(&self) {
        let notified = self.memory.changed.notified();
        let _ = tokio::time::timeout(POLL, notified).await;
    }

    /// The events of `stream` after event `seq` (named by `id`, the `Last-Event-ID`), or the
    /// refusal: `410` when they are no longer all kept (or the stream is not this
    /// session's), `400` for an event the stream never sent, `503` when the store fails.
    pub(super) async fn after(
        &self,
        stream: &str,
        seq: u64,
        id: &str,
    ) -> Result<Vec<KeptEvent>, Response> {
        let kept = self.read(stream).await.map_err(|e| {
            error_response(
                StatusCode::SERVICE_UNAVAILABLE,
                None,
                ErrorCode::INTERNAL_ERROR,
                format!("the stream's events could not be read from the session store ({e}); resume again"),
            )
        })?;
        let Some(kept) = kept else {
            return Err(gone(format!(
                "Last-Event-ID {id:?} names a stream this session does not keep (ended longer ago than the session's idle limit, or not this session's): its events are lost; open a GET stream without Last-Event-ID"
            )));
        };
        if seq > kept.latest {
            return Err(error_response(
                StatusCode::BAD_REQUEST,
                None,
                ErrorCode::INVALID_REQUEST,
                format!("Last-Event-ID {id:?} names an event its stream never sent"),
            ));
        }
        let first = kept.events.first().map_or(kept.latest + 1, |e| e.seq);
        if first > seq + 1 {
            return Err(gone(format!(
                "Last-Event-ID {id:?} is older than the events kept of its stream (the last {} of each stream, HttpConfig::resume_buffer): events after it are lost; open a GET stream without Last-Event-ID",
                self.cap
            )));
        }
        Ok(kept.events.into_iter().filter(|e| e.seq > seq).collect())
    }
}

/// `410 Gone`: the events a `Last-Event-ID` asks for are no longer kept.
fn gone(message: String) -> Response {
    error_response(StatusCode::GONE, None, ErrorCode::INVALID_REQUEST, message)
}

/// A kept event, to send again.
fn replayed(stream: &str, event: KeptEvent) -> Event {
    Event::default()
        .id(event_id(stream, event.seq))
        .event("message")
        .data(event.data)
}

/// The SSE hint that ends a stream when its server drains: reconnect after [`DRAIN_RETRY`].
pub(super) fn drain_hint() -> Event {
    Event::default().retry(DRAIN_RETRY).comment("draining")
}

/// An SSE response of what `rx` receives (a writer task holds the sender).
pub(super) fn sse_of(mut rx: mpsc::Receiver<Event>) -> Response {
    let events = stream::poll_fn(move |cx| rx.poll_recv(cx).map(|e| e.map(Ok::<_, Infallible>)));
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// A channel to an SSE response.
pub(super) fn channel() -> (mpsc::Sender<Event>, mpsc::Receiver<Event>) {
    mpsc::channel(IN_FLIGHT)
}

/// A POST stream resumed (a `GET` with the `Last-Event-ID` of one of its events): `replay`
/// (what followed that event), then what its call still sends, wherever it runs, up to
/// its reply. It ends with a retry hint when this server drains, and when the stream's
/// events expire.
pub(super) fn resume_post(
    log: StreamLog,
    stream: String,
    seq: u64,
    replay: Vec<KeptEvent>,
    shutdown: Shutdown,
) -> Response {
    let (tx, rx) = channel();
    tokio::spawn(async move {
        let mut after = seq;
        let mut batch = replay;
        loop {
            for event in batch {
                after = event.seq;
                let last = event.last;
                if tx.send(replayed(&stream, event)).await.is_err() || last {
                    return;
                }
            }
            tokio::select! {
                () = tx.closed() => return,
                () = shutdown.draining() => {
                    let _ = tx.send(drain_hint()).await;
                    return;
                }
                () = log.wait() => {}
            }
            batch = match log.read(&stream).await {
                // Its reply was sent already: nothing more comes.
                Ok(Some(kept)) if kept.events.iter().any(|e| e.last && e.seq <= after) => return,
                Ok(Some(kept)) => kept.events.into_iter().filter(|e| e.seq > after).collect(),
                // Expired: the client resumes again and is told.
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "HTTP: a resumed stream could not read its events");
                    Vec::new()
                }
            };
            if batch.first().is_some_and(|e| e.seq > after + 1) {
                // Overrun while waiting: the client resumes again and is told.
                return;
            }
        }
    });
    sse_of(rx)
}

/// Events for a stream, `replay` first: an iterator of SSE events kept of `stream`.
pub(super) fn replay_events(
    stream: &str,
    replay: Vec<KeptEvent>,
) -> impl Iterator<Item = Event> + '_ {
    replay.into_iter().map(move |e| replayed(stream, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_stream_and_forged_ones_are_refused() {
        let stream = new_stream('p');
        assert_eq!(stream.len(), NAME_LEN);
        let id = event_id(&stream, 7);
        assert_eq!(parse_event_id(&id), Some((stream.as_str(), 7)));
        for forged in [
            "",
            "7",
            "g-1",
            "x0123456789abcdef-1",
            "g0123456789abcdeg-1",
            "g0123456789abcdef-",
            "g0123456789abcdef--1",
            "g0123456789abcdef0-1",
            "g0123456789abcdef-1:x",
        ] {
            assert_eq!(parse_event_id(forged), None, "{forged}");
        }
    }
}
