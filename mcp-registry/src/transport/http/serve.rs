//! The one-call server: an accept loop over hyper's HTTP/1 connections that holds a slow,
//! silent or idle peer to the limits of [`HttpConfig`], and caps the connections it serves.
//!
//! hyper's own `header_read_timeout` starts when a connection waits for a request head, so it
//! cannot tell "idle between requests" from "half a head sent"; a small watch per connection
//! does: `Idle` until the first byte of a request, `Head` until the router is called, `Busy`
//! until the response has been written (SSE streams stay `Busy`). The body's limit is the
//! router's (it holds for routers mounted elsewhere too).
//!
//! A request moves the phase without waking anyone: the connection's one timer is armed no
//! later than `step` (the shorter of the two limits) from when it was last armed, and any
//! deadline a phase change sets is at least `step` away, so no deadline can come before the
//! timer. It fires once per `step` on a connection that stays open, not twice per request.

use std::convert::Infallible;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::Method;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio::time::{Instant, Sleep};
use tower_service::Service as _;

use super::post::handle_post;
use super::sessions::AppState;
use super::{HttpConfig, Shutdown};
use crate::transport::stall::Stalled;

/// Where a connection is between requests, and since when.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Waiting for the first byte of a request (just opened, or its last response written).
    Idle(Instant),
    /// A request's head has started arriving but is not complete.
    Head(Instant),
    /// This many requests are being answered (their responses not yet written).
    Busy(usize),
}

/// One connection's phase, shared by its reader, its service and its watchdog (which reads
/// it when its timer fires: a phase change wakes nobody, see the module's notes).
///
/// All three run in the connection's own task (the response body too: hyper polls and drops
/// it there), so the phase moves by a plain load and store, with no lock and no atomic
/// read-modify-write on a request's path (issue #41).
struct Watch {
    /// The phase, [`Phase::encode`]d against `base`.
    phase: AtomicU64,
    base: Instant,
}

impl Watch {
    fn new() -> Arc<Watch> {
        let base = Instant::now();
        Arc::new(Watch {
            phase: AtomicU64::new(Phase::Idle(base).encode(base)),
            base,
        })
    }

    fn update(&self, f: impl FnOnce(Phase) -> Phase) {
        let next = f(self.phase()).encode(self.base);
        self.phase.store(next, Ordering::Relaxed);
    }

    fn phase(&self) -> Phase {
        Phase::decode(self.phase.load(Ordering::Relaxed), self.base)
    }

    /// When the connection is to be closed if its phase does not move, and why.
    fn deadline(&self, limits: &Limits) -> Option<(Instant, &'static str)> {
        match self.phase() {
            Phase::Idle(since) => Some((since + limits.idle, "idle")),
            Phase::Head(since) => Some((since + limits.header_read, "request head not complete")),
            Phase::Busy(_) => None,
        }
    }
}

impl Phase {
    const TAG: u32 = 62;
    const VALUE: u64 = (1 << Phase::TAG) - 1;

    /// The phase as one word: its kind in the top two bits, the rest its count or its
    /// instant (nanoseconds after `base`: 146 years fit).
    fn encode(self, base: Instant) -> u64 {
        let nanos = |at: Instant| {
            u64::try_from(at.saturating_duration_since(base).as_nanos()).unwrap_or(u64::MAX)
                & Phase::VALUE
        };
        match self {
            Phase::Idle(at) => nanos(at),
            Phase::Head(at) => 1 << Phase::TAG | nanos(at),
            Phase::Busy(n) => 2 << Phase::TAG | (n as u64 & Phase::VALUE),
        }
    }

    fn decode(word: u64, base: Instant) -> Phase {
        let value = word & Phase::VALUE;
        let at = || base + Duration::from_nanos(value);
        match word >> Phase::TAG {
            0 => Phase::Idle(at()),
            1 => Phase::Head(at()),
            _ => Phase::Busy(usize::try_from(value).unwrap_or(usize::MAX)),
        }
    }
}

