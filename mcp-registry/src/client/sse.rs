//! Server-sent events with bounds: lines and events of at most the client's message limit
//! (an event past it is reported as soon as it passes, and skipped to its end), and an event
//! that is not UTF-8 reported and skipped, so the stream lives on.

use std::io;

use tokio::io::AsyncBufRead;

use super::lines::{Line, LineReader};

/// One event, with the fields resumption needs kept apart.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Event {
    /// `id:`, when the event set one.
    pub(super) id: Option<String>,
    /// The `data:` lines joined by `\n`; `None` when the event had none.
    pub(super) data: Option<String>,
    /// `retry:`, in milliseconds.
    pub(super) retry: Option<u64>,
}

/// What [`EventReader::next_event`] reads.
#[derive(Debug, PartialEq)]
pub(super) enum Sse {
    /// A whole event.
    Event(Event),
    /// An event (or one of its lines) longer than the limit: it is skipped to its end.
    TooLarge,
    /// An event with a line that is not UTF-8: skipped.
    NotUtf8,
}

/// Reads bounded [`Sse`] items from a byte stream.
pub(super) struct EventReader<R> {
    lines: LineReader<R>,
    max: usize,
    /// Inside an event already reported as too large: lines are dropped up to its end.
    skipping: bool,
}

impl<R: AsyncBufRead + Unpin> EventReader<R> {
    pub(super) fn new(reader: R, max: usize) -> Self {
        EventReader {
            lines: LineReader::new(reader, max),
            max,
            skipping: false,
        }
    }

    /// The limit, in bytes.
    pub(super) fn max(&self) -> usize {
        self.max
    }

    /// The next event, or `None` at the end of the stream (an unfinished event is dropped,
    /// as the SSE standard says).
    pub(super) async fn next_event(&mut self) -> io::Result<Option<Sse>> {
        let mut event = Event::default();
        let mut not_utf8 = false;
        loop {
            let line = match self.lines.next_line().await? {
                None => return Ok(None),
                Some(Line::TooLong(_)) if self.skipping => continue,
                Some(Line::TooLong(_)) => {
                    self.skipping = true;
                    return Ok(Some(Sse::TooLarge));
                }
                Some(Line::Text(line)) => line,
            };
            if line.is_empty() {
                if std::mem::take(&mut self.skipping) {
                    event = Event::default();
                    continue;
                }
                if not_utf8 {
                    return Ok(Some(Sse::NotUtf8));
                }
                if event == Event::default() {
                    continue;
                }
                return Ok(Some(Sse::Event(event)));
            }
            if self.skipping {
                continue;
            }
            let Ok(line) = std::str::from_utf8(&line) else {
                not_utf8 = true;
                continue;
            };
            let (field, value) = line.split_once(':').unwrap_or((line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "data" => {
                    let data = event.data.get_or_insert_with(String::new);
                    if data.len() + value.len() + 1 > self.max {
                        self.skipping = true;
                        return Ok(Some(Sse::TooLarge));
                    }
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(value);
                }
                "id" if !value.contains('\0') => event.id = Some(value.to_owned()),
                "retry" => event.retry = value.parse().ok().or(event.retry),
                // Comments (`:`), `event:` (MCP sends only `message`) and unknown fields.
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn events(max: usize, input: &[u8]) -> Vec<Sse> {
        let mut reader = EventReader::new(tokio::io::BufReader::with_capacity(4, input), max);
        let mut out = Vec::new();
        while let Some(item) = reader.next_event().await.unwrap() {
            out.push(item);
        }
        out
    }

    fn data(id: Option<&str>, data: &str) -> Sse {
        Sse::Event(Event {
            id: id.map(str::to_owned),
            data: Some(data.to_owned()),
            retry: None,
        })
    }

    #[tokio::test]
    async fn events_are_framed_with_their_ids_and_retry() {
        let got = events(
            64,
            b": hi\nid: 1\ndata: a\ndata:b\n\nretry: 50\n\ndata: c\r\n\r\n",
        )
        .await;
        assert_eq!(
            got,
            [
                data(Some("1"), "a\nb"),
                Sse::Event(Event {
                    retry: Some(50),
                    ..Event::default()
                }),
                data(None, "c"),
            ]
        );
    }

    #[tokio::test]
    async fn large_and_non_utf8_events_are_skipped_and_the_stream_goes_on() {
        let got = events(
            8,
            b"data: 0123\ndata: 4567\ndata: more\n\ndata: \xff\n\ndata: 0123456789abc\ndata: x\n\ndata: ok\n\n",
        )
        .await;
        assert_eq!(
            got,
            [Sse::TooLarge, Sse::NotUtf8, Sse::TooLarge, data(None, "ok")]
        );
    }
}
