//! [`ReplayTransport`]: a server played back from a cassette.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::normalize::Normalizer;
use super::{
    CASSETTE_RECORD_ENV, CassetteFile, ClientMessage, ServerMessage, match_key, recorded_params,
};
use crate::client::transport::{Inbound, Outbound, OutboundKind, Transport, TransportError};
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// A transport that answers from a [`CassetteFile`] instead of a server: each request gets
/// the replies recorded for it (matched on method and normalized params, see
/// [`Cassette`](super::Cassette)), with the request's own id; a request the cassette does not hold
/// fails at once with a [`TransportError::Other`] that says how to re-record.
#[derive(Debug)]
pub struct ReplayTransport {
    path: PathBuf,
    file: CassetteFile,
    incoming: mpsc::UnboundedSender<Inbound>,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    normalizer: Normalizer,
    /// Which interactions have been replayed.
    played: Vec<bool>,
    /// Replays paused at a server request, by its id: the client's request id and the
    /// interaction and message to go on from once the client answers.
    paused: HashMap<String, (Value, usize, usize)>,
}

impl ReplayTransport {
    /// A transport replaying `file` (read from `path`, which errors name), delivering to
    /// `incoming`.
    pub fn new(
        file: CassetteFile,
        path: PathBuf,
        incoming: mpsc::UnboundedSender<Inbound>,
    ) -> Self {
        let played = vec![false; file.interactions.len()];
        ReplayTransport {
            path,
            file,
            incoming,
            state: Mutex::new(State {
                played,
                ..State::default()
            }),
        }
    }

    /// The interaction answering a message the client sent: the first unplayed one that
    /// matches, else the last one that matches.
    fn find(&self, state: &State, matches: impl Fn(&ClientMessage) -> bool) -> Option<usize> {
        let mut last = None;
        for (index, interaction) in self.file.interactions.iter().enumerate() {
            if matches(&interaction.client) {
                if !state.played[index] {
                    return Some(index);
                }
                last = Some(index);
            }
        }
        last
    }

    /// Sends the server's messages of `interaction` from `from` on, the reply under
    /// `request_id`, until the end or a server request (which pauses the replay until the
    /// client answers it).
    fn play(&self, state: &mut State, request_id: &Value, interaction: usize, from: usize) {
        state.played[interaction] = true;
        let messages = &self.file.interactions[interaction].server;
        for (at, message) in messages.iter().enumerate().skip(from) {
            // The client sees the recorded placeholders: counted, as the recording counted
            // the values they stand for.
            match message {
                ServerMessage::Success(v) | ServerMessage::Failure(v) => {
                    state.normalizer.value(v);
                }
                ServerMessage::Notification { params, .. }
                | ServerMessage::Request { params, .. } => {
                    if let Some(params) = params {
                        state.normalizer.value(params);
                    }
                }
            }
            let wire = match message {
                ServerMessage::Success(result) => {
                    json!({"jsonrpc": "2.0", "id": request_id, "result": result})
                }
                ServerMessage::Failure(error) => {
                    json!({"jsonrpc": "2.0", "id": request_id, "error": error})
                }
                ServerMessage::Notification { method, params } => {
                    with_params(json!({"jsonrpc": "2.0", "method": method}), params)
                }
                ServerMessage::Request { id, method, params } => {
                    let wire = json!({"jsonrpc": "2.0", "id": id, "method": method});
                    state
                        .paused
                        .insert(id.to_string(), (request_id.clone(), interaction, at + 1));
                    let _ = self
                        .incoming
                        .send(Inbound::Message(with_params(wire, params)));
                    return;
                }
            };
            let _ = self.incoming.send(Inbound::Message(wire));
        }
    }

    fn missing(&self, method: &str, params: Option<&Value>) -> TransportError {
        let params = params.map_or_else(|| "no params".to_owned(), Value::to_string);
        TransportError::Other(format!(
            "cassette {} holds no {method} request with {params}: the test asks for something \
             the recording did not; re-record it against the real server by running the test \
             with {CASSETTE_RECORD_ENV}=1",
            self.path.display()
        ))
    }
}

fn with_params(mut wire: Value, params: &Option<Value>) -> Value {
    if let (Some(params), Some(map)) = (params, wire.as_object_mut()) {
        map.insert("params".into(), params.clone());
    }
    wire
}

impl Transport for ReplayTransport {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        let mut state = self.state.lock_unpoisoned();
        let params = message.message.get("params");
        let result = match &message.kind {
            OutboundKind::Request { id, method, .. } => {
                let key = match_key(recorded_params(&mut state.normalizer, params).as_ref());
                let found = self.find(&state, |client| match client {
                    ClientMessage::Request {
                        method: m,
                        params: p,
                    } => m == method && match_key(p.as_ref()) == key,
                    _ => false,
                });
                match found {
                    Some(index) => {
                        self.play(&mut state, &Value::from(id.clone()), index, 0);
                        Ok(())
                    }
                    None => Err(self.missing(method, key.as_ref())),
                }
            }
            OutboundKind::Notification { method } => {
                let found = self.find(&state, |client| {
                    matches!(client, ClientMessage::Notification { method: m, .. } if m == method)
                });
                // A notification has no reply to miss: one not recorded is taken in silently.
                if let Some(index) = found.filter(|&i| !state.played[i]) {
                    self.play(&mut state, &Value::Null, index, 0);
                }
                Ok(())
            }
            _ => {
                let id = message.message.get("id").cloned().unwrap_or(Value::Null);
                if let Some((request_id, interaction, at)) = state.paused.remove(&id.to_string()) {
                    self.play(&mut state, &request_id, interaction, at);
                }
                Ok(())
            }
        };
        Box::pin(std::future::ready(result))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        let _ = self
            .incoming
            .send(Inbound::Closed("the cassette was closed".into()));
        Box::pin(std::future::ready(()))
    }
}
