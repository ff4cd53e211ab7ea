//! The one guarded runner. Every request's user code (a tool, prompt, resource, template or
//! completion function) runs as a [`Guarded`] future: panics caught while the future is made
//! and while it runs, a first poll that needs no timer, then the time limit (counted from the
//! first wait) and the caller's cancellation. In 2026-07-28 without an input handler, a run
//! that waits for input no one can give now is stopped, and its request answered with
//! `input_required`.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::FutureExt as _;
use futures_util::future::CatchUnwind;
use tokio::time::{Timeout, timeout};
use tokio_util::sync::CancellationToken;

use crate::protocol::{ErrorCode, ErrorObject};
use crate::tool::BoxFuture;
use crate::tool::round::Round;

/// What a run is held to.
#[derive(Default)]
pub(crate) struct Guard {
    /// The time limit, counted from the run's first wait.
    pub(crate) limit: Option<Duration>,
    /// The caller's cancellation.
    pub(crate) cancellation: Option<CancellationToken>,
    /// 2026-07-28: an ask without an answer stops the run.
    pub(crate) round: Option<Arc<Round>>,
}

/// How a run ended without its function's output.
#[derive(Debug)]
pub(crate) enum Failure {
    Panicked(String),
    TimedOut(Duration),
    /// The run waited with a time limit but no timer to keep it.
    NoTimer(Duration),
    Cancelled,
    /// Stopped to ask the client for input (2026-07-28): dispatch answers `input_required`.
    InputRequired,
}

/// A request kind's errors for the ways a run can fail: what [`Failure::into_error`] maps
/// every [`Failure`] to, so that every kind (tools, prompts, resources, completions, skills)
/// names the same causes, each by its own error type.
pub(crate) trait RunErrors: Sized {
    /// What the kind runs, for messages ("tool", "prompt", ...).
    const WHAT: &'static str;
    /// The function panicked; `message` is the payload, when it was a string.
    fn panicked(name: String, message: String) -> Self;
    /// The run outlasted `limit`.
    fn timed_out(name: String, limit: Duration) -> Self;
    /// The run waited under `limit` where no timer can keep one.
    fn no_timer(name: String, limit: Duration) -> Self;
    /// The caller cancelled the run.
    fn cancelled(name: String) -> Self;
    /// The run failed for `message`.
    fn failed(name: String, message: String) -> Self;
}

impl Failure {
    /// This failure as `E`, for the run of `name`: the one mapping every kind uses.
    #[cold]
    pub(crate) fn into_error<E: RunErrors>(self, name: String) -> E {
        match self {
            Failure::Panicked(message) => E::panicked(name, message),
            Failure::TimedOut(limit) => E::timed_out(name, limit),
            Failure::NoTimer(limit) => E::no_timer(name, limit),
            Failure::Cancelled => E::cancelled(name),
            Failure::InputRequired => {
                E::failed(name, format!("the {} needs input from the client", E::WHAT))
            }
        }
    }
}

/// For kinds whose errors are JSON-RPC errors (completions, skills): -32603 naming the cause,
/// `name` being what ran ("the completion function", "skill \"x\"").
impl RunErrors for ErrorObject {
    const WHAT: &'static str = "function";
    fn panicked(name: String, message: String) -> Self {
        internal(format!("{name} panicked: {message}"))
    }
    fn timed_out(name: String, limit: Duration) -> Self {
        internal(format!("{name} timed out after {limit:?}"))
    }
    fn no_timer(name: String, limit: Duration) -> Self {
        internal(format!(
            "{name} has a time limit of {limit:?} but waited outside a Tokio runtime with time enabled, where no timer can keep it; run it inside one, or without a timeout"
        ))
    }
    fn cancelled(name: String) -> Self {
        internal(format!("{name} was cancelled"))
    }
    fn failed(name: String, message: String) -> Self {
        internal(format!("{name} failed: {message}"))
    }
}

fn internal(message: String) -> ErrorObject {
    ErrorObject::new(ErrorCode::INTERNAL_ERROR, message)
}

/// One run of user code under its [`Guard`], resolving to the function's output or the
/// [`Failure`] that ended it. Most runs finish on their first poll, made here without a
/// timer or an allocation; a run that waits goes on as a boxed future.
pub(crate) struct Guarded<T>(State<T>);

