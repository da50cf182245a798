//! The eval's tasks: small, unambiguous jobs like a user's first tries, each with its seed
//! files and a checker (see docs/eval.md).

use std::path::Path;

use super::checks::{self, Verdict};

/// Where the task's prompt finds the local web page (`{url}` in the prompt).
pub(crate) const URL_PLACEHOLDER: &str = "{url}";

/// The secret only the served page holds (the browser task).
pub(crate) const PAGE_CODE: &str = "PLUM-7342";

/// The page the eval serves on 127.0.0.1 for the browser task.
pub(crate) fn page_html() -> String {
    format!(
        "<!doctype html><html><head><title>Planwright eval page</title></head><body>\
         <h1>Inventory notes</h1><p>This page is served by the eval harness.</p>\
         <p>The secret code is <b id=\"code\">{PAGE_CODE}</b>.</p></body></html>"
    )
}

pub(crate) struct Task {
    pub name: &'static str,
    /// The task as the user types it; `{url}` becomes the local page's address.
    pub prompt: &'static str,
    /// Files put in the workspace before the run: (path, content).
    pub seed: &'static [(&'static str, &'static str)],
    /// Scripted answers to `message_ask_user` (`planwright run --answer`).
    pub answers: &'static [&'static str],
    /// Files of a folder outside the workspace, reachable only through the MCP reference
    /// filesystem server declared as `[mcp_servers.library]` (see `mcp.rs`); empty: no MCP.
    pub library: &'static [(&'static str, &'static str)],
    pub check: fn(&Path) -> Verdict,
}

const REPORT_SH: &str = "#!/bin/sh\n\
set -e\n\
n=$(cat input.txt)\n\
echo \"report: $((n * 2))\" > report.txt\n\
echo done\n";

const CONFIG_JSON: &str = "{\n  \"name\": \"planwright\",\n  \"version\": \"0.3.1\",\n  \
\"settings\": {\"port\": 8080, \"debug\": false, \"workers\": 3}\n}\n";

const DATA_CSV: &str = "id,name,qty\n1,apple,3\n2,pear,5\n3,plum,2\n4,fig,7\n5,kiwi,1\n6,lime,4\n";

pub(crate) const TASKS: &[Task] = &[
    Task {
        name: "hello",
        prompt: "Write hello.txt containing 'hello from planwright' with the shell tool, then \
                 read it back and report its content",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "hello.txt", "hello from planwright"),
    },
    Task {
        name: "primes",
        prompt: "Write the prime numbers below 20 into primes.txt, one per line.",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::items_are(
                ws,
                "primes.txt",
                &["2", "3", "5", "7", "11", "13", "17", "19"],
            )
        },
    },
    Task {
        name: "sum",
        prompt: "The files a.txt and b.txt each hold one number. Write the sum of the two \
                 numbers into sum.txt.",
        seed: &[("a.txt", "4\n"), ("b.txt", "5\n")],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "sum.txt", 9.0),
    },
    Task {
        name: "edit",
        prompt: "In settings.txt, replace the word red with green. Leave everything else in \
                 the file unchanged.",
        seed: &[("settings.txt", "colour=red\nsize=large\n")],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "settings.txt", "colour=green\nsize=large"),
    },
    Task {
        name: "csv_lines",
        prompt: "Count how many lines data.csv has (the header line included) and write just \
                 that number into count.txt.",
        seed: &[("data.csv", DATA_CSV)],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "count.txt", 7.0),
    },
    Task {
        name: "sort_upper",
        prompt: "Read names.txt, sort the names alphabetically, convert them to upper case and \
                 write them into out.txt, one name per line.",
        seed: &[("names.txt", "charlie\nalice\nbob\n")],
        answers: &[],
        library: &[],
        check: |ws| checks::lines_are(ws, "out.txt", &["ALICE", "BOB", "CHARLIE"]),
    },
    Task {
        name: "two_steps",
        prompt: "First create numbers.txt containing the whole numbers from 1 to 10, one per \
                 line. Then compute the sum of the numbers in numbers.txt and write it into \
                 total.txt.",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::items_are(
                ws,
                "numbers.txt",
                &["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"],
            )?;
            checks::number_is(ws, "total.txt", 55.0)
        },
    },
    Task {
        name: "python",
        prompt: "Write a Python script squares.py that prints the squares of the numbers 1 to \
                 5, one per line. Run it with python3 and save its output into squares.txt.",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::contains(ws, "squares.py", "print")?;
            checks::lines_are(ws, "squares.txt", &["1", "4", "9", "16", "25"])
        },
    },
    Task {
        name: "recover",
        prompt: "Run the script report.sh with `sh report.sh`. If it fails, find out why, fix \
                 the cause (the script reads the number 21 from input.txt) and run it again \
                 so that it writes report.txt.",
        seed: &[("report.sh", REPORT_SH)],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::number_is(ws, "input.txt", 21.0)?;
            checks::text_is(ws, "report.txt", "report: 42")
        },
    },
    Task {
        name: "browser",
        prompt: "Open the web page {url} in the browser, find the secret code written on it \
                 and write just the code into code.txt.",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "code.txt", PAGE_CODE),
    },
    Task {
        name: "ask_user",
        prompt: "Ask me which city I live in, then write my answer into city.txt.",
        seed: &[],
        answers: &["Lisbon"],
        library: &[],
        check: |ws| checks::text_is(ws, "city.txt", "Lisbon"),
    },
    Task {
        name: "json_field",
        prompt: "Read config.json and write the value of its settings.port field into \
                 port.txt.",
        seed: &[("config.json", CONFIG_JSON)],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "port.txt", 8080.0),
    },
    Task {
        name: "folder",
        prompt: "Create a folder named notes and in it a file todo.md whose first line is \
                 '# Todo' and whose second line is '- buy milk'.",
        seed: &[],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::first_line_is(ws, "notes/todo.md", "# Todo")?;
            checks::contains(ws, "notes/todo.md", "- buy milk")
        },
    },
    Task {
        name: "mcp_library",
        prompt: "The MCP server named library holds a note called code.txt. Read that note \
                 with the library server's tools and write the code it contains into \
                 answer.txt in the workspace.",
        seed: &[],
        answers: &[],
        library: &[("code.txt", "The code is TEAL-5816.\n")],
        check: |ws| checks::contains(ws, "answer.txt", LIBRARY_CODE),
    },
];

