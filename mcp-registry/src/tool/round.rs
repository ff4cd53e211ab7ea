//! One run of a request in a 2026-07-28 multi round-trip request (MRTR).
//!
//! 2026-07-28 has no server→client requests. A tool (or prompt) that asks for input while
//! nothing can answer it is stopped where it waits, and the request ends with an
//! `input_required` result listing what it asked, keyed, and a signed `requestState` with the
//! answers collected so far. The client retries the same request with `inputResponses`; the
//! body runs again from the top and each ask is answered by its key, from the state first
//! (earlier rounds), then from the responses. Keys are given in order of asking
//! (`elicitation-0`, `sampling-1`, …) unless the body names one
//! ([`ToolContext::input_key`](crate::ToolContext::input_key)), so a body must ask the same
//! questions in the same order on each run.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::Waker;
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::KeySet;
use super::input::{ClientCapability, InputError};
use super::request_state::{StatePayload, StateScope, arguments_digest, caller_digest};
use crate::protocol::{
    ClientCapabilities, ErrorCode, ErrorObject, InputRequest, InputRequiredResult,
};
use crate::sync::MutexExt;

/// The arguments a state is bound to: their digest, or the text they came in (digested only
/// when a state is issued: most calls never ask).
#[derive(Debug)]
pub(crate) enum BoundArguments {
    Digest(String),
    Text(String),
}

/// What a run needs to issue its state.
#[derive(Debug)]
pub(crate) struct RoundSeal {
    /// The registry's request-state keys when the request came in.
    pub(crate) key: Arc<KeySet>,
    pub(crate) method: &'static str,
    pub(crate) server: Arc<str>,
    pub(crate) name: Arc<str>,
    pub(crate) arguments: BoundArguments,
    /// The owner key of the caller the request came from (`None`: anonymous).
    pub(crate) caller: Option<String>,
}

impl RoundSeal {
    fn scope(&self) -> StateScope {
        let args = match &self.arguments {
            BoundArguments::Digest(d) => d.clone(),
            BoundArguments::Text(text) => {
                arguments_digest(&serde_json::from_str(text).unwrap_or_default())
            }
        };
        StateScope {
            method: self.method,
            server: self.server.to_string(),
            name: self.name.to_string(),
            args,
            who: self.caller.as_deref().map(caller_digest),
        }
    }

    /// The answers `state` carries, when this key signed it for this request within `ttl`.
    pub(crate) fn open(
        &self,
        state: &str,
        ttl: Duration,
    ) -> Result<Map<String, Value>, ErrorObject> {
        let payload = self.key.verify(state)?;
        payload.check(&self.scope(), ttl)?;
        Ok(payload.answers)
    }
}

/// Where the asks of a run that went on as a task go (the task's input requests): an ask's
/// key and request, to the client's answer.
pub(crate) type Escalation = Arc<
    dyn Fn(String, InputRequest) -> super::BoxFuture<'static, Result<Value, InputError>>
        + Send
        + Sync,
>;

/// The asks and answers of one run, shared by the request's context and the call that runs it.
pub(crate) struct Round {
    /// Once the run goes on as a task: where asks without an answer go, instead of stopping
    /// the run.
    escalation: OnceLock<Escalation>,
    /// Answers by key: the state's, then the retry's `inputResponses` for other keys.
    answers: Map<String, Value>,
    /// What the request's `_meta` says its client answers.
    capabilities: ClientCapabilities,
    seal: RoundSeal,
    run: Mutex<Run>,
}

#[derive(Default)]
struct Run {
    /// Asks made so far (the next one's position).
    asks: usize,
    keys: HashSet<String>,
    /// Asks without an answer, in order.
    unanswered: Vec<(String, InputRequest)>,
    /// Answers used, carried into the next state.
    used: Map<String, Value>,
    /// An answer that is not a result of its request: the retry is refused with this.
    invalid: Option<ErrorObject>,
    /// Whether the run was stopped for input.
    stopped: bool,
    /// Wakes the call when an ask from another task leaves it waiting for input.
    waker: Option<Waker>,
}

impl std::fmt::Debug for Round {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Round")
            .field("answers", &self.answers.len())
            .finish_non_exhaustive()
    }
}

