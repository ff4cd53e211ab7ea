//! Lines of at most a given length from a peer (a server's stdout, an SSE stream): an over-long
//! line is reported as soon as it passes the limit and its rest dropped as it arrives, so a
//! peer never makes the client buffer more than the limit (the client-side twin of the
//! server's `LineDecoder` in `transport/stdio.rs`).

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt as _};

#[cfg(feature = "client-stdio")]
use crate::protocol::RequestId;

/// How much of an over-long line is kept, to find whose reply it was.
const HEAD: usize = 1024;

/// One line, as [`LineReader`] frames it.
#[derive(Debug, PartialEq)]
pub(super) enum Line {
    /// A line's bytes, without its `\n` (or `\r\n`); not necessarily UTF-8.
    Text(Vec<u8>),
    /// A line longer than the limit: its first bytes only; the rest is dropped unread.
    TooLong(Vec<u8>),
}

/// Reads [`Line`]s of at most `max` bytes from `reader`.
pub(super) struct LineReader<R> {
    reader: R,
    max: usize,
    /// Inside an over-long line already reported: bytes are dropped up to the next `\n`.
    discarding: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub(super) fn new(reader: R, max: usize) -> Self {
        LineReader {
            reader,
            max,
            discarding: false,
        }
    }

    /// The limit, in bytes.
    #[cfg(feature = "client-stdio")]
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// The next line, or `None` at the end of input.
    pub(super) async fn next_line(&mut self) -> io::Result<Option<Line>> {
        let mut line = Vec::new();
        loop {
            let buf = self.reader.fill_buf().await?;
            if buf.is_empty() {
                // What is left is a last line without its newline.
                let discarded = std::mem::take(&mut self.discarding);
                return Ok((!discarded && !line.is_empty()).then_some(Line::Text(line)));
            }
            let newline = buf.iter().position(|b| *b == b'\n');
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            let used = newline.map_or(buf.len(), |i| i + 1);
            if self.discarding {
                self.discarding = newline.is_none();
                self.reader.consume(used);
                continue;
            }
            if line.len() + chunk.len() > self.max {
                let keep = HEAD.saturating_sub(line.len()).min(chunk.len());
                line.extend_from_slice(&chunk[..keep]);
                line.truncate(HEAD);
                self.discarding = newline.is_none();
                self.reader.consume(used);
                return Ok(Some(Line::TooLong(line)));
            }
            line.extend_from_slice(chunk);
            self.reader.consume(used);
            if newline.is_some() {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(Line::Text(line)));
            }
        }
    }
}

/// The id of the reply whose over-long text starts with `head`: the top-level `"id"` of an
/// object whose head also shows a top-level `"result"` or `"error"` (a server request, with
/// `"method"`, is never mistaken for a reply to one of ours).
#[cfg(feature = "client-stdio")]
pub(super) fn reply_id(head: &[u8]) -> Option<RequestId> {
    let mut id = None;
    let mut reply = false;
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b'"' => {
                // The head may end inside a string: what came before it stands.
                let Some(end) = string_end(head, i + 1) else {
                    break;
                };
                let key = &head[i + 1..end];
                let after = skip_space(head, end + 1);
                if depth == 1 && head.get(after) == Some(&b':') {
                    let value = skip_space(head, after + 1);
                    match key {
                        b"id" => id = value_id(head, value),
                        b"result" | b"error" => reply = true,
                        b"method" => return None,
                        _ => {}
                    }
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    id.filter(|_| reply)
}

#[cfg(feature = "client-stdio")]
/// The index of the `"` closing a string whose text starts at `start`.
fn string_end(text: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < text.len() {
        match text[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

#[cfg(feature = "client-stdio")]
fn skip_space(text: &[u8], mut i: usize) -> usize {
    while text.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

#[cfg(feature = "client-stdio")]
/// A request id (a number or a string) starting at `start`.
fn value_id(text: &[u8], start: usize) -> Option<RequestId> {
    let end = match text.get(start)? {
        b'"' => string_end(text, start + 1)? + 1,
        _ => {
            let len = text[start..]
                .iter()
                .take_while(|b| b.is_ascii_digit() || **b == b'-')
                .count();
            start + len
        }
    };
    serde_json::from_slice(&text[start..end]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(max: usize, input: &[u8]) -> Vec<Line> {
        // A 3-byte buffer: lines arrive in pieces, as reads would give them.
        let mut reader = LineReader::new(tokio::io::BufReader::with_capacity(3, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next_line().await.unwrap() {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn lines_past_the_limit_are_reported_and_skipped() {
        let got = lines(4, b"ab\r\nabcdefgh\nxy\n\nlast").await;
        assert_eq!(
            got,
            [
                Line::Text(b"ab".to_vec()),
                Line::TooLong(b"abcde".to_vec()),
                Line::Text(b"xy".to_vec()),
                Line::Text(Vec::new()),
                Line::Text(b"last".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn an_unended_line_past_the_limit_is_reported_before_its_end() {
        let got = lines(4, b"abcdefgh").await;
        assert_eq!(got, [Line::TooLong(b"abcdef".to_vec())]);
    }

    #[cfg(feature = "client-stdio")]
    #[test]
    fn the_id_of_a_reply_is_found_in_its_head() {
        let id = |s: &str| reply_id(s.as_bytes());
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"text":"aaa"#),
            Some(serde_json::from_str::<RequestId>("7").unwrap())
        );
        assert_eq!(
            id(r#"{"result":{"id":1,"x":"\"id\":2"}, "id" : "k","#),
            Some(RequestId::from("k"))
        );
        assert_eq!(
            id(r#"{"jsonrpc":"2.0","id":7,"method":"x","params":{"#),
            None
        );
        assert_eq!(id(r#"{"jsonrpc":"2.0","result":{"content":"aaaa"#), None);
    }
}