/// The code only the MCP server's folder holds (the `mcp_library` task).
pub(crate) const LIBRARY_CODE: &str = "TEAL-5816";

/// The tasks named in `names` (all when empty), or which name is unknown.
pub(crate) fn select(names: &[String]) -> Result<Vec<&'static Task>, String> {
    if names.is_empty() {
        return Ok(TASKS.iter().collect());
    }
    names
        .iter()
        .map(|n| {
            TASKS.iter().find(|t| t.name == n).ok_or_else(|| {
                let known: Vec<&str> = TASKS.iter().map(|t| t.name).collect();
                format!("unknown task '{n}' (tasks: {})", known.join(", "))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn there_are_at_least_twelve_uniquely_named_tasks() {
        assert!(TASKS.len() >= 12);
        let mut names: Vec<&str> = TASKS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TASKS.len());
        assert!(TASKS.iter().any(|t| t.prompt.contains(URL_PLACEHOLDER)));
        assert!(TASKS.iter().any(|t| !t.answers.is_empty()));
    }

    #[test]
    fn select_keeps_the_order_asked_and_names_unknown_tasks() {
        let picked = select(&["sum".to_string(), "hello".to_string()]).expect("known");
        let names: Vec<&str> = picked.iter().map(|t| t.name).collect();
        assert_eq!(names, ["sum", "hello"]);
        let err = select(&["nope".to_string()]).err().expect("unknown");
        assert!(
            err.contains("unknown task 'nope'") && err.contains("hello"),
            "{err}"
        );
    }

    /// Each checker fails on the untouched seed (the task needs doing) and passes on a
    /// workspace where it was done right.
    #[test]
    fn every_checker_fails_on_the_seed_and_passes_on_a_right_answer() {
        let done: &[(&str, &[(&str, &str)])] = &[
            ("hello", &[("hello.txt", "hello from planwright\n")]),
            ("primes", &[("primes.txt", "2\n3\n5\n7\n11\n13\n17\n19\n")]),
            ("sum", &[("sum.txt", "9\n")]),
            ("edit", &[("settings.txt", "colour=green\nsize=large\n")]),
            ("csv_lines", &[("count.txt", "7\n")]),
            ("sort_upper", &[("out.txt", "ALICE\nBOB\nCHARLIE\n")]),
            (
                "two_steps",
                &[
                    ("numbers.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"),
                    ("total.txt", "55"),
                ],
            ),
            (
                "python",
                &[
                    ("squares.py", "for i in range(1, 6):\n    print(i * i)\n"),
                    ("squares.txt", "1\n4\n9\n16\n25\n"),
                ],
            ),
            (
                "recover",
                &[("input.txt", "21\n"), ("report.txt", "report: 42\n")],
            ),
            ("browser", &[("code.txt", "PLUM-7342\n")]),
            ("ask_user", &[("city.txt", "Lisbon\n")]),
            ("json_field", &[("port.txt", "8080\n")]),
            ("folder", &[("notes/todo.md", "# Todo\n- buy milk\n")]),
            ("mcp_library", &[("answer.txt", "TEAL-5816\n")]),
        ];
        assert_eq!(done.len(), TASKS.len());
        for task in TASKS {
            let ws = std::env::temp_dir().join(format!(
                "xtask-tasks-{}-{}",
                std::process::id(),
                task.name
            ));
            let _ = std::fs::remove_dir_all(&ws);
            std::fs::create_dir_all(&ws).expect("ws");
            for (file, text) in task.seed {
                std::fs::write(ws.join(file), text).expect("seed");
            }
            assert!((task.check)(&ws).is_err(), "{} passes untouched", task.name);
            let (_, files) = done
                .iter()
                .find(|(n, _)| *n == task.name)
                .expect("a right answer for every task");
            for (file, text) in *files {
                let path = ws.join(file);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("parent");
                }
                std::fs::write(path, text).expect("answer");
            }
            assert_eq!((task.check)(&ws), Ok(()), "{}", task.name);
            let _ = std::fs::remove_dir_all(&ws);
        }
    }
}
