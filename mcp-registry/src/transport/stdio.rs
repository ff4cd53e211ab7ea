//! stdio: newline-delimited JSON-RPC on stdin/stdout.
//!
//! stdout carries only MCP messages (log with `tracing` to stderr). Requests run concurrently;
//! a call's progress notifications are written before its reply; `notifications/cancelled`
//! stops the named call and suppresses its reply; end of input ends the loop once the calls
//! in flight have answered.

use std::io;

use futures_util::StreamExt as _;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use crate::dispatch::{ServerSession, envelope};
use crate::registry::{CallOptions, Registry};
use crate::tool::NotificationSink;

/// The longest accepted line (one message): 16 MiB. A longer line is answered with -32700 and
/// skipped, never buffered whole.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most requests handled at once; past it, reading pauses until one finishes
/// (backpressure on a client that floods the pipe).
pub const MAX_IN_FLIGHT: usize = 256;

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

/// Serves `server` of `registry` over any byte streams (a pipe, a socket, an in-memory duplex
/// in tests), one JSON-RPC message per line.
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
    let mut lines = FramedRead::new(reader, LinesCodec::new_with_max_length(MAX_LINE_BYTES));
    let mut writer = tokio::io::BufWriter::new(writer);
    // Replies and per-call notifications share one FIFO, so a call's progress precedes its reply.
    // Lines of JSON text: replies are written as the registry makes them (a `tools/list`
    // reply splices the listing serialized once), not serialized again here.
    let (out_tx, mut out_rx) = mpsc::unbounded_channel::<String>();
    let notifications = {
        let out = out_tx.clone();
        NotificationSink::new(move |n| {
            let _ = out.send(n.to_string());
        })
    };
    let mut calls = JoinSet::new();
    let mut reading = true;
    loop {
        tokio::select! {
            line = lines.next(), if reading && calls.len() < MAX_IN_FLIGHT => match line {
                None => reading = false,
                Some(Ok(line)) if line.trim().is_empty() => {}
                Some(Ok(line)) => match serde_json::from_str::<Value>(&line) {
                    Err(e) => { let _ = out_tx.send(envelope::parse_error(e).to_string()); }
                    // Notifications change session state (initialized, cancelled): apply them
                    // in arrival order, before reading on.
                    Ok(message) if message.get("id").is_none() => {
                        if let Some(reply) = session.handle_text_with(message, CallOptions::new()).await {
                            let _ = out_tx.send(reply);
                        }
                    }
                    Ok(message) => {
                        let session = session.clone();
                        let out = out_tx.clone();
                        let sink = notifications.clone();
                        calls.spawn(async move {
                            if let Some(reply) = session.handle_text_with(message, CallOptions::new().notifications(sink)).await {
                                let _ = out.send(reply);
                            }
                        });
                    }
                },
                Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                    let _ = out_tx.send(envelope::parse_error(format_args!(
                        "message longer than {MAX_LINE_BYTES} bytes"
                    )).to_string());
                }
                Some(Err(LinesCodecError::Io(e))) => return Err(e),
            },
            Some(line) = out_rx.recv() => write_line(&mut writer, line).await?,
            Some(message) = pushed.recv() => write_line(&mut writer, message.to_string()).await?,
            Some(joined) = calls.join_next(), if !calls.is_empty() => {
                if let Err(e) = joined {
                    tracing::error!(error = %e, "stdio request task failed");
                }
            }
        }
        if !reading && calls.is_empty() {
            break;
        }
    }
    while let Ok(line) = out_rx.try_recv() {
        write_line(&mut writer, line).await?;
    }
    session.shutdown();
    writer.flush().await
}

async fn write_line<W: AsyncWrite + Unpin>(writer: &mut W, mut line: String) -> io::Result<()> {
    line.push('\n');
    writer.write_all(line.as_bytes()).await?;
    writer.flush().await
}
