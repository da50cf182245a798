//! `code_run` with real python3 and bash (docs/code-actions.md): a program runs in the
//! workspace, its exit code, output and the files it created, changed or deleted come back,
//! and `final_answer` finishes it with the result it computed.
#![allow(clippy::unwrap_used)]

mod common;

use std::fs;

use adapter_tools_shell::{CodeRunTool, ShellExecTool};
use common::ctx;
use domain::ports::{ProgramCall, Tool};
use domain::tools::builtin::ASK_USER;
use domain::ToolError;
use serde_json::{json, Value};

fn tool() -> CodeRunTool {
    CodeRunTool::new(ShellExecTool::default())
}

#[tokio::test]
async fn a_python_program_reads_writes_and_answers() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("data.csv"), "name,n\na,2\nb,5\n").unwrap();
    fs::write(dir.path().join("old.txt"), "x").unwrap();
    let code = "import csv, os\n\
                rows = list(csv.DictReader(open('data.csv')))\n\
                total = sum(int(r['n']) for r in rows)\n\
                open('total.txt', 'w').write(f'{total}\\n')\n\
                os.remove('old.txt')\n\
                print('line one\\nline two')\n\
                final_answer(f'total is {total}')\n\
                print('never printed')\n";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code, "changes": ["old.txt"]}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.final_answer.as_deref(), Some("total is 7"));
    assert_eq!(out.stdout.as_deref(), Some("line one\nline two"));
    assert!(out.content.contains("exit code: 0"), "{}", out.content);
    assert!(out.content.contains("total.txt"), "{}", out.content);
    assert!(out.content.contains("old.txt"), "{}", out.content);
    assert!(!out.content.contains("never printed"), "{}", out.content);
    assert_eq!(
        fs::read_to_string(dir.path().join("total.txt")).unwrap(),
        "7\n"
    );
    assert!(!dir.path().join("old.txt").exists());
}

/// Backslashes and quotes arrive as written: the program is never a JSON string the model
/// escaped, nor re-quoted for the shell.
#[tokio::test]
async fn escapes_quotes_and_a_heredoc_marker_survive() {
    let dir = tempfile::tempdir().unwrap();
    let code = "s = 'a\\nb'\nq = \"it's\"\nm = '''\nPLANWRIGHT_PROGRAM_END\n'''\n\
                open('out.txt', 'w').write(s + '|' + q + '|' + str(len(m.strip())))\n";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "a\nb|it's|22"
    );
}

/// The standard modules a small program uses need no import.
#[tokio::test]
async fn common_modules_need_no_import() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("c.json"), r#"{"a": {"b": 3}}"#).unwrap();
    let out = tool()
        .execute(
            json!({"language": "python", "code": "final_answer(json.load(open('c.json'))['a']['b'] + math.floor(0.5))"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.final_answer.as_deref(), Some("3"));
}

/// `__file__` names a file of the workspace: a program that finds its folder with
/// `os.path.dirname(__file__)` reads the workspace's files (no `NameError`).
#[tokio::test]
async fn a_program_finds_its_folder_through_its_file() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("n.txt"), "41").unwrap();
    let code = "here = os.path.dirname(os.path.abspath(__file__))\n\
                final_answer(int(open(os.path.join(here, 'n.txt')).read()) + 1)";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.final_answer.as_deref(), Some("42"));
    assert!(
        !dir.path().join("program.py").exists(),
        "nothing is written"
    );
}

/// The program is the `__main__` module: `unittest.main()` finds the tests it defines (it
/// ran none when the program had a namespace of its own), and what it defines pickles.
#[tokio::test]
async fn the_program_is_the_main_module() {
    let dir = tempfile::tempdir().unwrap();
    let code = "import unittest, pickle\n\
                class Point:\n    pass\n\
                pickle.dumps(Point())\n\
                class TestSum(unittest.TestCase):\n    \
                def test_sum(self):\n        self.assertEqual(sum([1, 2]), 3)\n\
                if __name__ == '__main__':\n    unittest.main()\n";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert!(out.content.contains("Ran 1 test"), "{}", out.content);
}

