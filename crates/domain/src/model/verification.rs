//! Whether an independent reproduction agrees with what a run produced
//! (docs/verification.md): the files each side wrote or removed, compared after they were
//! made the same way (line ends, trailing spaces, JSON formatting), and, when neither side
//! touched a file, the run's answer against what the reproduction printed. Pure: the
//! engine reads both sides through the ports (`engine/verification/`).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::text::truncate_chars;

/// What one side left: files written (created or changed) with their content, files gone,
/// and its answer (the run's final result; what the reproduction printed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Produced {
    pub written: BTreeMap<String, Content>,
    /// The files of `written` that existed before (inputs changed, not created).
    pub changed_inputs: BTreeSet<String>,
    pub gone: BTreeSet<String>,
    pub answer: String,
}

/// A written file's content as compared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// Its text (UTF-8, within the compared size).
    Text(String),
    /// Too big or not text: its digest.
    Digest(String),
}

/// How a reproduction compares with the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agreement {
    /// Every file and the answer agree; `compared` names what was compared.
    Agree { compared: Vec<String> },
    /// They differ; `why` says where, with both sides' excerpts.
    Disagree { why: String },
    /// Nothing could be compared, or only programs whose text differs.
    Undecided { why: String },
}

/// How one check went, as its `answer_checked` event says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckVerdict {
    /// The reproduction agreed.
    Agree,
    /// It disagreed; the step is tried again, or the run ends unverified.
    Disagree,
    /// Nothing could be compared.
    Undecided,
    /// No check ran (nothing was executed, the check program could not run, switched off).
    NotRun,
}

impl Agreement {
    pub fn verdict(&self) -> CheckVerdict {
        match self {
            Agreement::Agree { .. } => CheckVerdict::Agree,
            Agreement::Disagree { .. } => CheckVerdict::Disagree,
            Agreement::Undecided { .. } => CheckVerdict::Undecided,
        }
    }
}

/// The verdict a run ends with, as its outcome, JSON and summary say it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Verification {
    /// An independent reproduction agreed with what executed actions produced.
    pub verified: bool,
    /// What was checked and how it went, in one or two sentences.
    pub detail: String,
}

/// What the run's checks found so far (kept by the run's context, rebuilt from the journal).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checks {
    /// The verdict of the last check.
    pub last: Option<Verification>,
    /// The last step was tried again once after two reproductions disagreed with it.
    pub retried: bool,
}

/// Characters of each side shown when they differ.
const EXCERPT_CHARS: usize = 200;

/// File name endings of programs: two programs that do the same thing are seldom the same
/// text, so differing ones are not a disagreement (they cannot confirm each other either).
const PROGRAM_ENDINGS: [&str; 19] = [
    ".py", ".sh", ".bash", ".js", ".mjs", ".ts", ".rb", ".pl", ".php", ".go", ".rs", ".c", ".h",
    ".cpp", ".java", ".kt", ".swift", ".lua", ".r",
];

fn is_program(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    PROGRAM_ENDINGS.iter().any(|e| lower.ends_with(e))
}

/// `text` made comparable: `\r\n` as `\n`, trailing spaces of each line and blank lines at
/// both ends taken off; JSON re-written in one canonical form.
pub fn normalized(text: &str) -> String {
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        if value.is_object() || value.is_array() {
            return value.to_string();
        }
    }
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.trim_end_matches(['\r', ' ', '\t']))
        .collect();
    let start = lines
        .iter()
        .position(|l| !l.is_empty())
        .unwrap_or(lines.len());
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(start, |e| e + 1);
    lines[start..end].join("\n")
}

fn excerpt(content: Option<&Content>) -> String {
    match content {
        None => "nothing".to_string(),
        Some(Content::Digest(_)) => "other bytes".to_string(),
        Some(Content::Text(t)) => format!("{:?}", truncate_chars(t, EXCERPT_CHARS)),
    }
}

fn same(a: &Content, b: &Content) -> bool {
    match (a, b) {
        (Content::Text(x), Content::Text(y)) => normalized(x) == normalized(y),
        (Content::Digest(x), Content::Digest(y)) => x == y,
        _ => false,
    }
}

/// Whether `text` holds `needle` as whole words, whatever the case and the spacing (`4` is
/// not in `42`).
fn holds(text: &str, needle: &str) -> bool {
    let squash = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let (text, needle) = (squash(text), squash(needle));
    if needle.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    text.match_indices(&needle).any(|(i, _)| {
        !word(text[..i].chars().next_back()) && !word(text[i + needle.len()..].chars().next())
    })
}

/// Whether `answer` says every line of what a check `printed`, both read as written and
/// made comparable ([`normalized`]: JSON in one layout), so that `[1, 2]` and `[1,2]` are
/// the same list whichever side wrote it spaced.
fn says(answer: &str, printed: &str) -> bool {
    let all_held = |answer: &str, printed: &str| {
        let printed = printed.trim();
        !printed.is_empty()
            && printed
                .lines()
                .filter(|l| !l.trim().is_empty())
                .all(|l| holds(answer, l))
    };
    let (answer_n, printed_n) = (normalized(answer), normalized(printed));
    all_held(answer, printed) || all_held(answer, &printed_n) || all_held(&answer_n, &printed_n)
}

