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
    /// The seeded files the task asks to change (edit, rename, move away); every other
    /// seeded file must be byte for byte as seeded after the run (see `inputs.rs`).
    pub may_change: &'static [&'static str],
    /// The files the checker expects the run to leave (a run that completed with one of
    /// them missing or empty is counted apart).
    pub outputs: &'static [&'static str],
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

const SALES_CSV: &str = "date,region,amount\n2026-01-03,north,120\n2026-01-04,south,75\n\
2026-01-04,north,30\n2026-01-05,east,210\n2026-01-06,south,45\n2026-01-07,east,18\n\
2026-01-08,north,5\n";

const ORDERS_CSV: &str = "order,customer,status\n1001,ana,shipped\n1002,ben,pending\n\
1003,cara,shipped\n1004,dan,cancelled\n1005,eve,shipped\n1006,finn,pending\n\
1007,gus,shipped\n1008,hana,shipped\n";

const APP_JSON: &str =
    "{\n  \"name\": \"shop\",\n  \"database\": {\n    \"host\": \"db.internal\",\n    \
\"port\": 5432,\n    \"credentials\": {\"user\": \"shop_rw\", \"timeout_s\": 30}\n  },\n  \
\"features\": [\"search\", \"cart\", \"wishlist\", \"reviews\"]\n}\n";

const SERVER_LOG: &str = "2026-11-20 10:00:01 INFO server started on port 8080\n\
2026-11-20 10:00:05 INFO GET /index.html 200\n\
2026-11-20 10:01:12 WARN slow response: 1200 ms\n\
2026-11-20 10:02:40 ERROR database timeout after 30 s\n\
2026-11-20 10:03:02 INFO GET /cart 200\n\
2026-11-20 10:04:15 ERROR disk full on /var\n\
2026-11-20 10:05:00 INFO GET /index.html 200\n\
2026-11-20 10:06:33 ERROR database timeout after 30 s\n\
2026-11-20 10:07:10 WARN retrying the database connection\n\
2026-11-20 10:08:00 INFO GET /search?q=tea 200\n\
2026-11-20 10:09:45 ERROR payment service unreachable\n\
2026-11-20 10:10:00 INFO shutting down\n";

const ACCESS_LOG: &str = "\
192.168.1.10 - - [20/Nov/2026:10:00:01 +0000] \"GET / HTTP/1.1\" 200 512\n\
10.0.0.7 - - [20/Nov/2026:10:00:03 +0000] \"GET /about HTTP/1.1\" 200 1024\n\
192.168.1.10 - - [20/Nov/2026:10:00:09 +0000] \"GET /shop HTTP/1.1\" 200 2048\n\
203.0.113.9 - - [20/Nov/2026:10:01:15 +0000] \"GET /login HTTP/1.1\" 401 128\n\
10.0.0.7 - - [20/Nov/2026:10:01:20 +0000] \"POST /cart HTTP/1.1\" 201 64\n\
10.0.0.7 - - [20/Nov/2026:10:02:02 +0000] \"GET /cart HTTP/1.1\" 200 900\n\
192.168.1.10 - - [20/Nov/2026:10:02:30 +0000] \"GET /help HTTP/1.1\" 404 256\n\
10.0.0.7 - - [20/Nov/2026:10:03:41 +0000] \"GET /checkout HTTP/1.1\" 200 700\n\
203.0.113.9 - - [20/Nov/2026:10:04:00 +0000] \"GET /login HTTP/1.1\" 200 128\n";

const DRAFT_TXT: &str = "Meeting moved to Thursday, 3 pm.\nBring the Q3 numbers.\n";

const REPORT1_TXT: &str = "Q1 revenue: 1200\n";

const REPORT2_TXT: &str = "Q2 revenue: 1350\n";