/// What a connection serves: the router, and the endpoint whose `POST` is called without it
/// (`serve`'s own endpoint: axum's routing, its boxing of the handler's future and its
/// layers cost more than the rest of a call's way to the registry; issue #41).
#[derive(Clone)]
pub(super) struct App {
    pub(super) router: Router,
    /// The endpoint whose `POST` (to its configured path, as the router would route it) is
    /// called directly.
    pub(super) direct: Option<Arc<AppState>>,
}

/// Where one request goes.
enum Route {
    /// The endpoint's `POST`. Its future (2.9 KB) is boxed per request, and the allocator
    /// hands the same warm block back; kept in each connection's in-flight slot instead, 500
    /// connections' slots spread over the cache (CPU per call 1.12x the floor's at 500
    /// clients, against 1.00x boxed).
    Post(Arc<AppState>),
    Router(Router),
}

impl App {
    fn route<B>(&self, request: &hyper::Request<B>) -> Route {
        match &self.direct {
            Some(state)
                if request.method() == Method::POST
                    && request.uri().path() == state.config.path =>
            {
                Route::Post(state.clone())
            }
            _ => Route::Router(self.router.clone()),
        }
    }
}

/// The connection limits of [`HttpConfig`], copied once.
#[derive(Debug, Clone, Copy)]
struct Limits {
    header_read: Duration,
    idle: Duration,
    write: Duration,
    /// [`HttpConfig::drain_delay`]: idle connections close once it has passed.
    drain_delay: Duration,
}

/// A request being answered: the connection is `Busy` until its response body is dropped
/// (written whole, or abandoned).
struct Answering(Arc<Watch>);

impl Answering {
    fn start(watch: &Arc<Watch>) -> Answering {
        watch.update(|phase| match phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            Phase::Idle(_) | Phase::Head(_) => Phase::Busy(1),
        });
        Answering(watch.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.update(|phase| match phase {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        });
    }
}

pin_project_lite::pin_project! {
    /// A response body that keeps its request [`Answering`] until it is dropped.
    struct Tracked {
        #[pin]
        body: Body,
        answering: Answering,
    }
}