/// Writing into a folder that does not exist yet creates it (as `file_write` does), through
/// `open`, `pathlib` and a library that opens files itself; reading a missing file still
/// fails, and nothing is created for it.
#[tokio::test]
async fn writes_create_their_folders() {
    let dir = tempfile::tempdir().unwrap();
    let code = "open('report/a/rows.txt', 'w').write('3')\n\
                pathlib.Path('report/b.txt').write_text('4')\n\
                with open('logs/x.log', mode='a') as f:\n    f.write('5')\n\
                csv.writer(open('out/t.csv', 'w', newline='')).writerow([1, 2])\n\
                try:\n    open('missing/in.txt')\nexcept FileNotFoundError as e:\n    print(e)\n";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    let said = out.stdout.clone().unwrap_or_default();
    assert!(
        said.contains("the workspace has none by that name") && said.contains("missing/in.txt"),
        "{said}"
    );
    let read = |p: &str| fs::read_to_string(dir.path().join(p)).unwrap();
    assert_eq!(read("report/a/rows.txt"), "3");
    assert_eq!(read("report/b.txt"), "4");
    assert_eq!(read("logs/x.log"), "5");
    assert_eq!(read("out/t.csv"), "1,2\r\n");
    assert!(!dir.path().join("missing").exists());
}

/// A program that imports a module of the workspace leaves no `__pycache__` behind (it
/// would be a file the run created in the user's folder).
#[tokio::test]
async fn importing_a_workspace_module_leaves_no_bytecode_cache() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("util.py"),
        "def twice(x):\n    return 2 * x\n",
    )
    .unwrap();
    let code = "from util import twice\nfinal_answer(twice(21))";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.final_answer.as_deref(), Some("42"));
    assert!(!dir.path().join("__pycache__").exists(), "{}", out.content);
    assert!(out.attachments.is_empty(), "{:?}", out.attachments);
}

/// `input()` with no result left stops the program at once and names the call (a question
/// to the user); given results (the runtime's `results`, after asking the user), it
/// returns them in order (docs/code-actions.md, "Tools in a program").
#[tokio::test]
async fn input_stops_the_program_with_its_question_then_reads_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let code = "name = input('Which column? ')\nsize = input()\ntry:\n    pass\nfinally:\n    open('late.txt', 'w').write('x')\nfinal_answer(name + size)";
    let run = |results: Value| {
        let args = json!({"language": "python", "code": code, "results": results});
        let path = dir.path().to_path_buf();
        async move { tool().execute(args, &ctx(&path)).await.unwrap() }
    };
    let asked = |q: &str| {
        Some(ProgramCall {
            tool: ASK_USER.into(),
            arguments: json!({ "question": q }),
        })
    };
    let out = run(json!([])).await;
    assert!(out.is_error, "{}", out.content);
    assert_eq!(out.program_call, asked("Which column? "));
    assert_eq!(out.final_answer, None);
    assert!(!out.content.contains("PLANWRIGHT"), "{}", out.content);
    assert!(
        !dir.path().join("late.txt").exists(),
        "nothing ran after input()"
    );
    let out = run(json!([{"ok": true, "value": "price"}])).await;
    assert_eq!(out.program_call, asked(""), "{}", out.content);
    let out = run(json!([{"ok": true, "value": "price"}, {"ok": true, "value": "12"}])).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(out.program_call, None);
    assert_eq!(out.final_answer.as_deref(), Some("price12"));
    assert!(
        out.content.contains("Which column? price"),
        "{}",
        out.content
    );
}