impl Round {
    pub(crate) fn new(
        seal: RoundSeal,
        capabilities: ClientCapabilities,
        answers: Map<String, Value>,
    ) -> Self {
        Round {
            escalation: OnceLock::new(),
            answers,
            capabilities,
            seal,
            run: Mutex::new(Run::default()),
        }
    }

    /// From now on, asks without an answer go to `escalation` (the run went on as a task).
    pub(crate) fn escalate(&self, escalation: Escalation) {
        let _ = self.escalation.set(escalation);
    }

    /// Asks `capability`'s request with `params` under `key` (or the next default key): the
    /// answer when the client gave one, [`InputError::NotSupported`] when its request did
    /// not declare the capability, and otherwise never (the run stops for input).
    pub(crate) async fn ask<R: DeserializeOwned>(
        &self,
        key: Option<&str>,
        capability: ClientCapability,
        params: Map<String, Value>,
    ) -> Result<R, InputError> {
        let method = capability.method();
        let mut escalated = None;
        {
            let mut run = self.run.lock_unpoisoned();
            let index = run.asks;
            run.asks += 1;
            let mut key = match key {
                Some(key) => key.to_owned(),
                None => format!("{}-{index}", capability.name()),
            };
            while run.keys.contains(&key) {
                key = format!("{key}-{index}");
            }
            run.keys.insert(key.clone());
            if !capability.declared_in(&self.capabilities) {
                return Err(InputError::NotSupported {
                    capability: capability.name(),
                    method,
                });
            }
            match self.answers.get(&key) {
                Some(answer) => match R::deserialize(answer) {
                    Ok(answer_read) => {
                        run.used.insert(key, answer.clone());
                        return Ok(answer_read);
                    }
                    Err(e) => {
                        run.invalid.get_or_insert_with(|| {
                            ErrorObject::new(
                                ErrorCode::INVALID_PARAMS,
                                format!("`inputResponses.{key}` is not a result of {method}: {e}"),
                            )
                        });
                    }
                },
                None => {
                    let request = InputRequest {
                        method: method.to_owned(),
                        params,
                    };
                    match self.escalation.get() {
                        Some(escalation) => escalated = Some(escalation(key, request)),
                        None => run.unanswered.push((key, request)),
                    }
                }
            }
            if escalated.is_none()
                && let Some(waker) = run.waker.take()
            {
                waker.wake();
            }
        }
        match escalated {
            Some(asked) => read_answer(method, asked.await?),
            None => std::future::pending().await,
        }
    }

    /// Whether the run waits for input it cannot get: it is to be stopped.
    pub(crate) fn waits_for_input(&self) -> bool {
        let run = self.run.lock_unpoisoned();
        !run.unanswered.is_empty() || run.invalid.is_some()
    }

    /// Keeps `waker` to wake when an ask leaves the run waiting for input.
    pub(crate) fn wake_on_ask(&self, waker: &Waker) {
        let mut run = self.run.lock_unpoisoned();
        if !run.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            run.waker = Some(waker.clone());
        }
    }

    /// Marks the run stopped for input (the call ends without the body's result).
    pub(crate) fn stop(&self) {
        self.run.lock_unpoisoned().stopped = true;
    }

    /// The answer to a run that was stopped for input: `input_required` with the unanswered
    /// asks and a state carrying the answers used, or the error refusing an invalid answer.
    /// `None` for a run that was not stopped.
    pub(crate) fn input_required(&self) -> Option<Result<InputRequiredResult, ErrorObject>> {
        let run = self.run.lock_unpoisoned();
        if !run.stopped {
            return None;
        }
        if let Some(error) = &run.invalid {
            return Some(Err(error.clone()));
        }
        let payload = StatePayload::new(&self.seal.scope(), run.used.clone());
        let requests: BTreeMap<String, InputRequest> = run.unanswered.iter().cloned().collect();
        Some(Ok(InputRequiredResult {
            input_requests: Some(requests),
            request_state: Some(self.seal.key.sign(&payload)),
        }))
    }
}

/// An answer the client gave (to a round's ask or a task's input request), read as its request's
/// result.
pub(crate) fn read_answer<R: DeserializeOwned>(
    method: &'static str,
    answer: Value,
) -> Result<R, InputError> {
    R::deserialize(answer).map_err(|e| InputError::InvalidAnswer {
        method,
        message: e.to_string(),
    })
}
