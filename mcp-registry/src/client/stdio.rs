//! The stdio transport: a child process speaking MCP on its stdin and stdout, one JSON
//! message a line; its stderr goes to `tracing`.

use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::mpsc;

use super::ClientError;
use super::lines::{Line, LineReader, reply_id};
use super::transport::{DEFAULT_MAX_MESSAGE_BYTES, Inbound, Outbound, Transport, TransportError};
use crate::sync::MutexExt;
use crate::tool::BoxFuture;

/// How many stderr lines are kept to explain an early exit.
const STDERR_TAIL: usize = 20;

/// A child process speaking MCP over stdio. Killed and reaped on
/// [`close`](Transport::close); killed when dropped.
#[derive(Debug)]
pub struct StdioTransport {
    program: String,
    stdin: tokio::sync::Mutex<Option<ChildStdin>>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    tail: Tail,
}

type Tail = Arc<Mutex<VecDeque<String>>>;

impl StdioTransport {
    /// Spawns `command` (stdin, stdout and stderr piped; killed on drop), delivering what it
    /// writes to `incoming`. A program that cannot be started is a [`ClientError::Spawn`].
    pub fn spawn(
        command: Command,
        incoming: mpsc::UnboundedSender<Inbound>,
    ) -> Result<Self, ClientError> {
        Self::spawn_with_limit(command, incoming, DEFAULT_MAX_MESSAGE_BYTES)
    }

    /// [`spawn`](Self::spawn), accepting lines of at most `max_line_bytes` on stdout: a longer
    /// line is dropped as it arrives (its request, when its head names one, fails with
    /// [`TransportError::TooLarge`]); a line that is not UTF-8 or not JSON is skipped and
    /// logged. The connection lives on either way.
    pub fn spawn_with_limit(
        mut command: Command,
        incoming: mpsc::UnboundedSender<Inbound>,
        max_line_bytes: usize,
    ) -> Result<Self, ClientError> {
        let program = command
            .as_std()
            .get_program()
            .to_string_lossy()
            .into_owned();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = command.spawn().map_err(|source| ClientError::Spawn {
            program: program.clone(),
            source,
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let tail: Tail = Arc::default();
        let child = Arc::new(tokio::sync::Mutex::new(Some(child)));
        if let Some(stderr) = stderr {
            let tail = Arc::clone(&tail);
            let program = program.clone();
            tokio::spawn(async move {
                // Bounded too, and lossy: stderr is the server's as much as stdout.
                let mut lines = LineReader::new(BufReader::new(stderr), max_line_bytes);
                while let Ok(Some(Line::Text(line) | Line::TooLong(line))) = lines.next_line().await
                {
                    let line = String::from_utf8_lossy(&line).into_owned();
                    tracing::info!(target: "mcp_registry::client::stdio", server = %program, "{line}");
                    let mut tail = tail.lock_unpoisoned();
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(line);
                }
            });
        }
        if let Some(stdout) = stdout {
            let child = Arc::clone(&child);
            let tail = Arc::clone(&tail);
            let program = program.clone();
            let lines = LineReader::new(BufReader::new(stdout), max_line_bytes);
            tokio::spawn(async move {
                read_stdout(&program, lines, &incoming).await;
                let reason = exit_reason(&program, &child, &tail).await;
                let _ = incoming.send(Inbound::Closed(reason));
            });
        }
        Ok(StdioTransport {
            program,
            stdin: tokio::sync::Mutex::new(stdin),
            child,
            tail,
        })
    }
}

/// Hands each line of the server's stdout on until it ends (or the client is gone).
async fn read_stdout(
    program: &str,
    mut lines: LineReader<BufReader<ChildStdout>>,
    incoming: &mpsc::UnboundedSender<Inbound>,
) {
    loop {
        let inbound = match lines.next_line().await {
            Ok(Some(Line::Text(line))) if line.trim_ascii().is_empty() => continue,
            Ok(Some(Line::Text(line))) => match serde_json::from_slice(&line) {
                Ok(message) => Inbound::Message(message),
                Err(e) => {
                    // Not UTF-8 is among the JSON errors; the next line may be fine.
                    tracing::warn!(server = %program, error = %e, "not a JSON-RPC line on stdout: skipped");
                    continue;
                }
            },
            Ok(Some(Line::TooLong(head))) => {
                let error = TransportError::TooLarge {
                    what: "a line",
                    limit: lines.max(),
                };
                tracing::warn!(server = %program, %error, "line on stdout skipped");
                match reply_id(&head) {
                    Some(id) => Inbound::Failed { id, error },
                    None => continue,
                }
            }
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(server = %program, error = %e, "reading stdout failed");
                return;
            }
        };
        if incoming.send(inbound).is_err() {
            return;
        }
    }
}

/// Why the server's stdout ended: its exit status (waited for briefly) and its last stderr
/// lines.
async fn exit_reason(
    program: &str,
    child: &tokio::sync::Mutex<Option<Child>>,
    tail: &Tail,
) -> String {
    let status = {
        let mut child = child.lock().await;
        match child.as_mut() {
            Some(c) => tokio::time::timeout(Duration::from_secs(1), c.wait())
                .await
                .ok()
                .and_then(Result::ok),
            None => None,
        }
    };
    // Let the stderr reader take in the last lines the exited process wrote.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut reason = match status {
        Some(status) => format!("MCP server `{program}` exited ({status})"),
        None => format!("MCP server `{program}` closed its stdout"),
    };
    let tail = tail.lock_unpoisoned();
    if !tail.is_empty() {
        reason.push_str("; its stderr ended with: ");
        reason.push_str(&Vec::from(tail.clone()).join(" | "));
    }
    reason
}

impl Transport for StdioTransport {
    fn send(&self, message: Outbound) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            let mut line = message.message.to_string();
            line.push('\n');
            let mut stdin = self.stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err(TransportError::Closed(format!(
                    "MCP server `{}` is closed",
                    self.program
                )));
            };
            let written = async {
                pipe.write_all(line.as_bytes()).await?;
                pipe.flush().await
            };
            match written.await {
                Ok(()) => Ok(()),
                Err(e) => {
                    // Most often the server exited: say how, rather than "broken pipe".
                    drop(stdin);
                    let why = exit_reason(&self.program, &self.child, &self.tail).await;
                    Err(TransportError::Closed(format!(
                        "{why} (writing to it: {e})"
                    )))
                }
            }
        })
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Closing stdin asks the server to exit; it is killed if it does not.
            self.stdin.lock().await.take();
            let mut child = self.child.lock().await;
            if let Some(mut c) = child.take() {
                if tokio::time::timeout(Duration::from_secs(2), c.wait())
                    .await
                    .is_err()
                {
                    let _ = c.kill().await;
                }
                let _ = c.wait().await;
            }
        })
    }
}