/// A tool the runtime names is a function of the program: called with positional or
/// keyword arguments, it stops the program at the call; given its result it returns it,
/// and a failed result raises an error in the program.
#[tokio::test]
async fn a_tool_function_stops_at_its_call_then_returns_its_result() {
    let dir = tempfile::tempdir().unwrap();
    let code = "page = browser_navigate('http://x/a', wait=True)\nopen('out.txt', 'w').write(page.upper())";
    let functions = json!([{"name": "browser_navigate", "params": ["url", "wait"]}]);
    let run = |results: Value| {
        let args =
            json!({"language": "python", "code": code, "functions": functions, "results": results});
        let path = dir.path().to_path_buf();
        async move { tool().execute(args, &ctx(&path)).await.unwrap() }
    };
    let out = run(json!([])).await;
    assert_eq!(
        out.program_call,
        Some(ProgramCall {
            tool: "browser_navigate".into(),
            arguments: json!({"url": "http://x/a", "wait": true}),
        }),
        "{}",
        out.content
    );
    let out = run(json!([{"ok": true, "value": "code 42"}])).await;
    assert!(!out.is_error, "{}", out.content);
    assert_eq!(
        fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "CODE 42"
    );
    fs::remove_file(dir.path().join("out.txt")).unwrap();
    let out = run(json!([{"ok": false, "value": "no such page"}])).await;
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains("RuntimeError: browser_navigate: no such page"),
        "{}",
        out.content
    );
    // Imported by its name, the function is what is imported and each of its attributes.
    for code in [
        "import browser_navigate\nprint(browser_navigate.open('http://x/b'))",
        "from browser_navigate import fetch\nprint(fetch('http://x/b'))",
        "import browser_navigate as b\nprint(b('http://x/b'))",
    ] {
        let args = json!({"language": "python", "code": code, "functions": functions});
        let out = tool().execute(args, &ctx(dir.path())).await.unwrap();
        assert_eq!(
            out.program_call.map(|c| c.arguments),
            Some(json!({"url": "http://x/b"})),
            "{code}: {}",
            out.content
        );
    }
}

/// A program that changed a file before it asked cannot run again from the start: it is
/// not offered for that, and is told to ask before it writes.
#[tokio::test]
async fn input_after_a_write_is_not_run_again() {
    let dir = tempfile::tempdir().unwrap();
    let code = "open('log.txt', 'a').write('started\\n')\nname = input('Name? ')";
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(out.is_error, "{}", out.content);
    assert_eq!(out.program_call, None);
    assert!(
        out.content.contains("cannot be run again"),
        "{}",
        out.content
    );
}

#[tokio::test]
async fn a_failing_program_says_why_and_gives_no_answer() {
    let dir = tempfile::tempdir().unwrap();
    let out = tool()
        .execute(
            json!({"language": "python", "code": "x = 1\nprint(open('missing.txt').read())\nfinal_answer(x)"}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(out.is_error);
    assert_eq!(out.final_answer, None);
    assert!(out.content.contains("FileNotFoundError"), "{}", out.content);
    assert!(out.content.contains("line 2"), "{}", out.content);
}

#[tokio::test]
async fn bash_programs_answer_in_either_form() {
    let dir = tempfile::tempdir().unwrap();
    for code in [
        "echo hi > a.txt\nfinal_answer \"wrote $(cat a.txt)\"",
        "echo hi > a.txt\nfinal_answer(\"wrote $(cat a.txt)\")",
    ] {
        let out = tool()
            .execute(json!({"language": "bash", "code": code}), &ctx(dir.path()))
            .await
            .unwrap();
        assert!(!out.is_error, "{code}: {}", out.content);
        assert_eq!(out.final_answer.as_deref(), Some("wrote hi"), "{code}");
    }
}

#[tokio::test]
async fn bad_arguments_are_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        json!({"language": "ruby", "code": "puts 1"}),
        json!({"language": "python"}),
        json!({"language": "python", "code": "# only a comment\n"}),
    ] {
        let err = tool().execute(args.clone(), &ctx(dir.path())).await;
        assert!(
            matches!(err, Err(ToolError::InvalidArguments(_))),
            "{args}: {err:?}"
        );
    }
}

/// A module that is not installed: the program is told to use the standard library, and the
/// functions it is given (the step's other tools), by name.
#[tokio::test]
async fn a_missing_module_names_the_functions_the_program_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let code = "import no_such_module_here\nprint(no_such_module_here.get('http://x'))";
    let functions = json!([{"name": "browser_navigate", "params": ["url", "wait"]}]);
    let out = tool()
        .execute(
            json!({"language": "python", "code": code, "functions": functions}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(out.is_error, "{}", out.content);
    assert!(
        out.content
            .contains("no_such_module_here is not installed here")
            && out.content.contains("browser_navigate(url, wait)"),
        "{}",
        out.content
    );
    let out = tool()
        .execute(
            json!({"language": "python", "code": code}),
            &ctx(dir.path()),
        )
        .await
        .unwrap();
    assert!(
        out.content.contains("statistics, ...).") && !out.content.contains("functions"),
        "{}",
        out.content
    );
}