impl hyper::body::Body for Tracked {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

pin_project_lite::pin_project! {
    /// A TCP stream that moves its connection from `Idle` to `Head` on a request's first byte,
    /// and fails a write blocked for `HttpConfig::write_timeout` (a client that reads nothing
    /// of its responses or streams is disconnected).
    struct Watched {
        #[pin]
        stream: Stalled<TcpStream>,
        watch: Arc<Watch>,
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        let read = this.stream.poll_read(cx, buf);
        if buf.filled().len() > before {
            this.watch.update(|phase| match phase {
                Phase::Idle(_) => Phase::Head(Instant::now()),
                other => other,
            });
        }
        read
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.project().stream.poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().stream.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().stream.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.project().stream.poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// The shortest interval between two checks of a connection's deadlines (a limit of zero is
/// enforced this late at most).
const MIN_STEP: Duration = Duration::from_millis(1);

/// How long, past [`HttpConfig::drain_timeout`], a drained server waits for its
/// connections to write their last answers (the calls cut off by the bound) and close.
const DRAIN_GRACE: Duration = Duration::from_secs(5);

/// Serves `app` on `listener` under `config`'s connection limits until `config`'s
/// [`Shutdown`](super::Shutdown) is triggered and [`HttpConfig::drain_delay`] has passed,
/// then drains: stops accepting, hands over
/// ([`Shutdown::hand_over`]: legacy sessions saved, tasks released), and waits for the
/// connections to close (at most [`HttpConfig::drain_timeout`] and [`DRAIN_GRACE`]). Accepting failures are logged and
/// retried.
pub(super) async fn accept_loop(listener: TcpListener, app: App, config: &HttpConfig) {
    let slots = Arc::new(Semaphore::new(config.max_connections));
    let shutdown = config.shutdown.clone();
    // Readiness turns false at the trigger; accepting goes on for the drain delay, while the
    // load balancer takes this replica out.
    tokio::select! {
        () = accept_all(&listener, app, config, &slots) => {}
        () = shutdown.expired(config.drain_delay) => {}
    }
    drop(listener);
    tracing::info!(
        drain_timeout = ?config.drain_timeout,
        "HTTP: draining: no longer accepting; calls in flight may finish"
    );
    let all = u32::try_from(config.max_connections).unwrap_or(u32::MAX);
    let (closed, ()) = tokio::join!(
        tokio::time::timeout(config.drain_timeout + DRAIN_GRACE, slots.acquire_many(all)),
        shutdown.hand_over(),
    );
    match closed {
        Ok(_) => tracing::info!("HTTP: drained: every connection closed"),
        Err(_) => tracing::warn!(
            open = config.max_connections - slots.available_permits(),
            "HTTP: drained with connections still open past HttpConfig::drain_timeout"
        ),
    }
}

/// Accepts connections and serves each, for ever (failures are logged and retried).
async fn accept_all(listener: &TcpListener, app: App, config: &HttpConfig, slots: &Arc<Semaphore>) {
    let limits = Limits {
        header_read: config.header_read_timeout,
        idle: config.idle_timeout,
        write: config.write_timeout,
        drain_delay: config.drain_delay,
    };
    let mut warned: Option<Instant> = None;
    loop {
        // Past the cap, connections wait in the listen backlog until one closes.
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                // Once a minute at most: a flood must not flood the log too.
                if warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(60)) {
                    warned = Some(Instant::now());
                    tracing::warn!(
                        max_connections = config.max_connections,
                        "HTTP: at the connection cap (raise HttpConfig::max_connections, with the process's file limit, if this is load); new connections wait until one closes"
                    );
                }
                match slots.clone().acquire_owned().await {
                    Ok(permit) => permit,
                    Err(_) => return,
                }
            }
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, mostly: give closing connections a moment.
                tracing::error!(error = %e, "HTTP: accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let app = app.clone();
        let shutdown = config.shutdown.clone();
        tokio::spawn(async move {
            serve_connection(stream, app, limits, shutdown).await;
            tracing::trace!(%peer, "HTTP: connection closed");
            drop(permit);
        });
    }
}

/// Serves one connection until it ends or breaks a limit (then it is dropped: closed).
/// Once `shutdown` is triggered and the drain delay has passed, the connection closes after
/// the response it is writing (an idle one at once).
/// During the delay it stays open: a load balancer keeps its connections to this replica
/// until its health check takes the replica out, and reconnecting on every request (had
/// each response said `Connection: close`) would only load the replica it leaves.
async fn serve_connection(stream: TcpStream, app: App, limits: Limits, shutdown: Shutdown) {
    // Replies are written whole; small SSE events must not wait for an ACK.
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok();
    let watch = Watch::new();
    let io = TokioIo::new(Watched {
        stream: Stalled::new(stream, limits.write, "HTTP"),
        watch: watch.clone(),
    });
    let service = {
        let watch = watch.clone();
        hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let answering = Answering::start(&watch);
            let route = app.route(&request);
            async move {
                let request = request.map(Body::new);
                let response = match route {
                    Route::Post(state) => Box::pin(handle_post(State(state), request)).await,
                    Route::Router(mut router) => router.call(request).await?,
                };
                Ok::<_, Infallible>(response.map(|body| Body::new(Tracked { body, answering })))
            }
        })
    };
    let connection = hyper::server::conn::http1::Builder::new().serve_connection(io, service);
    tokio::pin!(connection);
    let (first, step) = Watchdog::first(&watch, &limits);
    let timer = tokio::time::sleep_until(first);
    tokio::pin!(timer);
    let mut watchdog = Watchdog {
        timer,
        step,
        armed: true,
    };
    let expired = shutdown.expired(limits.drain_delay);
    tokio::pin!(expired);
    // The timer and the shutdown, once polled, wake the task themselves: a request's polls
    // look at them only when they may have fired (issue #41: no lock, no waker registered).
    let (mut closing, mut look_at_shutdown) = (false, true);
    loop {
        let event = std::future::poll_fn(|cx| {
            // The connection first: the other two are rare.
            if let Poll::Ready(result) = connection.as_mut().poll(cx) {
                return Poll::Ready(Event::Ended(result));
            }
            if !closing && (look_at_shutdown || shutdown.is_draining()) {
                look_at_shutdown = false;
                if expired.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Event::Drain);
                }
            }
            watchdog.poll_fired(cx).map(|()| Event::Timer)
        })
        .await;
        match event {
            Event::Ended(result) => {
                if let Err(e) = result {
                    tracing::debug!(?peer, error = %e, "HTTP: connection ended with an error");
                }
                return;
            }
            Event::Drain => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            Event::Timer => {
                if let Some(why) = watchdog.over_limit(&watch, &limits) {
                    tracing::debug!(
                        ?peer,
                        reason = why,
                        "HTTP: closing a connection over its time limit (HttpConfig::header_read_timeout / idle_timeout)"
                    );
                    return;
                }
            }
        }
    }
}

