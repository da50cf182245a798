//! The cassette reader against arbitrary files: whatever a cassette holds (hand-edited,
//! truncated, another format), opening it answers with a cassette or a clear error and
//! never panics.
#![allow(clippy::unwrap_used)]

use adapter_replay::ReplayLlm;
use proptest::prelude::*;

/// Lines that look like a cassette's: a header, entries, broken JSON, blank lines.
fn arb_line() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(r#"{"cassette":1,"model":"m"}"#.to_string()),
        Just(r#"{"cassette":99}"#.to_string()),
        Just(r#"{"seq":1,"request":{"messages":[]},"response":{"content":"hi"}}"#.to_string()),
        Just(r#"{"seq":2,"request":{},"error":{"kind":"transient","message":"x"}}"#.to_string()),
        Just(r#"{"seq":"one"}"#.to_string()),
        Just(String::new()),
        "[ -~]{0,60}",
        "\\PC{0,20}",
    ]
}

proptest! {
    #[test]
    fn fuzz_any_cassette_file_opens_or_errors(lines in prop::collection::vec(arb_line(), 0..8)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        if let Err(e) = ReplayLlm::open(&path) {
            prop_assert!(!e.to_string().is_empty());
        }
    }

    #[test]
    fn fuzz_any_bytes_open_or_error(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        std::fs::write(&path, bytes).unwrap();
        let _ = ReplayLlm::open(&path);
    }
}
