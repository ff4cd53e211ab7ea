//! The tool-name and server-name rules, written once, as `const fn`s: the run-time validators
//! ([`validate_tool_name`](crate::protocol::validate_tool_name), `Server::builder(..).build()`)
//! call them, and `#[mcp_tool]` / `server!` evaluate them at compile time, in a constant
//! next to the tool (`match __private::tool_name_error("..") { Some(e) => panic!("{}",
//! e.as_str()), None => {} }`), where the panic is a compile error at the name. The panic
//! is written in the generated constant rather than in these functions so that rustc
//! reports it on the name alone, without a note pointing into this crate.
//!
//! Messages are assembled in a [`NameMessage`] buffer because `format!` is not available in
//! constant evaluation; the run-time `Display` impls use the same functions, so a name is
//! refused with the same words at compile time and at run time.

/// The longest tool or server name, in characters.
pub(crate) const MAX_NAME_LEN: usize = 128;

/// A problem with a name under the rule shared by tools and servers: 1 to
/// [`MAX_NAME_LEN`] characters of `A-Z a-z 0-9 _ - .`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameProblem {
    /// The name is empty.
    Empty,
    /// The first character outside the set starts at this index. Every character before it
    /// is ASCII, so the index counts bytes and characters alike.
    Character(usize),
    /// The name has this many characters (all ASCII), more than [`MAX_NAME_LEN`].
    TooLong(usize),
}

const fn allowed(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'_' | b'-' | b'.')
}

/// The first problem with `name`: emptiness, then a character outside the set, then length.
pub(crate) const fn name_problem(name: &str) -> Option<NameProblem> {
    let bytes = name.as_bytes();
    if bytes.is_empty() {
        return Some(NameProblem::Empty);
    }
    let mut i = 0;
    while i < bytes.len() {
        // Allowed characters are ASCII, so the first byte refused starts a character.
        if !allowed(bytes[i]) {
            return Some(NameProblem::Character(i));
        }
        i += 1;
    }
    if bytes.len() > MAX_NAME_LEN {
        return Some(NameProblem::TooLong(bytes.len()));
    }
    None
}

/// The character of `name` starting at byte `at` (a character boundary), as a `&str`.
pub(crate) const fn char_at(name: &str, at: usize) -> &str {
    let bytes = name.as_bytes();
    let width = match bytes[at] {
        b if b < 0x80 => 1,
        b if b >= 0xF0 => 4,
        b if b >= 0xE0 => 3,
        _ => 2,
    };
    let (_, rest) = bytes.split_at(at);
    let (ch, _) = rest.split_at(width);
    match core::str::from_utf8(ch) {
        Ok(ch) => ch,
        Err(_) => "?",
    }
}

/// Why `name` is no valid server name (the tool rule, plus no `__`, which separates server
/// and tool in qualified names), in the words of `ServerBuildError::InvalidName`.
pub(crate) const fn server_name_problem(name: &str) -> Option<&'static str> {
    match name_problem(name) {
        Some(NameProblem::Empty) => Some("it is empty"),
        Some(NameProblem::Character(_)) => Some("only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"),
        Some(NameProblem::TooLong(_)) => Some("it is longer than 128 characters"),
        None if contains_double_underscore(name.as_bytes()) => Some(
            "it contains \"__\", which separates server and tool in qualified names (mcp__<server>__<tool>)",
        ),
        None => None,
    }
}

const fn contains_double_underscore(bytes: &[u8]) -> bool {
    let mut i = 1;
    while i < bytes.len() {
        if bytes[i] == b'_' && bytes[i - 1] == b'_' {
            return true;
        }
        i += 1;
    }
    false
}

