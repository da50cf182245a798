//! The file tools on real temporary workspaces.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;

use adapter_tools_shell::{FileListTool, FileReadTool, FileStrReplaceTool, FileWriteTool};
use common::ctx;
use domain::ports::Tool;
use domain::ToolError;
use serde_json::json;

fn five_lines(dir: &std::path::Path) {
    fs::write(dir.join("f.txt"), "one\ntwo\nthree\nfour\nfive\n").unwrap();
}

#[tokio::test]
async fn write_creates_folders_and_reports_bytes_and_attachment() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let out = FileWriteTool::new()
        .execute(json!({"path": "a/b/c.txt", "content": "hello"}), &ctx)
        .await
        .unwrap();
    assert!(!out.is_error);
    assert_eq!(out.content, "wrote (new file) 5 bytes to 'a/b/c.txt'");
    assert_eq!(out.attachments, ["a/b/c.txt"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "hello"
    );

    let out = FileWriteTool::new()
        .execute(
            json!({"path": "a/b/c.txt", "content": " world", "append": true}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.content, "appended 6 bytes to 'a/b/c.txt'");
    assert_eq!(
        fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "hello world"
    );

    let out = FileWriteTool::new()
        .execute(json!({"path": "a/b/c.txt", "content": "new"}), &ctx)
        .await
        .unwrap();
    assert!(out.content.contains("replacing"), "{}", out.content);
    assert_eq!(
        fs::read_to_string(dir.path().join("a/b/c.txt")).unwrap(),
        "new"
    );
}

#[tokio::test]
async fn write_refuses_folders() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("d")).unwrap();
    let err = FileWriteTool::new()
        .execute(json!({"path": "d", "content": "x"}), &ctx(dir.path()))
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::Failed(m) if m.contains("is a folder")));
}

