//! The stdio transport over an in-memory pipe: `serve_io` serves a registry's server on one
//! end, a test writes lines to and reads lines from the other ([`Pipe`]). Taken alone (by
//! path) by tests that need nothing else of `common`.

use std::time::Duration;

use mcp_registry::Registry;
use mcp_registry::transport::stdio::serve_io;
use serde_json::Value;
use tokio::io::WriteHalf;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf};
use tokio::task::JoinHandle;

/// The client's end of the pipe.
pub struct Pipe {
    /// Where the client writes (shut it down to end the server's input).
    pub writer: WriteHalf<DuplexStream>,
    /// What the server wrote, line by line.
    pub lines: Lines<BufReader<ReadHalf<DuplexStream>>>,
}

/// Serves `server` of `registry` over an in-memory pipe: the client's end, and the server's
/// task (ending when its input does).
pub fn serve_piped(
    registry: Registry,
    server: &'static str,
) -> (Pipe, JoinHandle<std::io::Result<()>>) {
    let (client_end, server_end) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_end);
    let served =
        tokio::spawn(async move { serve_io(registry, server, server_read, server_write).await });
    let (read, writer) = tokio::io::split(client_end);
    let pipe = Pipe {
        writer,
        lines: BufReader::new(read).lines(),
    };
    (pipe, served)
}

impl Pipe {
    /// Writes `line` and a newline.
    pub async fn send(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
    }

    /// Writes `message` as one line.
    pub async fn send_json(&mut self, message: Value) {
        self.send(&message.to_string()).await;
    }

    /// The next line, as JSON (10 s at most).
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a line within 10 s")
            .unwrap()
            .expect("an open stream");
        serde_json::from_str(&line).unwrap()
    }
}