/// Whether a check that did not write a file printed its content instead (a reproduction
/// told to "write x.txt containing …" may only print it): the same text, not empty.
fn printed_as(content: &str, printed: &str) -> bool {
    let content = normalized(content);
    !content.is_empty() && content == normalized(printed)
}

/// Compares the reproduction `check` with the `run`.
pub fn compare(run: &Produced, check: &Produced) -> Agreement {
    if run.written.is_empty() && run.gone.is_empty() && check.written.is_empty() {
        if !check.gone.is_empty() {
            return Agreement::Disagree {
                why: format!(
                    "the check removed {} and the run removed nothing",
                    names(&check.gone)
                ),
            };
        }
        let printed = normalized(&check.answer);
        if printed.is_empty() {
            return Agreement::Undecided {
                why: "neither side wrote a file and the check printed nothing".to_string(),
            };
        }
        return if says(&run.answer, &check.answer) {
            Agreement::Agree {
                compared: vec!["the answer".to_string()],
            }
        } else {
            Agreement::Disagree {
                why: format!(
                    "the check printed {} and the answer does not say it",
                    excerpt(Some(&Content::Text(printed)))
                ),
            }
        };
    }
    if run.gone != check.gone {
        return Agreement::Disagree {
            why: format!(
                "the run removed {} and the check removed {}",
                names(&run.gone),
                names(&check.gone)
            ),
        };
    }
    let paths: BTreeSet<&String> = run.written.keys().chain(check.written.keys()).collect();
    let mut compared = Vec::new();
    let mut programs_differ = Vec::new();
    let mut empty = Vec::new();
    for path in paths {
        let (ours, theirs) = (run.written.get(path), check.written.get(path));
        match (ours, theirs) {
            (Some(Content::Text(a)), Some(Content::Text(b)))
                if a.trim().is_empty() && b.trim().is_empty() =>
            {
                empty.push(path.clone());
            }
            (Some(a), Some(b)) if same(a, b) => compared.push(path.clone()),
            (Some(Content::Text(t)), None) if printed_as(t, &check.answer) => {
                compared.push(format!("{path} (as the check printed it)"));
            }
            (Some(_), Some(_)) if is_program(path) => programs_differ.push(path.clone()),
            // Whether one of the user's files should change at all is not a matter of how a
            // program is written: the check changed it, the run left it as it was.
            (None, Some(_)) if check.changed_inputs.contains(path.as_str()) => {
                return Agreement::Disagree {
                    why: format!(
                        "{path}: the run left it as it was, the check changed it to {}",
                        excerpt(theirs)
                    ),
                }
            }
            (Some(_), None) | (None, Some(_)) if is_program(path) => {
                programs_differ.push(path.clone());
            }
            _ => {
                return Agreement::Disagree {
                    why: format!(
                        "{path}: the run left {}, the check {}",
                        excerpt(ours),
                        excerpt(theirs)
                    ),
                }
            }
        }
    }
    compared.extend(run.gone.iter().cloned());
    // Both sides leaving a file empty is no evidence (docs/verification.md): where measured it was the
    // same filter matching nothing twice (docs/verification.md).
    if !empty.is_empty() {
        return Agreement::Undecided {
            why: format!(
                "{} empty on both sides: an empty file reproduced checks nothing",
                empty.join(", ")
            ),
        };
    }
    if !programs_differ.is_empty() {
        return Agreement::Undecided {
            why: format!(
                "the programs {} differ from the check's and were not compared",
                programs_differ.join(", ")
            ),
        };
    }
    if compared.is_empty() {
        return Agreement::Undecided {
            why: "nothing to compare".to_string(),
        };
    }
    Agreement::Agree { compared }
}