#[tokio::test]
async fn read_whole_file_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    five_lines(dir.path());
    let long: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    fs::write(dir.path().join("long.txt"), long).unwrap();
    let ctx = ctx(dir.path());
    let read = FileReadTool::new();

    let out = read.execute(json!({"path": "f.txt"}), &ctx).await.unwrap();
    assert_eq!(out.content, "one\ntwo\nthree\nfour\nfive\n");

    // Lines picked from a short file: the whole file, as it is (a small model read line 1
    // of a 3-line file again and again).
    for range in [
        json!({"path": "f.txt", "start_line": 2, "end_line": 3}),
        json!({"path": "f.txt", "end_line": 1}),
        json!({"path": "f.txt", "start_line": 5}),
    ] {
        let out = read.execute(range, &ctx).await.unwrap();
        assert_eq!(out.content, "one\ntwo\nthree\nfour\nfive\n");
    }

    let out = read
        .execute(
            json!({"path": "long.txt", "start_line": 2, "end_line": 3}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "   2│ line 2\n   3│ line 3\n[showing lines 2-3 of 50]"
    );

    let out = read
        .execute(
            json!({"path": "long.txt", "start_line": 49, "end_line": 400}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "  49│ line 49\n  50│ line 50\n[showing lines 49-50 of 50]"
    );

    let out = read
        .execute(json!({"path": "long.txt", "end_line": 1}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "   1│ line 1\n[showing lines 1-1 of 50]");
}

#[tokio::test]
async fn read_out_of_range_and_bad_ranges() {
    let dir = tempfile::tempdir().unwrap();
    five_lines(dir.path());
    let long: String = (1..=50).map(|n| format!("line {n}\n")).collect();
    fs::write(dir.path().join("long.txt"), long).unwrap();
    let ctx = ctx(dir.path());
    let read = FileReadTool::new();
    // Backwards lines of a short file: the whole file (a small model gave up on this
    // error).
    let out = read
        .execute(
            json!({"path": "f.txt", "start_line": 3, "end_line": 2}),
            &ctx,
        )
        .await
        .unwrap();
    assert_eq!(out.content, "one\ntwo\nthree\nfour\nfive\n");
    let at_least_1 = "must be a whole number of at least 1, got";
    let cases = [
        (
            json!({"path": "long.txt", "start_line": 60}),
            "file_read: `start_line` 60 is past the end of 'long.txt', which has 50 lines"
                .to_string(),
        ),
        (
            json!({"path": "f.txt", "start_line": 0}),
            format!("file_read: `start_line` {at_least_1} 0"),
        ),
        (
            json!({"path": "f.txt", "end_line": 0}),
            format!("file_read: `end_line` {at_least_1} 0"),
        ),
        (
            json!({"path": "long.txt", "start_line": 3, "end_line": 2}),
            "file_read: `end_line` 2 is before `start_line` 3".to_string(),
        ),
        (
            json!({"path": "f.txt", "start_line": "two"}),
            format!("`start_line` {at_least_1} \"two\""),
        ),
        (
            json!({"path": "f.txt", "start_line": -2}),
            format!("`start_line` {at_least_1} -2"),
        ),
        (
            json!({"path": "f.txt", "end_line": 2.5}),
            format!("`end_line` {at_least_1} 2.5"),
        ),
        (
            json!({"path": "long.txt", "start_line": 3_000_000_000_000_000_u64}),
            "past the end of 'long.txt', which has 50 lines".to_string(),
        ),
        (
            json!({"path": "", "start_line": 1}),
            "file_read: `path` must not be empty".to_string(),
        ),
        (json!({"start_line": 1}), "missing field `path`".to_string()),
    ];
    for (args, expected) in cases {
        let err = read.execute(args.clone(), &ctx).await.unwrap_err();
        assert!(
            matches!(&err, ToolError::InvalidArguments(m) if m.contains(&expected)),
            "{args}: {err:?}"
        );
    }
    // A quoted number is read as the number (a short file is then shown whole).
    let out = read
        .execute(json!({"path": "f.txt", "start_line": "5"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "one\ntwo\nthree\nfour\nfive\n");
    // Past the end of a short file: the file (a small model asked for line
    // 1000 of a 5-line file and gave up on the error).
    let out = read
        .execute(json!({"path": "f.txt", "start_line": "1000"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "one\ntwo\nthree\nfour\nfive\n");
}

#[tokio::test]
async fn read_numbers_only_long_files_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("nums.txt"), "4\n5\n6\n").unwrap();
    let long: String = (1..=41).map(|i| format!("row {i}\n")).collect();
    fs::write(dir.path().join("long.txt"), long).unwrap();
    let ctx = ctx(dir.path());
    let read = FileReadTool::new();
    // A short file is its content: no number a model could take for data.
    let out = read
        .execute(json!({"path": "nums.txt"}), &ctx)
        .await
        .unwrap();
    assert_eq!(out.content, "4\n5\n6\n");
    // A long file gets `N│ ` before each line.
    let out = read
        .execute(json!({"path": "long.txt"}), &ctx)
        .await
        .unwrap();
    assert!(
        out.content.starts_with("   1│ row 1\n   2│ row 2\n"),
        "{}",
        out.content
    );
    assert!(out.content.ends_with("  41│ row 41\n"), "{}", out.content);
    assert!(!out.content.contains('\t'));
    assert!(read.description().contains("N│"), "{}", read.description());
}

#[tokio::test]
async fn read_caps_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (1..=10_000).map(|i| format!("line number {i}\n")).collect();
    fs::write(dir.path().join("big.txt"), text).unwrap();
    let out = FileReadTool::new()
        .with_max_bytes(1000)
        .execute(json!({"path": "big.txt"}), &ctx(dir.path()))
        .await
        .unwrap();
    assert!(out.content.len() < 1200);
    assert!(out
        .content
        .contains("of 10000; output limit reached, call file_read with start_line="));
}

#[tokio::test]
async fn read_refuses_binary_folders_and_missing_files() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("bin"), b"\x7fELF\0\0\x01\x02").unwrap();
    fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    fs::create_dir(dir.path().join("sub")).unwrap();
    let ctx = ctx(dir.path());
    let read = FileReadTool::new();
    let cases = [
        ("bin", "binary file (8 bytes)"),
        ("latin1.txt", "binary file"),
        ("sub", "is a folder"),
        ("missing.txt", "does not exist"),
    ];
    for (path, expected) in cases {
        let err = read.execute(json!({"path": path}), &ctx).await.unwrap_err();
        assert!(
            matches!(&err, ToolError::Failed(m) if m.contains(expected)),
            "{path}: {err:?}"
        );
    }
}

#[tokio::test]
async fn str_replace_needs_exactly_one_occurrence() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("code.rs");
    fs::write(&path, "fn a() {}\nfn b() {}\nlet x = 1;\n").unwrap();
    let ctx = ctx(dir.path());
    let tool = FileStrReplaceTool::new();

    let err = tool
        .execute(
            json!({"path": "code.rs", "old": "fn c", "new": "fn d"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("not found")),
        "{err:?}"
    );

    let err = tool
        .execute(
            json!({"path": "code.rs", "old": "() {}", "new": "()"}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("occurs 2 times") && m.contains("lines 1, 2") && m.contains("replace_all")),
        "{err:?}"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "fn a() {}\nfn b() {}\nlet x = 1;\n"
    );

    let out = tool
        .execute(
            json!({"path": "code.rs", "old": "fn b() {}", "new": "fn b() { todo!() }"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!out.is_error);
    assert!(
        out.content
            .starts_with("replaced in 'code.rs': 1 occurrence at line 2"),
        "{}",
        out.content
    );
    assert_eq!(out.attachments, ["code.rs"]);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "fn a() {}\nfn b() { todo!() }\nlet x = 1;\n"
    );
}

#[tokio::test]
async fn str_replace_argument_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let tool = FileStrReplaceTool::new();
    let err = tool
        .execute(json!({"path": "x", "old": "", "new": "y"}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(m) if m.contains("must not be empty")));
    let err = tool
        .execute(json!({"path": "x", "old": "a"}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(m) if m.contains("`new` is missing")));
    let err = tool
        .execute(json!({"path": "missing", "old": "a", "new": "b"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("does not exist") && m.contains("use file_write")),
        "{err:?}"
    );
    let err = tool
        .execute(json!({"path": " ", "old": "a", "new": "b"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid arguments: file_str_replace: `path` must not be empty"
    );
}

#[tokio::test]
async fn write_argument_errors() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ctx(dir.path());
    let cases = [
        (json!({"path": "a"}), "missing field `content`"),
        (json!({"path": "a", "content": 1}), "invalid type"),
        (
            json!({"path": "a", "content": "x", "append": "yes"}),
            "invalid type",
        ),
        (json!({"path": ["a"], "content": "x"}), "invalid type"),
        (
            json!({"path": "", "content": "x"}),
            "file_write: `path` must not be empty",
        ),
    ];
    for (args, expected) in cases {
        let err = FileWriteTool::new()
            .execute(args.clone(), &ctx)
            .await
            .unwrap_err();
        assert!(
            matches!(&err, ToolError::InvalidArguments(m) if m.contains(expected)),
            "{args}: {err:?}"
        );
    }
}

#[tokio::test]
async fn list_is_sorted_recursive_and_depth_limited() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("b/c/d/e")).unwrap();
    fs::write(root.join("b/c/d/e/deep.txt"), "x").unwrap();
    fs::write(root.join("b/c/file.txt"), "12345").unwrap();
    fs::write(root.join("a.txt"), "abc").unwrap();
    fs::create_dir(root.join("empty")).unwrap();
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();

    let out = FileListTool::new()
        .execute(json!({}), &ctx(root))
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "Contents of '.' (up to 3 levels deep):\n\
         a.txt (3 bytes)\n\
         b/\n\
         b/c/\n\
         b/c/d/ (not expanded)\n\
         b/c/file.txt (5 bytes)\n\
         empty/\n\
         link -> a.txt"
    );

    let out = FileListTool::new()
        .execute(json!({"path": "b/c"}), &ctx(root))
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "Contents of 'b/c' (up to 3 levels deep):\n\
         d/\n\
         d/e/\n\
         d/e/deep.txt (1 bytes)\n\
         file.txt (5 bytes)"
    );

    let out = FileListTool::new()
        .execute(json!({"path": "empty"}), &ctx(root))
        .await
        .unwrap();
    assert!(out.content.ends_with("(empty folder)"));
}