pub(crate) const TASKS: &[Task] = &[
    Task {
        name: "hello",
        prompt: "Write hello.txt containing 'hello from planwright' with the shell tool, then \
                 read it back and report its content",
        seed: &[],
        may_change: &[],
        outputs: &["hello.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "hello.txt", "hello from planwright"),
    },
    Task {
        name: "primes",
        prompt: "Write the prime numbers below 20 into primes.txt, one per line.",
        seed: &[],
        may_change: &[],
        outputs: &["primes.txt"],
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
        may_change: &[],
        outputs: &["sum.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "sum.txt", 9.0),
    },
    Task {
        name: "edit",
        prompt: "In settings.txt, replace the word red with green. Leave everything else in \
                 the file unchanged.",
        seed: &[("settings.txt", "colour=red\nsize=large\n")],
        may_change: &["settings.txt"],
        outputs: &["settings.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "settings.txt", "colour=green\nsize=large"),
    },
    Task {
        name: "csv_lines",
        prompt: "Count how many lines data.csv has (the header line included) and write just \
                 that number into count.txt.",
        seed: &[("data.csv", DATA_CSV)],
        may_change: &[],
        outputs: &["count.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "count.txt", 7.0),
    },
    Task {
        name: "sort_upper",
        prompt: "Read names.txt, sort the names alphabetically, convert them to upper case and \
                 write them into out.txt, one name per line.",
        seed: &[("names.txt", "charlie\nalice\nbob\n")],
        may_change: &[],
        outputs: &["out.txt"],
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
        may_change: &[],
        outputs: &["numbers.txt", "total.txt"],
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
        may_change: &[],
        outputs: &["squares.py", "squares.txt"],
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
        may_change: &[],
        outputs: &["input.txt", "report.txt"],
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
        may_change: &[],
        outputs: &["code.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "code.txt", PAGE_CODE),
    },
    Task {
        name: "ask_user",
        prompt: "Ask me which city I live in, then write my answer into city.txt.",
        seed: &[],
        may_change: &[],
        outputs: &["city.txt"],
        answers: &["Lisbon"],
        library: &[],
        check: |ws| checks::text_is(ws, "city.txt", "Lisbon"),
    },
    Task {
        name: "json_field",
        prompt: "Read config.json and write the value of its settings.port field into \
                 port.txt.",
        seed: &[("config.json", CONFIG_JSON)],
        may_change: &[],
        outputs: &["port.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "port.txt", 8080.0),
    },
    Task {
        name: "folder",
        prompt: "Create a folder named notes and in it a file todo.md whose first line is \
                 '# Todo' and whose second line is '- buy milk'.",
        seed: &[],
        may_change: &[],
        outputs: &["notes/todo.md"],
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
        may_change: &[],
        outputs: &["answer.txt"],
        answers: &[],
        library: &[("code.txt", "The code is TEAL-5816.\n")],
        check: |ws| checks::contains(ws, "answer.txt", LIBRARY_CODE),
    },
    Task {
        name: "ask_days",
        prompt: "Ask me how many days my trip lasts. Then write one line per day into \
                 days.txt: Day 1, Day 2 and so on, up to the number of days I tell you.",
        seed: &[],
        may_change: &[],
        outputs: &["days.txt"],
        answers: &["4"],
        library: &[],
        check: |ws| checks::lines_are(ws, "days.txt", &["Day 1", "Day 2", "Day 3", "Day 4"]),
    },
    Task {
        name: "words_double",
        prompt: "Count the words in poem.txt and write just that number into words.txt. \
                 Then write twice that number into double.txt, also just the number.",
        seed: &[(
            "poem.txt",
            "the quick brown fox\njumps over\nthe lazy dog\n",
        )],
        may_change: &[],
        outputs: &["words.txt", "double.txt"],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::number_is(ws, "words.txt", 9.0)?;
            checks::number_is(ws, "double.txt", 18.0)
        },
    },
    Task {
        name: "csv_sum",
        prompt: "sales.csv has a header line and a column named amount. Add up all the \
                 amounts and write just the total into total.txt.",
        seed: &[("sales.csv", SALES_CSV)],
        may_change: &[],
        outputs: &["total.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "total.txt", 503.0),
    },
    Task {
        name: "csv_count",
        prompt: "orders.csv has a header line and a status column. Count the orders whose \
                 status is shipped and write just that number into shipped.txt.",
        seed: &[("orders.csv", ORDERS_CSV)],
        may_change: &[],
        outputs: &["shipped.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "shipped.txt", 5.0),
    },
    Task {
        name: "json_nested",
        prompt: "Look up database.credentials.user in app.json and write its value into \
                 user.txt: just the value, without quotes.",
        seed: &[("app.json", APP_JSON)],
        may_change: &[],
        outputs: &["user.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "user.txt", "shop_rw"),
    },
    Task {
        name: "json_length",
        prompt: "app.json has a list named features. Write how many items that list has \
                 into features.txt, just the number.",
        seed: &[("app.json", APP_JSON)],
        may_change: &[],
        outputs: &["features.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "features.txt", 4.0),
    },
    Task {
        name: "log_errors",
        prompt: "server.log has one entry per line. Count the lines whose level is ERROR and \
                 write just that number into errors.txt.",
        seed: &[("server.log", SERVER_LOG)],
        may_change: &[],
        outputs: &["errors.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::number_is(ws, "errors.txt", 4.0),
    },
    Task {
        name: "log_top_ip",
        prompt: "Each line of access.log starts with the IP address of a client. Find the \
                 IP address that occurs most often and write just that address into \
                 top_ip.txt.",
        seed: &[("access.log", ACCESS_LOG)],
        may_change: &[],
        outputs: &["top_ip.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "top_ip.txt", "10.0.0.7"),
    },
    Task {
        name: "rename",
        prompt: "Rename draft.txt to final.txt. Its content must stay exactly as it is.",
        seed: &[("draft.txt", DRAFT_TXT)],
        may_change: &["draft.txt"],
        outputs: &["final.txt"],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::text_is(ws, "final.txt", DRAFT_TXT)?;
            checks::absent(ws, "draft.txt")
        },
    },
    Task {
        name: "move_files",
        prompt: "Make a folder named archive and move report1.txt and report2.txt into it, \
                 keeping their names and content. notes.txt stays where it is.",
        seed: &[
            ("report1.txt", REPORT1_TXT),
            ("report2.txt", REPORT2_TXT),
            ("notes.txt", "Ask Sam about the Q3 report.\n"),
        ],
        may_change: &["report1.txt", "report2.txt"],
        outputs: &["archive/report1.txt", "archive/report2.txt"],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::text_is(ws, "archive/report1.txt", REPORT1_TXT)?;
            checks::text_is(ws, "archive/report2.txt", REPORT2_TXT)?;
            checks::absent(ws, "report1.txt")?;
            checks::absent(ws, "report2.txt")
        },
    },
    Task {
        name: "edit_beside",
        prompt: "In app.conf, change the port from 8000 to 9090 and keep its other lines as \
                 they are.",
        seed: &[
            ("app.conf", "host=localhost\nport=8000\nlog=info\n"),
            (
                "app.conf.example",
                "host=example.com\nport=8000\nlog=debug\n",
            ),
        ],
        may_change: &["app.conf"],
        outputs: &["app.conf"],
        answers: &[],
        library: &[],
        check: |ws| checks::text_is(ws, "app.conf", "host=localhost\nport=9090\nlog=info"),
    },
    Task {
        name: "append_item",
        prompt: "Add the item written in extra.txt to my shopping list shopping.txt, as a \
                 new last line.",
        seed: &[
            ("shopping.txt", "apples\nbread\n"),
            ("extra.txt", "cheese\n"),
        ],
        may_change: &["shopping.txt"],
        outputs: &["shopping.txt"],
        answers: &[],
        library: &[],
        check: |ws| checks::lines_are(ws, "shopping.txt", &["apples", "bread", "cheese"]),
    },
    Task {
        name: "backup_edit",
        prompt: "Copy names.txt to backup.txt. Then add the name dave as a new last line of \
                 names.txt; backup.txt keeps the list as it was.",
        seed: &[("names.txt", "alice\nbob\ncarol\n")],
        may_change: &["names.txt"],
        outputs: &["backup.txt", "names.txt"],
        answers: &[],
        library: &[],
        check: |ws| {
            checks::lines_are(ws, "backup.txt", &["alice", "bob", "carol"])?;
            checks::lines_are(ws, "names.txt", &["alice", "bob", "carol", "dave"])
        },
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
    use super::super::judge::judge;
    use super::*;

    #[test]
    fn there_are_at_least_twenty_four_uniquely_named_tasks() {
        assert!(TASKS.len() >= 24);
        let mut names: Vec<&str> = TASKS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TASKS.len());
        assert!(TASKS.iter().any(|t| t.prompt.contains(URL_PLACEHOLDER)));
        assert!(TASKS.iter().filter(|t| !t.answers.is_empty()).count() >= 2);
    }

    /// Unambiguous tasks: each names its outputs, and may change only files it seeds.
    #[test]
    fn every_task_names_its_outputs_and_may_change_only_its_seed() {
        for task in TASKS {
            assert!(!task.outputs.is_empty(), "{} has no output", task.name);
            for output in task.outputs {
                let file = output.rsplit('/').next().unwrap_or(output);
                assert!(
                    task.prompt.contains(file),
                    "{}: the prompt does not name {file}",
                    task.name
                );
            }
            for file in task.may_change {
                assert!(
                    task.seed.iter().any(|(f, _)| f == file),
                    "{}: {file} is not seeded",
                    task.name
                );
            }
        }
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

    /// What a run did to a workspace: files written, then files removed.
    type Work = (
        &'static [(&'static str, &'static str)],
        &'static [&'static str],
    );

    /// A right answer for every task.
    const RIGHT: &[(&str, Work)] = &[
        ("hello", (&[("hello.txt", "hello from planwright\n")], &[])),
        (
            "primes",
            (&[("primes.txt", "2\n3\n5\n7\n11\n13\n17\n19\n")], &[]),
        ),
        ("sum", (&[("sum.txt", "9\n")], &[])),
        (
            "edit",
            (&[("settings.txt", "colour=green\nsize=large\n")], &[]),
        ),
        ("csv_lines", (&[("count.txt", "7\n")], &[])),
        ("sort_upper", (&[("out.txt", "ALICE\nBOB\nCHARLIE\n")], &[])),
        (
            "two_steps",
            (
                &[
                    ("numbers.txt", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"),
                    ("total.txt", "55"),
                ],
                &[],
            ),
        ),
        (
            "python",
            (
                &[
                    ("squares.py", "for i in range(1, 6):\n    print(i * i)\n"),
                    ("squares.txt", "1\n4\n9\n16\n25\n"),
                ],
                &[],
            ),
        ),
        (
            "recover",
            (
                &[("input.txt", "21\n"), ("report.txt", "report: 42\n")],
                &[],
            ),
        ),
        ("browser", (&[("code.txt", "PLUM-7342\n")], &[])),
        ("ask_user", (&[("city.txt", "Lisbon\n")], &[])),
        ("json_field", (&[("port.txt", "8080\n")], &[])),
        (
            "folder",
            (&[("notes/todo.md", "# Todo\n- buy milk\n")], &[]),
        ),
        ("mcp_library", (&[("answer.txt", "TEAL-5816\n")], &[])),
        (
            "ask_days",
            (&[("days.txt", "Day 1\r\nDay 2\r\nDay 3\r\nDay 4\r\n")], &[]),
        ),
        (
            "words_double",
            (&[("words.txt", "9\n"), ("double.txt", "18")], &[]),
        ),
        ("csv_sum", (&[("total.txt", "503\n")], &[])),
        ("csv_count", (&[("shipped.txt", "5\n")], &[])),
        ("json_nested", (&[("user.txt", "shop_rw\n")], &[])),
        ("json_length", (&[("features.txt", "4")], &[])),
        ("log_errors", (&[("errors.txt", "4\n")], &[])),
        ("log_top_ip", (&[("top_ip.txt", " 10.0.0.7\n")], &[])),
        ("rename", (&[("final.txt", DRAFT_TXT)], &["draft.txt"])),
        (
            "move_files",
            (
                &[
                    ("archive/report1.txt", REPORT1_TXT),
                    ("archive/report2.txt", REPORT2_TXT),
                ],
                &["report1.txt", "report2.txt"],
            ),
        ),
        (
            "edit_beside",
            (
                &[("app.conf", "host=localhost\nport=9090\nlog=info\n")],
                &[],
            ),
        ),
        (
            "append_item",
            (&[("shopping.txt", "apples\nbread\ncheese\n")], &[]),
        ),
        (
            "backup_edit",
            (
                &[
                    ("backup.txt", "alice\nbob\ncarol\n"),
                    ("names.txt", "alice\nbob\ncarol\ndave\n"),
                ],
                &[],
            ),
        ),
    ];

    /// Wrong answers the issue saw small models give: the output right (or not) beside an
    /// input they rewrote, or a rename that rewrote the file instead. (task, work, expected
    /// substring of the verdict)
    const WRONG: &[(&str, Work, &str)] = &[
        (
            "json_nested",
            (
                &[
                    ("user.txt", "shop_rw\n"),
                    ("app.json", "{\"user\": \"shop_rw\"}\n"),
                ],
                &[],
            ),
            "app.json (rewritten",
        ),
        (
            "csv_sum",
            (&[("total.txt", "503\n"), ("sales.csv", "503\n")], &[]),
            "sales.csv (rewritten",
        ),
        (
            "sort_upper",
            (
                &[
                    ("out.txt", "ALICE\nBOB\nCHARLIE\n"),
                    ("names.txt", "alice\nbob\ncharlie\n"),
                ],
                &[],
            ),
            "names.txt (rewritten",
        ),
        (
            "log_errors",
            (&[("errors.txt", "3\n")], &["server.log"]),
            "server.log (deleted) (checker: errors.txt holds",
        ),
        (
            "rename",
            (&[("draft.txt", "final.txt\n")], &[]),
            "final.txt is missing",
        ),
        (
            "edit_beside",
            (
                &[
                    ("app.conf", "host=localhost\nport=9090\nlog=info\n"),
                    (
                        "app.conf.example",
                        "host=example.com\nport=9090\nlog=debug\n",
                    ),
                ],
                &[],
            ),
            "app.conf.example (rewritten",
        ),
        (
            "move_files",
            (
                &[
                    ("archive/report1.txt", REPORT1_TXT),
                    ("archive/report2.txt", REPORT2_TXT),
                    ("archive/notes.txt", "Ask Sam about the Q3 report.\n"),
                ],
                &["report1.txt", "report2.txt", "notes.txt"],
            ),
            "notes.txt (deleted)",
        ),
    ];

    /// A fresh workspace holding `task`'s seed; removed on drop.
    struct Workspace(std::path::PathBuf);

    impl Workspace {
        fn seeded(task: &Task, case: &str) -> Workspace {
            let ws = std::env::temp_dir().join(format!(
                "xtask-tasks-{}-{}-{case}",
                std::process::id(),
                task.name
            ));
            let _ = std::fs::remove_dir_all(&ws);
            std::fs::create_dir_all(&ws).expect("ws");
            super::super::inputs::seed(&ws, task.seed).expect("seed");
            Workspace(ws)
        }

        fn apply(&self, (write, remove): Work) {
            for (file, text) in write {
                let path = self.0.join(file);
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent).expect("parent");
                }
                std::fs::write(path, text).expect("answer");
            }
            for file in remove {
                std::fs::remove_file(self.0.join(file)).expect("remove");
            }
        }
    }

    impl Drop for Workspace {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn right(task: &Task) -> Work {
        RIGHT
            .iter()
            .find(|(n, _)| *n == task.name)
            .map(|(_, w)| *w)
            .expect("a right answer for every task")
    }

    /// Each task fails on the untouched seed (it needs doing) and passes on a workspace
    /// where it was done right, with no input changed and no output missing.
    #[test]
    fn every_checker_fails_on_the_seed_and_passes_on_a_right_answer() {
        assert_eq!(RIGHT.len(), TASKS.len());
        for task in TASKS {
            let ws = Workspace::seeded(task, "right");
            let before = judge(task, &ws.0);
            assert!(before.verdict.is_err(), "{} passes untouched", task.name);
            assert!(before.changed_inputs.is_empty(), "{}", task.name);
            ws.apply(right(task));
            let after = judge(task, &ws.0);
            assert_eq!(after.verdict, Ok(()), "{}", task.name);
            assert!(after.changed_inputs.is_empty(), "{}", task.name);
            assert!(after.missing_outputs.is_empty(), "{}", task.name);
        }
    }

    /// Every seeded file a task does not ask to change is protected: rewriting or deleting
    /// it fails even a right answer, naming the file.
    #[test]
    fn a_changed_input_fails_even_a_right_answer() {
        let mut protected = 0;
        for task in TASKS {
            for (file, _) in task
                .seed
                .iter()
                .filter(|(f, _)| !task.may_change.contains(f))
            {
                protected += 1;
                let ws = Workspace::seeded(task, "changed");
                ws.apply(right(task));
                std::fs::write(ws.0.join(file), "").expect("clobber");
                let j = judge(task, &ws.0);
                assert_eq!(j.changed_inputs.len(), 1, "{}: {j:?}", task.name);
                let why = j.verdict.expect_err("a changed input fails");
                assert!(
                    why.starts_with(&format!("{file} (rewritten"))
                        && why.ends_with("(the checker alone passed)"),
                    "{}: {why}",
                    task.name
                );
                std::fs::remove_file(ws.0.join(file)).expect("rm");
                let j = judge(task, &ws.0);
                assert_eq!(
                    j.changed_inputs,
                    [format!("{file} (deleted)")],
                    "{}",
                    task.name
                );
            }
        }
        assert!(protected >= 14, "only {protected} protected inputs");
    }

    #[test]
    fn the_wrong_answers_small_models_gave_fail_with_their_reason() {
        for (name, work, expected) in WRONG {
            let task = TASKS.iter().find(|t| t.name == *name).expect("a task");
            let ws = Workspace::seeded(task, "wrong");
            ws.apply(*work);
            let why = judge(task, &ws.0).verdict.expect_err("wrong");
            assert!(why.contains(expected), "{name}: {why}");
        }
    }

    /// Removing any one declared output from a right answer fails the checker, and the
    /// output is reported missing: the outputs are what the checker needs.
    #[test]
    fn every_declared_output_is_needed_by_the_checker() {
        for task in TASKS {
            for output in task.outputs {
                let ws = Workspace::seeded(task, "missing");
                ws.apply(right(task));
                std::fs::remove_file(ws.0.join(output)).expect("an output of the answer");
                let j = judge(task, &ws.0);
                assert!(j.verdict.is_err(), "{} passes without {output}", task.name);
                assert_eq!(j.missing_outputs, [output.to_string()], "{}", task.name);
            }
        }
    }
}