/// A connection's one timer: armed at most `step` (the shorter of the two limits) ahead, so
/// no deadline a phase change sets can come before it (see the module's notes).
struct Watchdog<'a> {
    timer: Pin<&'a mut Sleep>,
    step: Duration,
    /// Set or reset since it was last polled: polled to register it.
    armed: bool,
}

impl<'a> Watchdog<'a> {
    /// When the timer of a new connection first fires, and its `step`.
    fn first(watch: &Watch, limits: &Limits) -> (Instant, Duration) {
        let step = limits.header_read.min(limits.idle).max(MIN_STEP);
        let at = next_fire(watch.deadline(limits), Instant::now() + step);
        (at, step)
    }

    /// Ready when the timer has fired; looks at it only when it may have.
    fn poll_fired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        if !(self.armed || self.timer.is_elapsed()) {
            return Poll::Pending;
        }
        self.armed = false;
        self.timer.as_mut().poll(cx)
    }

    /// Once the timer fired: the limit the connection is over (it is to be closed), or `None`
    /// with the timer armed again.
    fn over_limit(&mut self, watch: &Watch, limits: &Limits) -> Option<&'static str> {
        let now = Instant::now();
        let deadline = watch.deadline(limits);
        if let Some((at, why)) = deadline
            && at <= now
        {
            return Some(why);
        }
        self.timer
            .as_mut()
            .reset(next_fire(deadline, now + self.step));
        self.armed = true;
        None
    }
}

/// When the watchdog next fires: at the phase's `deadline`, or at `step_away` if that comes
/// first (or there is none).
fn next_fire(deadline: Option<(Instant, &'static str)>, step_away: Instant) -> Instant {
    deadline.map_or(step_away, |(at, _)| at.min(step_away))
}

/// What woke a connection's task to act.
enum Event {
    /// The connection ended (with hyper's error, if any).
    Ended(Result<(), hyper::Error>),
    /// The drain delay has passed since the shutdown began.
    Drain,
    /// The watchdog's timer fired.
    Timer,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::time::Instant;

    use super::Phase;

    #[test]
    fn a_phase_survives_its_encoding() {
        let base = Instant::now();
        let later = base + Duration::from_millis(1_234);
        let round = |p: Phase| Phase::decode(p.encode(base), base);
        assert!(matches!(round(Phase::Idle(base)), Phase::Idle(at) if at == base));
        assert!(matches!(round(Phase::Head(later)), Phase::Head(at) if at == later));
        assert!(matches!(round(Phase::Idle(later)), Phase::Idle(at) if at == later));
        assert!(matches!(round(Phase::Busy(1)), Phase::Busy(1)));
        assert!(matches!(round(Phase::Busy(70_000)), Phase::Busy(70_000)));
    }
}
