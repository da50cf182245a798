//! A byte sink of bounded size that keeps the beginning and the end of a stream.

use std::collections::VecDeque;

/// Keeps the first `cap / 2` and the last `cap - cap / 2` bytes pushed into it and counts
/// the rest, so memory stays bounded however much a command prints.
#[derive(Debug)]
pub(crate) struct CappedBuffer {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_cap: usize,
    tail_cap: usize,
    total: u64,
}

impl CappedBuffer {
    pub(crate) fn new(cap: usize) -> CappedBuffer {
        let head_cap = cap / 2;
        CappedBuffer {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_cap,
            tail_cap: cap - head_cap,
            total: 0,
        }
    }

    pub(crate) fn push(&mut self, mut data: &[u8]) {
        self.total = self.total.saturating_add(data.len() as u64);
        if self.head.len() < self.head_cap {
            let n = (self.head_cap - self.head.len()).min(data.len());
            self.head.extend_from_slice(&data[..n]);
            data = &data[n..];
        }
        if data.is_empty() || self.tail_cap == 0 {
            return;
        }
        if data.len() >= self.tail_cap {
            self.tail.clear();
            self.tail.extend(&data[data.len() - self.tail_cap..]);
        } else {
            let excess = (self.tail.len() + data.len()).saturating_sub(self.tail_cap);
            self.tail.drain(..excess);
            self.tail.extend(data);
        }
    }

    /// Bytes pushed so far.
    #[cfg(test)]
    pub(crate) fn total(&self) -> u64 {
        self.total
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// The kept text (invalid UTF-8 replaced), with a marker saying how many bytes were
    /// cut from the middle if any were.
    pub(crate) fn render(&self) -> String {
        let tail: Vec<u8> = self.tail.iter().copied().collect();
        let kept = (self.head.len() + tail.len()) as u64;
        if kept == self.total {
            let mut all = self.head.clone();
            all.extend_from_slice(&tail);
            return String::from_utf8_lossy(&all).into_owned();
        }
        // Cut at character boundaries so the edges do not show replacement characters.
        let head = trim_incomplete_end(&self.head);
        let tail = trim_continuation_start(&tail);
        let omitted = self.total - (head.len() + tail.len()) as u64;
        format!(
            "{}\n[... {omitted} bytes omitted from the middle ({} bytes in total) ...]\n{}",
            String::from_utf8_lossy(head),
            self.total,
            String::from_utf8_lossy(tail)
        )
    }
}

/// Drops a UTF-8 sequence cut short at the end of `bytes`.
fn trim_incomplete_end(bytes: &[u8]) -> &[u8] {
    let len = bytes.len();
    for back in 1..=len.min(4) {
        let b = bytes[len - back];
        if b & 0xC0 == 0x80 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let needed = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            _ => 4,
        };
        return if needed > back {
            &bytes[..len - back]
        } else {
            bytes
        };
    }
    bytes
}

/// Drops continuation bytes (the rest of a cut UTF-8 sequence) at the start of `bytes`.
fn trim_continuation_start(bytes: &[u8]) -> &[u8] {
    let skip = bytes
        .iter()
        .take(3)
        .take_while(|b| *b & 0xC0 == 0x80)
        .count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_output_is_kept_whole() {
        let mut b = CappedBuffer::new(10);
        b.push(b"hello");
        b.push(b" you");
        assert_eq!(b.render(), "hello you");
        assert_eq!(b.total(), 9);
    }

    #[test]
    fn exactly_cap_is_kept_whole() {
        let mut b = CappedBuffer::new(10);
        b.push(b"0123456789");
        assert_eq!(b.render(), "0123456789");
    }

    #[test]
    fn large_output_keeps_head_and_tail() {
        let mut b = CappedBuffer::new(10);
        for chunk in [&b"abc"[..], b"defgh", b"ijklmnopqrstuvw", b"xyz"] {
            b.push(chunk);
        }
        let r = b.render();
        assert!(r.starts_with("abcde\n"), "{r}");
        assert!(r.ends_with("\nvwxyz"), "{r}");
        assert!(r.contains("16 bytes omitted"), "{r}");
        assert!(r.contains("26 bytes in total"), "{r}");
    }

    #[test]
    fn huge_single_chunk_keeps_its_end() {
        let mut b = CappedBuffer::new(4);
        let data: Vec<u8> = (0..100u8).collect();
        b.push(&data);
        assert_eq!(b.head, [0, 1]);
        assert_eq!(b.tail, [98, 99]);
        assert_eq!(b.total(), 100);
    }

    #[test]
    fn cuts_respect_utf8_boundaries() {
        let mut b = CappedBuffer::new(8);
        b.push("ééééééééé".as_bytes()); // 18 bytes, 2 per char
        b.push("xé".as_bytes()); // tail: half an "é", then "xé"
        let r = b.render();
        assert!(!r.contains('\u{FFFD}'), "{r}");
        assert!(r.starts_with("éé\n"), "{r}");
        assert!(r.ends_with("\nxé"), "{r}");
        assert!(r.contains("14 bytes omitted"), "{r}");

        let mut b = CappedBuffer::new(6);
        b.push("€€€€€".as_bytes()); // 3 bytes each: head cuts after 3, tail after 3
        let r = b.render();
        assert!(!r.contains('\u{FFFD}'), "{r}");
        assert!(r.starts_with("€\n") && r.ends_with("\n€"), "{r}");
    }

    #[test]
    fn trims() {
        assert_eq!(trim_incomplete_end(b"ab\xE2\x82"), b"ab");
        assert_eq!(trim_incomplete_end("ab€".as_bytes()), "ab€".as_bytes());
        assert_eq!(trim_incomplete_end(b""), b"");
        assert_eq!(trim_continuation_start(b"\x82\xACab"), b"ab");
        assert_eq!(trim_continuation_start(b"ab"), b"ab");
    }
}