/// The message refusing a tool name: `Empty`, `Character { ch, position }` or `TooLong`.
pub(crate) const fn tool_name_message(name: &str, problem: ToolNameProblem<'_>) -> NameMessage {
    let m = NameMessage::new();
    match problem {
        ToolNameProblem::Empty => {
            m.push("tool name is empty; a name has 1 to 128 characters of [A-Za-z0-9_.-]")
        }
        ToolNameProblem::Character { ch, position } => m
            .push("tool name ")
            .push_quoted(name, '"')
            .push(" contains ")
            .push_quoted(ch, '\'')
            .push(" at position ")
            .push_usize(position)
            .push("; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"),
        ToolNameProblem::TooLong { len } => m
            .push("tool name ")
            .push_quoted(name, '"')
            .push(" is ")
            .push_usize(len)
            .push(" characters long; the limit is 128"),
    }
}

/// The message refusing a server name for `reason` (from [`server_name_problem`]).
pub(crate) const fn server_name_message(name: &str, reason: &str) -> NameMessage {
    NameMessage::new()
        .push("server name ")
        .push_quoted(name, '"')
        .push(" is invalid: ")
        .push(reason)
}

/// What [`tool_name_message`] reports.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ToolNameProblem<'a> {
    Empty,
    Character { ch: &'a str, position: usize },
    TooLong { len: usize },
}

/// Why `name` is no valid tool name, or `None`. `#[mcp_tool]` evaluates it in a constant and
/// panics there with the message, which makes it a compile error at the name.
pub const fn tool_name_error(name: &str) -> Option<NameMessage> {
    let problem = match name_problem(name) {
        None => return None,
        Some(NameProblem::Empty) => ToolNameProblem::Empty,
        Some(NameProblem::Character(at)) => ToolNameProblem::Character {
            ch: char_at(name, at),
            position: at,
        },
        Some(NameProblem::TooLong(len)) => ToolNameProblem::TooLong { len },
    };
    Some(tool_name_message(name, problem))
}

/// Why `name` is no valid server name, or `None` (for `server!`, as [`tool_name_error`]).
pub const fn server_name_error(name: &str) -> Option<NameMessage> {
    match server_name_problem(name) {
        Some(reason) => Some(server_name_message(name, reason)),
        None => None,
    }
}

/// Why `name` is no valid prompt name, or `None`. Prompts follow the tool rule (1 to 128
/// characters of `A-Z a-z 0-9 _ - .`), so `mcp__<server>__<prompt>` splits one way too;
/// `#[mcp_prompt]` evaluates it in a constant, as [`tool_name_error`].
pub const fn prompt_name_error(name: &str) -> Option<NameMessage> {
    let m = NameMessage::new();
    match name_problem(name) {
        None => None,
        Some(NameProblem::Empty) => {
            Some(m.push("prompt name is empty; a name has 1 to 128 characters of [A-Za-z0-9_.-]"))
        }
        Some(NameProblem::Character(at)) => Some(
            m.push("prompt name ")
                .push_quoted(name, '"')
                .push(" contains ")
                .push_quoted(char_at(name, at), '\'')
                .push(" at position ")
                .push_usize(at)
                .push("; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"),
        ),
        Some(NameProblem::TooLong(len)) => Some(
            m.push("prompt name ")
                .push_quoted(name, '"')
                .push(" is ")
                .push_usize(len)
                .push(" characters long; the limit is 128"),
        ),
    }
}

/// Room for a message: the fixed text, a name cut to [`NAME_SHOWN`] bytes and a number.
const CAPACITY: usize = 320;

/// How much of a name a message shows (longer names are cut, with `…`).
const NAME_SHOWN: usize = 160;

/// A short text assembled in constant evaluation. Text that does not fit is cut at a
/// character boundary.
pub struct NameMessage {
    bytes: [u8; CAPACITY],
    len: usize,
}

impl NameMessage {
    const fn new() -> Self {
        NameMessage {
            bytes: [0; CAPACITY],
            len: 0,
        }
    }

