//! stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! stdout carries only MCP messages (log with `tracing` to stderr). Requests run concurrently;
//! a call's progress notifications are written before its reply; `notifications/cancelled`
//! stops the named call and suppresses its reply; end of input ends the loop once the calls
//! in flight have answered.

use std::io;
use std::time::Duration;

use bytes::BytesMut;
use futures_util::StreamExt as _;
use serde::de::IgnoredAny;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::task::JoinSet;
use tokio_util::codec::{Decoder, FramedRead};

use crate::dispatch::outbox::{self, Class};
use crate::dispatch::{ServerSession, error_value, parse_error};
use crate::protocol::decode::{Decoded, TextMessage, decode_text};
use crate::protocol::{ErrorCode, ErrorObject, method};
use crate::registry::{CallOptions, Registry};
use crate::tool::NotificationSink;

/// The longest accepted line (one message): 16 MiB. A longer line is answered with -32700 and
/// skipped, never buffered whole.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most requests handled at once; past it, reading pauses until one finishes
/// (backpressure on a client that floods the pipe).
pub const MAX_IN_FLIGHT: usize = 256;

/// The most `subscriptions/listen` streams open at once; past it, a new one is refused
/// (-32603) until one is cancelled.
pub const MAX_STREAMS: usize = 64;

/// How long a write to the client may stay blocked (the client reads nothing while messages
/// wait for it) before the client is disconnected: [`serve_io`] then returns a
/// [`TimedOut`](io::ErrorKind::TimedOut) error, and the reason is logged.
pub const WRITE_STALL_LIMIT: Duration = Duration::from_secs(60);

