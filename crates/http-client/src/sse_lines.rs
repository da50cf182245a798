//! The line layer of server-sent events (`text/event-stream`): bytes as they arrive cut
//! into whole lines, and the payload of a `data:` line. What the events mean is each
//! API's own (its adapter's assembler).

/// Bytes of a stream, handed out line by line as their newline arrives.
#[derive(Debug, Default)]
pub struct SseLines {
    /// Bytes of a line not yet ended.
    pending: Vec<u8>,
}

impl SseLines {
    pub fn new() -> SseLines {
        SseLines::default()
    }

    /// Adds received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Adds received bytes and hands each whole line to `on_line`, until it says the stream
    /// is done (`Ok(true)`: what is buffered is then dropped) or fails.
    pub fn feed<E>(
        &mut self,
        bytes: &[u8],
        mut on_line: impl FnMut(&str) -> Result<bool, E>,
    ) -> Result<(), E> {
        self.push(bytes);
        while let Some(line) = self.next_line() {
            if on_line(&line)? {
                self.clear();
                break;
            }
        }
        Ok(())
    }

    /// The next whole line (without its `\n` or `\r\n`; invalid UTF-8 replaced), or `None`
    /// until more bytes end one.
    pub fn next_line(&mut self) -> Option<String> {
        let newline = self.pending.iter().position(|b| *b == b'\n')?;
        let line: Vec<u8> = self.pending.drain(..=newline).collect();
        let line = String::from_utf8_lossy(&line);
        Some(line.trim_end_matches(['\n', '\r']).to_owned())
    }

    /// What is left after the last newline, trimmed (a last line the server sent without
    /// one, or a line cut off), emptying the buffer.
    pub fn take_rest(&mut self) -> String {
        let rest = std::mem::take(&mut self.pending);
        String::from_utf8_lossy(&rest).trim().to_owned()
    }

    /// Forgets what is buffered (the stream said it is done).
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

/// The trimmed payload of a `data:` line; `None` for any other line (blank, `event:`,
/// `id:`, `retry:`, `: comment`).
pub fn data_of(line: &str) -> Option<&str> {
    line.strip_prefix("data:").map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_come_whole_whatever_the_pieces() {
        let mut lines = SseLines::new();
        lines.push(b"event: a\r\nda");
        assert_eq!(lines.next_line().as_deref(), Some("event: a"));
        assert_eq!(lines.next_line(), None);
        lines.push(b"ta: {\"x\":1}\n\ndata: cut");
        assert_eq!(lines.next_line().as_deref(), Some("data: {\"x\":1}"));
        assert_eq!(lines.next_line().as_deref(), Some(""));
        assert_eq!(lines.next_line(), None);
        assert_eq!(lines.take_rest(), "data: cut");
        assert_eq!(lines.take_rest(), "");
        lines.push(b"left\n");
        lines.clear();
        assert_eq!(lines.next_line(), None);
    }

    #[test]
    fn feeding_stops_at_the_end_of_the_stream() {
        let mut lines = SseLines::new();
        let mut seen = Vec::new();
        let fed: Result<(), ()> = lines.feed(b"a\nstop\nafter\npart", |line| {
            seen.push(line.to_owned());
            Ok(line == "stop")
        });
        assert_eq!(fed, Ok(()));
        assert_eq!(seen, ["a", "stop"]);
        assert_eq!(lines.take_rest(), "");
        assert_eq!(lines.feed(b"x\n", |_| Err("bad")), Err("bad"));
    }

    #[test]
    fn data_lines_give_their_payload() {
        assert_eq!(data_of("data: {\"a\":1} "), Some("{\"a\":1}"));
        assert_eq!(data_of("data:[DONE]"), Some("[DONE]"));
        assert_eq!(data_of("event: ping"), None);
        assert_eq!(data_of(": keep-alive"), None);
    }
}