    /// Appends `text`, as much of it as fits.
    const fn push(mut self, text: &str) -> Self {
        let text = text.as_bytes();
        let mut end = text.len();
        if end > CAPACITY - self.len {
            end = CAPACITY - self.len;
            // Back off to a character boundary.
            while end > 0 && text[end] & 0xC0 == 0x80 {
                end -= 1;
            }
        }
        let mut i = 0;
        while i < end {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    /// Appends `text` between `quote`s, cut to [`NAME_SHOWN`] bytes, with control characters,
    /// the quote and `\` escaped.
    const fn push_quoted(mut self, text: &str, quote: char) -> Self {
        let quote_byte = quote as u8;
        self = self.push_byte(quote_byte);
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if i >= NAME_SHOWN && bytes[i] & 0xC0 != 0x80 {
                self = self.push("…");
                break;
            }
            let b = bytes[i];
            if b == quote_byte || b == b'\\' {
                self = self.push_byte(b'\\').push_byte(b);
            } else if b < 0x20 || b == 0x7F {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                self = self
                    .push("\\u{")
                    .push_byte(HEX[(b >> 4) as usize])
                    .push_byte(HEX[(b & 0xF) as usize])
                    .push("}");
            } else {
                self = self.push_byte(b);
            }
            i += 1;
        }
        self.push_byte(quote_byte)
    }

    /// Appends `n` in decimal.
    const fn push_usize(mut self, n: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut rest = n;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self = self.push_byte(digits[count]);
        }
        self
    }

    /// Appends one byte of a character that is already complete in the buffer, or ASCII.
    const fn push_byte(mut self, byte: u8) -> Self {
        if self.len < CAPACITY {
            self.bytes[self.len] = byte;
            self.len += 1;
        }
        self
    }

    /// The text so far.
    pub const fn as_str(&self) -> &str {
        let (text, _) = self.bytes.as_slice().split_at(self.len);
        match core::str::from_utf8(text) {
            Ok(text) => text,
            // Unreachable: only whole characters are pushed. Say so rather than panic.
            Err(_) => "(invalid name; the message could not be written)",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule() {
        assert_eq!(name_problem("get_weather.v2-b"), None);
        assert_eq!(name_problem(""), Some(NameProblem::Empty));
        assert_eq!(name_problem("ab cd"), Some(NameProblem::Character(2)));
        assert_eq!(name_problem("aé"), Some(NameProblem::Character(1)));
        assert_eq!(name_problem(&"x".repeat(128)), None);
        assert_eq!(
            name_problem(&"x".repeat(129)),
            Some(NameProblem::TooLong(129))
        );
        assert_eq!(char_at("aé!", 1), "é");
        assert_eq!(char_at("a😀", 1), "😀");
        assert_eq!(server_name_problem("math"), None);
        assert!(server_name_problem("a__b").is_some_and(|r| r.contains("__")));
        assert!(server_name_problem("a b").is_some_and(|r| r.contains("only")));
    }

    #[test]
    fn messages_quote_escape_and_cut() {
        let at = |name: &str, position| {
            let problem = ToolNameProblem::Character {
                ch: char_at(name, position),
                position,
            };
            tool_name_message(name, problem).as_str().to_owned()
        };
        assert_eq!(
            at("add numbers!", 3),
            "tool name \"add numbers!\" contains ' ' at position 3; only A-Z, a-z, 0-9, '_', '-' and '.' are allowed"
        );
        assert!(at("a\"b\n", 1).starts_with("tool name \"a\\\"b\\u{0a}\" contains '\"'"));
        let long = format!("{} ", "é".repeat(200));
        let message = at(&long, 0);
        assert!(
            message.contains("é…\" contains 'é' at position 0"),
            "{message}"
        );
        assert!(message.ends_with("are allowed"), "{message}");
        assert_eq!(
            tool_name_message("", ToolNameProblem::TooLong { len: 1234 }).as_str(),
            "tool name \"\" is 1234 characters long; the limit is 128"
        );
    }
}