#[tokio::test]
async fn list_is_truncated_at_the_entry_limit() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..600 {
        fs::write(dir.path().join(format!("f{i:03}.txt")), "").unwrap();
    }
    let out = FileListTool::new()
        .execute(json!({"path": "."}), &ctx(dir.path()))
        .await
        .unwrap();
    let lines: Vec<&str> = out.content.lines().collect();
    assert_eq!(lines.len(), 1 + 500 + 1);
    assert_eq!(lines[1], "f000.txt (0 bytes)");
    assert_eq!(lines[500], "f499.txt (0 bytes)");
    assert_eq!(
        lines[501],
        "[truncated after 500 entries; list a subfolder to see more]"
    );

    let out = FileListTool::new()
        .with_limits(1, 3)
        .execute(json!({}), &ctx(dir.path()))
        .await
        .unwrap();
    assert_eq!(out.content.lines().count(), 5);
}

#[tokio::test]
async fn list_errors() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("f"), "charlie\nalice\n").unwrap();
    fs::write(dir.path().join("big"), "x".repeat(5000)).unwrap();
    fs::write(dir.path().join("bin"), b"a\0b").unwrap();
    let ctx = ctx(dir.path());
    // A file listed by mistake: said so, with its content when it is short text.
    let out = FileListTool::new()
        .execute(json!({"path": "f"}), &ctx)
        .await
        .unwrap();
    assert_eq!(
        out.content,
        "'f' is a file (14 bytes), not a folder. Its content:\ncharlie\nalice\n"
    );
    for (name, size) in [("big", 5000), ("bin", 3)] {
        let out = FileListTool::new()
            .execute(json!({"path": name}), &ctx)
            .await
            .unwrap();
        assert_eq!(
            out.content,
            format!("'{name}' is a file ({size} bytes), not a folder; use file_read to read it")
        );
    }
    let err = FileListTool::new()
        .execute(json!({"path": "nope"}), &ctx)
        .await
        .unwrap_err();
    // The error shows what the nearest folder that exists holds (a 0.5B model listed
    // "workspace" four times).
    let ToolError::Failed(m) = err else {
        panic!("{err:?}")
    };
    assert_eq!(
        m,
        "cannot list 'nope': it does not exist. The nearest folder that does, '.' (up to 1 \
         levels deep):\nbig (5000 bytes)\nbin (3 bytes)\nf (14 bytes)"
    );
    fs::create_dir(dir.path().join("sub")).unwrap();
    let err = FileListTool::new()
        .execute(json!({"path": "sub/x/y"}), &ctx)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.starts_with("cannot list 'sub/x/y': it does not exist. The nearest folder that does, 'sub' (up to 1 levels deep):\n(empty folder)")),
        "{err:?}"
    );
    let err = FileListTool::new()
        .execute(json!({"path": 3}), &ctx)
        .await
        .unwrap_err();
    assert!(matches!(err, ToolError::InvalidArguments(_)));
    // An empty path lists the workspace, like no path.
    let out = FileListTool::new()
        .execute(json!({"path": ""}), &ctx)
        .await
        .unwrap();
    assert!(
        out.content.starts_with("Contents of '.'"),
        "{}",
        out.content
    );
}