fn names(paths: &BTreeSet<String>) -> String {
    if paths.is_empty() {
        "nothing".to_string()
    } else {
        paths.iter().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn produced(written: &[(&str, &str)], gone: &[&str], answer: &str) -> Produced {
        Produced {
            written: written
                .iter()
                .map(|(p, t)| (p.to_string(), Content::Text(t.to_string())))
                .collect(),
            gone: gone.iter().map(|p| p.to_string()).collect(),
            answer: answer.to_string(),
            ..Produced::default()
        }
    }

    #[test]
    fn files_agree_whatever_their_line_ends_and_json_layout() {
        let run = produced(
            &[("sum.txt", "9\n"), ("c.json", "{\"a\": [1, 2]}")],
            &[],
            "",
        );
        let check = produced(
            &[("sum.txt", "9\r\n\n"), ("c.json", "{\"a\":[1,2]}\n")],
            &[],
            "",
        );
        assert_eq!(
            compare(&run, &check),
            Agreement::Agree {
                compared: vec!["c.json".into(), "sum.txt".into()]
            }
        );
    }

    #[test]
    fn an_empty_file_on_both_sides_is_no_evidence() {
        let run = produced(&[("warns.log", ""), ("count.txt", "0")], &[], "");
        let check = produced(&[("warns.log", "\n"), ("count.txt", "0\n")], &[], "");
        match compare(&run, &check) {
            Agreement::Undecided { why } => assert!(why.contains("warns.log"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Empty against written still disagrees.
        assert!(matches!(
            compare(
                &run,
                &produced(&[("warns.log", "W a"), ("count.txt", "0")], &[], "")
            ),
            Agreement::Disagree { .. }
        ));
    }

    #[test]
    fn a_different_value_a_missing_file_or_a_removal_disagrees() {
        let run = produced(&[("sum.txt", "9")], &[], "");
        match compare(&run, &produced(&[("sum.txt", "10")], &[], "")) {
            Agreement::Disagree { why } => {
                assert!(why.contains("sum.txt") && why.contains("\"10\""), "{why}")
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            compare(&run, &produced(&[("total.txt", "9")], &[], "")),
            Agreement::Disagree { .. }
        ));
        assert!(matches!(
            compare(&run, &produced(&[("sum.txt", "9")], &["a.txt"], "")),
            Agreement::Disagree { .. }
        ));
    }

    #[test]
    fn a_file_the_check_printed_instead_of_writing_agrees_only_when_the_same() {
        let run = produced(&[("hello.txt", "hello there\n")], &[], "done");
        assert!(matches!(
            compare(&run, &produced(&[], &[], "hello there")),
            Agreement::Agree { .. }
        ));
        assert!(matches!(
            compare(&run, &produced(&[], &[], "hello")),
            Agreement::Disagree { .. }
        ));
    }

    #[test]
    fn moves_agree_when_both_sides_left_the_same_files() {
        let run = produced(&[("archive/r1.txt", "Q1")], &["r1.txt"], "");
        let check = produced(&[("archive/r1.txt", "Q1\n")], &["r1.txt"], "");
        assert!(matches!(compare(&run, &check), Agreement::Agree { .. }));
    }

    #[test]
    fn programs_that_differ_are_undecided_not_wrong() {
        let run = produced(&[("fix.py", "return a+b"), ("out.txt", "3")], &[], "");
        let check = produced(&[("fix.py", "return b+a"), ("out.txt", "3")], &[], "");
        assert!(matches!(compare(&run, &check), Agreement::Undecided { .. }));
    }

    /// A program the check changed and the run did not: a disagreement when it was one of
    /// the user's files, no evidence either way when the check created it.
    #[test]
    fn an_input_program_only_the_check_changed_is_a_disagreement() {
        let run = produced(&[], &[], "done");
        let mut check = produced(&[("app.py", "limit = 2\n")], &[], "");
        assert!(matches!(compare(&run, &check), Agreement::Undecided { .. }));
        check.changed_inputs.insert("app.py".into());
        assert!(matches!(
            compare(&run, &check),
            Agreement::Disagree { why } if why.contains("app.py: the run left it as it was")
        ));
    }

    #[test]
    fn an_answer_is_checked_against_what_the_check_printed() {
        let run = produced(&[], &[], "The file has 42 lines.");
        assert!(matches!(
            compare(&run, &produced(&[], &[], "42\n")),
            Agreement::Agree { .. }
        ));
        assert!(matches!(
            compare(&run, &produced(&[], &[], "41")),
            Agreement::Disagree { .. }
        ));
        assert!(matches!(
            compare(&run, &produced(&[], &[], "4")),
            Agreement::Disagree { .. }
        ));
        assert!(matches!(
            compare(&run, &produced(&[], &[], "  ")),
            Agreement::Undecided { .. }
        ));
    }

    /// A list is the same list however either side spaced it; a different list is not.
    #[test]
    fn a_list_answer_agrees_whatever_its_spacing() {
        let spaced = produced(&[], &[], "[115, 45, 20]");
        let tight = produced(&[], &[], "[115,45,20]");
        for (run, check) in [(&spaced, &tight), (&tight, &spaced), (&spaced, &spaced)] {
            assert!(
                matches!(compare(run, check), Agreement::Agree { .. }),
                "{:?} against {:?}",
                run.answer,
                check.answer
            );
        }
        assert!(matches!(
            compare(&spaced, &produced(&[], &[], "[115,45,21]")),
            Agreement::Disagree { .. }
        ));
        // Lines printed with a blank line between them are each looked for.
        let run = produced(&[], &[], "riga and hanoi");
        assert!(matches!(
            compare(&run, &produced(&[], &[], "riga\n\nhanoi\n")),
            Agreement::Agree { .. }
        ));
    }

    #[test]
    fn normalisation_keeps_inner_lines() {
        assert_eq!(normalized("\n a \r\nb  \n\n"), " a\nb");
        assert_eq!(normalized("[1, 2]"), "[1,2]");
    }
}