enum State<T> {
    /// Not polled yet.
    Start(Running<T>),
    /// The first poll was pending.
    Waiting(BoxFuture<'static, Result<T, Failure>>),
    /// Ended before it began, or resolved (`None`): no output is kept here, so the future
    /// is no larger than what it runs.
    Done(Option<Failure>),
}

struct Running<T> {
    fut: CatchUnwind<AssertUnwindSafe<BoxFuture<'static, T>>>,
    guard: Guard,
}

impl<T: Send + 'static> Guarded<T> {
    /// Makes the future with `make` (user code too: argument parsing, a closure's body) and
    /// holds it to `guard`.
    #[inline(always)]
    pub(crate) fn start(guard: Guard, make: impl FnOnce() -> BoxFuture<'static, T>) -> Self {
        match std::panic::catch_unwind(AssertUnwindSafe(make)) {
            Ok(fut) => Guarded(State::Start(Running {
                fut: AssertUnwindSafe(fut).catch_unwind(),
                guard,
            })),
            Err(payload) => Self::ended(Failure::Panicked(panic_message(&*payload))),
        }
    }

    /// A run that ended before it began.
    #[cold]
    pub(crate) fn ended(failure: Failure) -> Self {
        Guarded(State::Done(Some(failure)))
    }
}

// The output is never pinned: it is moved out once ready.
impl<T> Unpin for Guarded<T> {}

impl<T: Send + 'static> Future for Guarded<T> {
    type Output = Result<T, Failure>;

    #[inline]
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut self.get_mut().0;
        loop {
            match std::mem::replace(this, State::Done(None)) {
                State::Start(mut run) => match run.fut.poll_unpin(cx) {
                    Poll::Ready(caught) => return Poll::Ready(caught_output(caught)),
                    Poll::Pending if run.waits_for_input() => {
                        return Poll::Ready(Err(Failure::InputRequired));
                    }
                    // Polled again at once, as `Waiting`: that arms the timer.
                    Poll::Pending => *this = State::Waiting(Box::pin(run.wait())),
                },
                State::Waiting(mut fut) => {
                    let polled = fut.poll_unpin(cx);
                    if polled.is_pending() {
                        *this = State::Waiting(fut);
                    }
                    return polled;
                }
                // A resolved future never resolves again.
                State::Done(failure) => {
                    return failure.map_or(Poll::Pending, |f| Poll::Ready(Err(f)));
                }
            }
        }
    }
}

impl<T: Send + 'static> Running<T> {
    /// Whether the function waits for input no one can give now (2026-07-28).
    fn waits_for_input(&self) -> bool {
        self.guard.round.as_ref().is_some_and(|round| {
            let waits = round.waits_for_input();
            if waits {
                round.stop();
            }
            waits
        })
    }

    /// The rest of a run whose first poll was pending.
    async fn wait(self) -> Result<T, Failure> {
        let Running {
            fut: mut run,
            guard,
        } = self;
        let round = guard.round.clone();
        // The function, stopped when it waits for input it cannot get (an ask made from
        // another task wakes it to see that).
        let mut fut = std::future::poll_fn(move |cx| {
            let Some(round) = &round else {
                return run.poll_unpin(cx).map(Ok);
            };
            round.wake_on_ask(cx.waker());
            match run.poll_unpin(cx) {
                Poll::Pending if round.waits_for_input() => {
                    round.stop();
                    Poll::Ready(Err(Failure::InputRequired))
                }
                polled => polled.map(Ok),
            }
        });
        let fut = &mut fut;
        let limited = async {
            let Some(limit) = guard.limit else {
                return fut.await;
            };
            let Some(limited) = start_timer(limit, fut) else {
                return Err(Failure::NoTimer(limit));
            };
            limited.await.unwrap_or(Err(Failure::TimedOut(limit)))
        };
        let outcome = match &guard.cancellation {
            None => limited.await,
            Some(token) => token
                .run_until_cancelled(limited)
                .await
                .unwrap_or(Err(Failure::Cancelled)),
        };
        outcome.and_then(caught_output)
    }
}

/// `fut` limited to `limit`, or `None` where no timer can keep the limit: outside a Tokio
/// runtime, or in one built without its time driver (`enable_time`).
pub(crate) fn start_timer<F: Future>(limit: Duration, fut: F) -> Option<Timeout<F>> {
    tokio::runtime::Handle::try_current().ok()?;
    // Tokio has no query for the time driver: without it, creating the timer panics.
    std::panic::catch_unwind(AssertUnwindSafe(|| timeout(limit, fut))).ok()
}

/// The function's output, its panic caught.
fn caught_output<T>(caught: std::thread::Result<T>) -> Result<T, Failure> {
    caught.map_err(|payload| Failure::Panicked(panic_message(&*payload)))
}

/// A panic's message, when its payload is a string.
pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string panic payload".to_owned())
}