/// `replace_all` replaces every occurrence; `edits` makes several edits in one call, all or
/// none (a missing `old` in the second leaves the file as it was).
#[tokio::test]
async fn str_replace_replaces_all_and_edits_several_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    fs::write(&path, "colour and colour\nfavourite colour\n").unwrap();
    let ctx = ctx(dir.path());
    let tool = FileStrReplaceTool::new();
    let out = tool
        .execute(
            json!({"path": "notes.txt", "old": "colour", "new": "color", "replace_all": true}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(out.content.contains("3 occurrences"), "{}", out.content);
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "color and color\nfavourite color\n"
    );
    let err = tool
        .execute(
            json!({"path": "notes.txt", "edits": [
                {"old": "favourite", "new": "favorite"},
                {"old": "missing", "new": "x"}
            ]}),
            &ctx,
        )
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ToolError::Failed(m) if m.contains("not found")),
        "{err:?}"
    );
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "color and color\nfavourite color\n"
    );
    tool.execute(
        json!({"path": "notes.txt", "edits": [
            {"old": "favourite", "new": "favorite"},
            {"old": "color", "new": "hue", "replace_all": true}
        ]}),
        &ctx,
    )
    .await
    .unwrap();
    assert_eq!(
        fs::read_to_string(&path).unwrap(),
        "hue and hue\nfavorite hue\n"
    );
}
