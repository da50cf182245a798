//! Numbers in text, for "compute, don't guess" (docs/direct.md, "Computed numbers"): the
//! numbers a run has seen (the task, the user's answers, tool outputs), whether a file's
//! whole content is one number, and whether it is an arithmetic expression left unworked
//! (`4 + 5`). Pure: no I/O.

/// `9`, `9.0` and `09` are the same number: integers without leading zeros or a fraction,
/// other values as Rust prints an `f64`. Signs are dropped (a `-` is as often a dash).
pub fn canonical(number: &str) -> Option<String> {
    let t = number.trim().trim_start_matches(['-', '+']);
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let v: f64 = t.parse().ok()?;
    if v.fract() == 0.0 && v < 1e15 {
        // An integer value below 2^53: exact as i64.
        #[allow(clippy::cast_possible_truncation)]
        return Some((v as i64).to_string());
    }
    Some(v.to_string())
}

/// Every number written in `text`, canonical (`of 7]` gives `7`; `10.0.0.7` gives `10`,
/// `0` and `7` as well as nothing for the whole address).
pub fn numbers_in(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for token in text.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
        let token = token.trim_matches('.');
        if token.is_empty() {
            continue;
        }
        if token.matches('.').count() <= 1 {
            found.extend(canonical(token));
        }
        if token.contains('.') {
            found.extend(token.split('.').filter_map(canonical));
        }
    }
    found
}

/// The number a file's whole content is (`"100\n"` → `100`), canonical; `None` for
/// anything else.
pub fn lone_number(content: &str) -> Option<String> {
    let t = content.trim();
    if t.is_empty() || t.len() > 40 {
        return None;
    }
    canonical(t)
}

/// Whether `content` is an arithmetic expression of numbers and nothing else (`4 + 5`,
/// `1+2+3`, `10 * 3 =`): a sum written down instead of worked out.
pub fn is_unworked_expression(content: &str) -> bool {
    let t = content.trim();
    if t.is_empty() || t.len() > 200 || t.lines().count() > 1 {
        return false;
    }
    let allowed = |c: char| c.is_ascii_digit() || " .+-*/x×()=".contains(c);
    if !t.chars().all(allowed) {
        return false;
    }
    let operators = t
        .trim_start_matches(['-', '+'])
        .chars()
        .filter(|c| "+-*/x×".contains(*c))
        .count();
    // `2026-11-26`, `1-10`: a date or a range, not a subtraction.
    let dashes_only = !t.contains(' ') && !t.chars().any(|c| "+*/x×".contains(c));
    operators >= 1 && !dashes_only && numbers_in(t).len() >= 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_compared_by_value() {
        assert_eq!(canonical("09"), Some("9".into()));
        assert_eq!(canonical("9.0"), Some("9".into()));
        assert_eq!(canonical("-503"), Some("503".into()));
        assert_eq!(canonical("2.5"), Some("2.5".into()));
        assert_eq!(canonical("abc"), None);
        assert_eq!(canonical("1.2.3"), None);
    }

    #[test]
    fn numbers_are_found_in_tool_output() {
        assert_eq!(
            numbers_in("   1│ id,name,qty\n[showing lines 1-1 of 7]"),
            ["1", "1", "1", "7"]
        );
        assert_eq!(numbers_in("total: 503."), ["503"]);
        assert_eq!(numbers_in("10.0.0.7 GET"), ["10", "0", "0", "7"]);
        assert_eq!(numbers_in("v2.5"), ["2.5", "2", "5"]);
    }

    #[test]
    fn a_lone_number_is_the_whole_content() {
        assert_eq!(lone_number("100\n"), Some("100".into()));
        assert_eq!(lone_number(" 8080 "), Some("8080".into()));
        assert_eq!(lone_number("Day 1"), None);
        assert_eq!(lone_number("1\n2"), None);
        assert_eq!(lone_number("10.0.0.7"), None);
        assert_eq!(lone_number(""), None);
    }

    #[test]
    fn expressions_left_unworked_are_recognised() {
        for e in ["4 + 5", "4+5", "1 + 2 + 3 =", "10 * 3", "(2+3)*4", "4 x 5"] {
            assert!(is_unworked_expression(e), "{e}");
        }
        for not in ["9", "-9", "2026-11-26", "1\n+2", "a + b", "10.0.0.7", "-5"] {
            assert!(!is_unworked_expression(not), "{not}");
        }
    }
}