/// Serves `server` of `registry` on this process's stdin and stdout until stdin closes.
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// mcp_registry::transport::stdio::serve(registry, "math").await
/// # }
/// ```
pub async fn serve(registry: Registry, server: &str) -> io::Result<()> {
    serve_io(registry, server, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Serves every enabled server of `registry` as one ([`ALL_SERVERS`](crate::ALL_SERVERS)) on
/// this process's stdin and stdout until stdin closes: one process for the whole registry,
/// following it as servers come and go. Over other streams, pass `ALL_SERVERS` to
/// [`serve_io`].
///
/// ```no_run
/// # async fn run(registry: mcp_registry::Registry) -> std::io::Result<()> {
/// mcp_registry::transport::stdio::serve_all(registry).await
/// # }
/// ```
pub async fn serve_all(registry: Registry) -> io::Result<()> {
    serve(registry, crate::registry::ALL_SERVERS).await
}

/// Serves `server` of `registry` over any byte streams (a pipe, a socket, an in-memory duplex
/// in tests), one JSON-RPC message per line.
///
/// When the input ends, open `subscriptions/listen` streams end at once (nobody is left to
/// listen), the other requests in flight get [`SHUTDOWN_GRACE`] to answer, their replies are
/// written, and this returns; what is still running then is cancelled.
///
/// What waits for the client to read is bounded by the session outbox's rule
/// ([`OUTBOX_CAPACITY`](crate::dispatch::OUTBOX_CAPACITY)): replies are never dropped (at most
/// [`MAX_IN_FLIGHT`] are pending: reading pauses past it), notifications past the bound are
/// dropped oldest first and counted (logged), and a client that reads nothing for
/// [`WRITE_STALL_LIMIT`] while messages wait is disconnected.
pub async fn serve_io<R, W>(
    registry: Registry,
    server: &str,
    reader: R,
    writer: W,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let (session, mut pushed) = ServerSession::new(registry, server);
    let mut lines = FramedRead::new(reader, LineDecoder::new(MAX_LINE_BYTES));
    let writer = super::stall::Stalled::new(writer, WRITE_STALL_LIMIT, "stdio");
    let mut writer = tokio::io::BufWriter::new(writer);
    // Replies and per-call notifications share one FIFO, so a call's progress precedes its reply.
    // Lines of JSON text: replies are written as the registry makes them (a `tools/list`
    // reply splices the listing serialized once), not serialized again here. Bounded by the
    // outbox's rule: replies kept, notifications past the bound dropped (and counted).
    let (out_tx, out_rx) =
        outbox::bounded::<String>("stdio's writer queue (the client reads too little of stdout)");
    let mut running = Running::new(session.clone(), out_tx.clone());
    // Set when the input ends: what runs past it is cancelled.
    let mut grace: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    let mut cancelled = false;
    // A failed read ends reading like end of input does; the error is returned once the calls
    // in flight have answered.
    let mut read_error = None;
    loop {
        tokio::select! {
            line = lines.next(), if grace.is_none() && running.calls.len() + out_rx.replies() < MAX_IN_FLIGHT => {
                let ended = match line {
                    None => true,
                    Some(Ok(line)) => { running.read(line).await; false }
                    Some(Err(e)) => {
                        tracing::error!(error = %e, "stdio: reading stdin failed");
                        read_error = Some(e);
                        true
                    }
                };
                if ended {
                    running.input_ended();
                    grace = Some(Box::pin(tokio::time::sleep(SHUTDOWN_GRACE)));
                }
            }
            Some(line) = out_rx.next() => write_line(&mut writer, line).await?,
            Some(message) = pushed.recv() => write_line(&mut writer, message.to_string()).await?,
            Some(joined) = running.calls.join_next(), if !running.calls.is_empty() => log_failed(joined),
            Some(joined) = running.streams.join_next(), if !running.streams.is_empty() => log_failed(joined),
            () = async { if let Some(g) = grace.as_mut() { g.await } }, if grace.is_some() && !cancelled && !running.calls.is_empty() => {
                tracing::warn!(
                    calls = running.calls.len(),
                    "stdio: input closed; cancelling the calls still running after {SHUTDOWN_GRACE:?}"
                );
                cancelled = true;
                session.shutdown();
                running.calls.abort_all();
            }
        }
        if grace.is_some() && running.is_empty() {
            break;
        }
    }
    while let Ok(line) = out_rx.take() {
        write_line(&mut writer, line).await?;
    }
    if out_rx.dropped() > 0 {
        tracing::warn!(
            dropped = out_rx.dropped(),
            "stdio: notifications were dropped because the client read too little"
        );
    }
    session.shutdown();
    writer.flush().await?;
    read_error.map_or(Ok(()), Err)
}

/// How long requests in flight when stdin closes get to answer before they are cancelled and
/// [`serve_io`] returns.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// The requests being served, and where their replies go.
struct Running {
    session: ServerSession,
    /// Replies ([`send`](outbox::Sender::send)) and notifications, to the writer.
    out: Replies,
    /// Calls' notifications, into `out` (built once, cloned per request).
    notifications: NotificationSink,
    /// Requests that answer (calls, listings…).
    calls: JoinSet<()>,
    /// `subscriptions/listen` streams, which only end when cancelled.
    streams: JoinSet<()>,
}

impl Running {
    fn new(session: ServerSession, out: outbox::Sender<String>) -> Running {
        let notifications = {
            let out = out.clone();
            NotificationSink::new(move |n| {
                let class = Class::of_note(&n);
                out.push(n.to_string(), class);
            })
        };
        let out = Replies(out);
        Running {
            session,
            out,
            notifications,
            calls: JoinSet::new(),
            streams: JoinSet::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.calls.is_empty() && self.streams.is_empty()
    }

    /// Handles one line: notifications (which change session state: initialized, cancelled)
    /// in arrival order, before reading on; requests (alone or in a batch) while reading goes
    /// on.
    async fn read(&mut self, line: Line) {
        let line = match line {
            Line::Text(line) if line.trim_ascii().is_empty() => return,
            Line::Text(line) => line,
            Line::TooLong => {
                tracing::debug!("stdio: refused a line over {MAX_LINE_BYTES} bytes (-32700)");
                let too_long =
                    parse_error(format_args!("message longer than {MAX_LINE_BYTES} bytes"));
                let _ = self.out.send(too_long.to_string());
                return;
            }
        };
        let message = match String::from_utf8(Vec::from(line)) {
            Ok(message) => message,
            Err(e) => {
                tracing::debug!("stdio: refused a line that is not UTF-8 (-32700)");
                let _ = self.out.send(not_utf8(e.as_bytes()).to_string());
                return;
            }
        };
        // Decoded once: what the line is decides how it is served, and the session
        // answers the decoded message.
        let message = match decode_text(&message) {
            Ok(TextMessage::One(message)) => message,
            Ok(TextMessage::Batch(batch)) => return self.batch(batch).await,
            Err(e) => {
                let _ = self.out.send(parse_error(e).to_string());
                return;
            }
        };
        let Decoded::Request(request) = &message else {
            // A notification, a response, or a refusal: applied (or answered) before the
            // next line is read, so that state changes keep their order.
            if let Some(reply) = self
                .session
                .answer_as_text(message, CallOptions::new())
                .await
            {
                let _ = self.out.send(reply);
            }
            return;
        };
        let stream = request.method == method::SUBSCRIPTIONS_LISTEN;
        if stream && self.refuse_over_stream_cap(&message) {
            return;
        }
        // In the in-flight table before the next line is read: a `notifications/cancelled`
        // right behind the request finds it, whether or not its task has run yet.
        let mut options = CallOptions::new().notifications(self.notifications.clone());
        let registered = self.session.register(&request.id, &mut options);
        // Answered while reading goes on, so after the line is gone: owned (a call's
        // arguments copied as text, not parsed).
        let message = message.into_owned();
        let out = self.out.clone();
        let task = async move {
            if let Some(reply) = registered.answer_as_text(message, options).await {
                let _ = out.send(reply);
            }
        };
        if stream {
            self.streams.spawn(task);
        } else {
            self.calls.spawn(task);
        }
    }

    /// A batch: served while reading goes on when it holds a request (a session refuses it
    /// unless its version has batches), applied before the next line otherwise.
    async fn batch(&mut self, batch: Vec<Value>) {
        let holds_request = batch.iter().any(|m| m.get("id").is_some());
        let out = self.out.clone();
        let options = CallOptions::new().notifications(self.notifications.clone());
        // Its requests in the in-flight table before the next line is read, as a single
        // request's are.
        let batch = self.session.register_batch(batch, &options);
        let task = async move {
            if let Some(reply) = batch.answer().await {
                let _ = out.send(reply.to_string());
            }
        };
        if holds_request {
            self.calls.spawn(task);
        } else {
            task.await;
        }
    }

    /// Refuses the `subscriptions/listen` request `message` (-32603) when [`MAX_STREAMS`]
    /// are open; `true` when it did.
    fn refuse_over_stream_cap(&self, message: &Decoded<'_>) -> bool {
        let Decoded::Request(request) = message else {
            return false;
        };
        if self.streams.len() < MAX_STREAMS {
            return false;
        }
        tracing::warn!(
            "stdio: refused a subscriptions/listen stream over the cap of {MAX_STREAMS}"
        );
        let refused = ErrorObject::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "too many open subscriptions/listen streams (at most {MAX_STREAMS}); cancel one first"
            ),
        );
        let _ = self
            .out
            .send(error_value(Some(request.id.clone()), refused).to_string());
        true
    }

    /// The input has ended: no reply can come any more (tools waiting on the client stop
    /// waiting), and nobody is left to listen to streams.
    fn input_ended(&mut self) {
        self.session.client_gone();
        self.streams.abort_all();
    }
}

/// The writer queue's sending end, for replies (never dropped).
#[derive(Clone)]
struct Replies(outbox::Sender<String>);

impl Replies {
    /// Queues the reply `line`; `false` once the writer is gone.
    fn send(&self, line: String) -> bool {
        self.0.reply(line)
    }
}

fn log_failed(joined: Result<(), tokio::task::JoinError>) {
    if let Err(e) = joined
        && !e.is_cancelled()
    {
        tracing::error!(error = %e, "stdio request task failed");
    }
}

/// The -32700 for a line that is not UTF-8, worded as the JSON parser words it.
fn not_utf8(line: &[u8]) -> Value {
    match serde_json::from_slice::<IgnoredAny>(line) {
        Err(e) => parse_error(e),
        Ok(_) => parse_error("the message is not UTF-8"),
    }
}

/// One line of input, as [`LineDecoder`] frames it.
#[derive(Debug, PartialEq)]
enum Line {
    /// A line's bytes, without its `\n` (or `\r\n`). Not necessarily UTF-8: the JSON parser
    /// rejects what is not.
    Text(BytesMut),
    /// A line longer than the limit. Its bytes are dropped as they arrive, never buffered whole.
    TooLong,
}

/// Frames newline-delimited input into lines of at most `max` bytes.
///
/// Unlike `LinesCodec`, bytes that are not UTF-8 and over-long lines are items, not decoder
/// errors: `FramedRead` ends its stream after an error, and the server must go on reading.
struct LineDecoder {
    max: usize,
    /// How much of the buffer is known to hold no `\n`.
    searched: usize,
    /// Inside an over-long line: bytes are dropped up to the next `\n`.
    discarding: bool,
}

impl LineDecoder {
    fn new(max: usize) -> Self {
        LineDecoder {
            max,
            searched: 0,
            discarding: false,
        }
    }
}

impl Decoder for LineDecoder {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        loop {
            let newline = buf[self.searched..].iter().position(|b| *b == b'\n');
            let Some(end) = newline.map(|i| self.searched + i) else {
                if self.discarding {
                    buf.clear();
                } else if buf.len() > self.max {
                    buf.clear();
                    self.discarding = true;
                    self.searched = 0;
                    return Ok(Some(Line::TooLong));
                }
                self.searched = buf.len();
                return Ok(None);
            };
            let mut line = buf.split_to(end + 1);
            self.searched = 0;
            if std::mem::take(&mut self.discarding) {
                // The end of an over-long line already answered.
                continue;
            }
            if end > self.max {
                return Ok(Some(Line::TooLong));
            }
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(end - 1);
            }
            return Ok(Some(Line::Text(line)));
        }
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        if let Some(line) = self.decode(buf)? {
            return Ok(Some(line));
        }
        // What is left is a last line without its newline.
        self.searched = 0;
        if std::mem::take(&mut self.discarding) || buf.is_empty() {
            buf.clear();
            return Ok(None);
        }
        Ok(Some(Line::Text(buf.split())))
    }
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, mut line: String) -> io::Result<()> {
    line.push('\n');
    writer.write_all(line.as_bytes()).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Feeds `chunks` one at a time (as reads would), then ends the input.
    fn frame(max: usize, chunks: &[&[u8]]) -> Vec<Line> {
        let mut decoder = LineDecoder::new(max);
        let mut buf = BytesMut::new();
        let mut lines = Vec::new();
        for chunk in chunks {
            buf.extend_from_slice(chunk);
            while let Some(line) = decoder.decode(&mut buf).unwrap() {
                lines.push(line);
            }
        }
        while let Some(line) = decoder.decode_eof(&mut buf).unwrap() {
            lines.push(line);
        }
        lines
    }

    fn text(s: &[u8]) -> Line {
        Line::Text(BytesMut::from(s))
    }

    #[test]
    fn lines_are_split_on_newlines_whatever_their_bytes() {
        assert_eq!(
            frame(8, &[b"ab\n\xFF\xFE\r\n", b"c", b"d\n\nlast"]),
            [
                text(b"ab"),
                text(b"\xFF\xFE"),
                text(b"cd"),
                text(b""),
                text(b"last")
            ]
        );
    }

    #[test]
    fn an_over_long_line_is_one_item_and_reading_goes_on() {
        // Limit 4: "12345" is over it whether its newline comes in the same read or later.
        assert_eq!(
            frame(4, &[b"1234\n12345\nok\n"]),
            [text(b"1234"), Line::TooLong, text(b"ok")]
        );
        let mut decoder = LineDecoder::new(4);
        let mut buf = BytesMut::from(&b"123456"[..]);
        assert_eq!(decoder.decode(&mut buf).unwrap(), Some(Line::TooLong));
        assert!(buf.is_empty(), "the over-long line is not kept");
        buf.extend_from_slice(b"789");
        assert_eq!(decoder.decode(&mut buf).unwrap(), None);
        assert!(buf.is_empty(), "nor is the rest of it");
        buf.extend_from_slice(b"0\nnext\n");
        assert_eq!(decoder.decode(&mut buf).unwrap(), Some(text(b"next")));
        // An over-long last line without a newline is dropped at end of input.
        assert_eq!(
            frame(4, &[b"ok\n", b"123", b"456"]),
            [text(b"ok"), Line::TooLong]
        );
    }
}
