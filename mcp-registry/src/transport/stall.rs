//! A writer that gives up on a peer that reads nothing: the last step of the outbox's rule
//! (see [`crate::dispatch::OUTBOX_CAPACITY`]). Queues to a client are bounded; a client that
//! never reads would still hold its connection, and what is queued for it, for good. A write
//! that makes no progress for the limit fails with [`io::ErrorKind::TimedOut`] instead, which
//! ends the connection, and the reason is logged.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

pin_project_lite::pin_project! {
    /// `W`, whose writes and flushes fail once they have been blocked for `limit`.
    pub(crate) struct Stalled<W> {
        #[pin]
        inner: W,
        limit: Duration,
        // Armed when a write is blocked, disarmed when one goes through: the fast path
        // registers no timer.
        blocked: Option<Pin<Box<Sleep>>>,
        what: &'static str,
    }
}

impl<W> Stalled<W> {
    /// `inner`, held to `limit`; `what` names the peer in the log.
    pub(crate) fn new(inner: W, limit: Duration, what: &'static str) -> Self {
        Stalled {
            inner,
            limit,
            blocked: None,
            what,
        }
    }
}

/// `polled` (a write or a flush), failing once the peer has read nothing for the limit.
fn held<T>(
    polled: Poll<io::Result<T>>,
    blocked: &mut Option<Pin<Box<Sleep>>>,
    limit: Duration,
    what: &'static str,
    cx: &mut Context<'_>,
) -> Poll<io::Result<T>> {
    if polled.is_ready() {
        *blocked = None;
        return polled;
    }
    let sleep = blocked.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
    ready!(sleep.as_mut().poll(cx));
    tracing::warn!(
        limit = ?limit,
        "{what}: the peer read nothing for {limit:?} while messages waited for it; disconnecting it"
    );
    Poll::Ready(Err(io::Error::new(
        io::ErrorKind::TimedOut,
        format!("{what}: the peer read nothing for {limit:?}"),
    )))
}

impl<W: AsyncWrite> AsyncWrite for Stalled<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let polled = this.inner.poll_write(cx, buf);
        held(polled, this.blocked, *this.limit, this.what, cx)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.project();
        let polled = this.inner.poll_flush(cx);
        held(polled, this.blocked, *this.limit, this.what, cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let polled = this.inner.poll_write_vectored(cx, bufs);
        held(polled, this.blocked, *this.limit, this.what, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
}

impl<W: AsyncRead> AsyncRead for Stalled<W> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}
