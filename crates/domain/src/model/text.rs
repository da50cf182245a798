//! Cutting long texts to size for a model: by characters (prompts) or by bytes keeping head
//! and tail (tool output).

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn truncate_chars(s: &str, max: usize) -> String {
    let count = s.chars().count();
    if count <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… [{} more characters cut]", count - max)
}

/// Cuts `s` to about `max` bytes, keeping the head and the tail and saying what was cut.
pub fn truncate_bytes(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let head_len = floor_char_boundary(s, max * 2 / 3);
    let tail_start = ceil_char_boundary(s, s.len() - (max / 3));
    let cut = tail_start - head_len;
    format!(
        "{}\n[... {cut} bytes cut ...]\n{}",
        &s[..head_len],
        &s[tail_start..]
    )
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_char_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncation_keeps_head_and_tail_on_char_boundaries() {
        let s = "é".repeat(100);
        let t = truncate_bytes(&s, 30);
        assert!(t.contains("bytes cut"));
        assert!(t.starts_with('é'));
        assert!(t.ends_with('é'));
        assert_eq!(truncate_bytes("short", 30), "short");
    }
}
