//! Every family against its own checker: instances vary, each is solvable (its reference
//! program, run with python3 on the seeded files, satisfies the checks), and plainly wrong
//! work (the seed left as it was, an off-by-one value, a missing line, a protected input
//! changed) is rejected.

use std::path::{Path, PathBuf};

use super::FAMILIES;
use crate::eval::family::Family;
use crate::eval::instance::{Category, Check, Instance, URL_PLACEHOLDER};
use crate::eval::judge::judge;
use crate::eval::rng::Rng;
use crate::eval::{inputs, page};

/// Instances checked end to end per family.
const SOLVED_PER_FAMILY: u64 = 8;

fn instance(family: &Family, seed: u64) -> Instance {
    (family.generate)(&mut Rng::new(seed))
}

/// python3 is there, or (outside CI) the test is skipped.
fn python_or_skip() -> bool {
    let found = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "python3 is needed by the eval's families tests"
        );
        crate::report("skipped: no python3");
    }
    found
}

#[test]
fn there_are_at_least_twenty_families_with_unique_names_in_every_category() {
    assert!(FAMILIES.len() >= 20, "{} families", FAMILIES.len());
    let mut names: Vec<&str> = FAMILIES.iter().map(|f| f.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), FAMILIES.len());
    for c in Category::ALL {
        assert!(FAMILIES.iter().any(|f| f.category == c), "{}", c.name());
    }
    let foreign: Vec<&str> = FAMILIES
        .iter()
        .filter(|f| f.language != "en")
        .map(|f| f.language)
        .collect();
    assert!(foreign.len() >= 2, "{foreign:?}");
}

/// Over 40 seeds a family makes at least 20 different instances, in at least 3
/// phrasings, every one of its own family and category, naming its outputs.
#[test]
fn every_family_varies_its_instances_and_phrasings() {
    for family in FAMILIES {
        let made: Vec<Instance> = (0..40).map(|s| instance(family, s)).collect();
        let mut distinct: Vec<String> = made
            .iter()
            .map(|i| format!("{}\u{0}{:?}", i.text, i.seed))
            .collect();
        distinct.sort();
        distinct.dedup();
        assert!(
            distinct.len() >= 20,
            "{}: {} distinct",
            family.name,
            distinct.len()
        );
        let mut phrasings: Vec<(&str, usize)> =
            made.iter().map(|i| (i.variant, i.phrasing)).collect();
        phrasings.sort_unstable();
        phrasings.dedup();
        assert!(phrasings.len() >= 3, "{}: {phrasings:?}", family.name);
        for i in &made {
            assert_eq!(i.family, family.name);
            assert_eq!(i.category, family.category);
            assert!(!i.checks.is_empty(), "{}: no check", family.name);
            for output in i.outputs() {
                let file = output.rsplit('/').next().unwrap_or(output);
                // Named, or one of "every .log file".
                let ext = file.rsplit_once('.').map(|(_, e)| format!(".{e}"));
                assert!(
                    i.text.contains(file) || ext.is_some_and(|e| i.text.contains(&e)),
                    "{}: the text does not name {file}: {}",
                    family.name,
                    i.text
                );
            }
            for file in &i.may_change {
                assert!(
                    i.seed.iter().any(|(f, _)| f == file),
                    "{}: {file} is not seeded",
                    family.name
                );
            }
            let mut seeded: Vec<&String> = i.seed.iter().map(|(f, _)| f).collect();
            seeded.sort();
            seeded.dedup();
            assert_eq!(
                seeded.len(),
                i.seed.len(),
                "{}: a file seeded twice",
                family.name
            );
            assert!(!i.reference.is_empty(), "{}: no reference", family.name);
        }
    }
}

#[test]
fn the_same_seed_makes_the_same_instance_and_another_seed_another() {
    for family in FAMILIES {
        assert_eq!(
            instance(family, 11),
            instance(family, 11),
            "{}",
            family.name
        );
        let differs = (12..20).any(|s| instance(family, s) != instance(family, 11));
        assert!(differs, "{}", family.name);
    }
}

/// A run folder: `ws/` seeded with the instance's files, `library/` with its MCP folder.
struct RunDir(PathBuf);

impl RunDir {
    fn new(i: &Instance, case: &str) -> RunDir {
        let dir = std::env::temp_dir().join(format!(
            "xtask-families-{}-{}-{case}",
            std::process::id(),
            i.id_or_family()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("ws")).expect("ws");
        inputs::seed(&dir.join("ws"), &i.seed).expect("seed");
        inputs::seed(&dir.join("library"), &i.library).expect("library");
        RunDir(dir)
    }

    /// A copy of `other`'s workspace and library (a solved one, to spoil).
    fn copy_of(other: &RunDir, i: &Instance, case: &str) -> RunDir {
        let dir = RunDir::new(i, case);
        let _ = std::fs::remove_dir_all(dir.ws());
        copy_tree(&other.ws(), &dir.ws());
        dir
    }

    fn ws(&self) -> PathBuf {
        self.0.join("ws")
    }

    fn scratch(&self) -> PathBuf {
        self.0.join("check")
    }

    /// Runs the instance's reference program in `ws/`.
    fn solve(&self, i: &Instance, url: &str) {
        let program = self.0.join("reference.py");
        std::fs::write(&program, i.reference.replace(URL_PLACEHOLDER, url)).expect("program");
        let out = std::process::Command::new("python3")
            .arg(&program)
            .current_dir(self.ws())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{} ({}): the reference failed: {}\n{}",
            i.family,
            i.variant,
            String::from_utf8_lossy(&out.stderr),
            i.reference
        );
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Instance {
    fn id_or_family(&self) -> String {
        if self.id.is_empty() {
            format!("{}-{}-{}", self.family, self.variant, self.phrasing)
        } else {
            self.id.clone()
        }
    }
}

/// What a plainly wrong answer to `check` writes into its file (`None`: no such answer;
/// the untouched seed covers it), given the right answer now in the workspace.
fn wrong_content(check: &Check, ws: &Path) -> Option<(String, Option<String>)> {
    let current = |f: &str| std::fs::read_to_string(ws.join(f)).unwrap_or_default();
    let drop_last = |text: &str| {
        let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines.pop();
        lines.join("\n")
    };
    match check {
        Check::Number { file, value, .. } => Some((file.clone(), Some(format!("{}", value + 1.0)))),
        Check::Text { file, expected } => {
            let wrong = match expected.trim().parse::<f64>() {
                Ok(n) => format!("{}", n + 1.0),
                Err(_) if expected.trim().lines().count() > 1 => drop_last(expected),
                Err(_) => format!("{}s", expected.trim()),
            };
            Some((file.clone(), Some(wrong)))
        }
        Check::Lines { file, expected, .. } | Check::Items { file, expected, .. } => {
            let wrong = if expected.len() > 1 {
                expected[..expected.len() - 1].join("\n")
            } else {
                format!("{}\nextra", expected.join("\n"))
            };
            Some((file.clone(), Some(wrong)))
        }
        Check::Csv { file, .. } => Some((file.clone(), Some(drop_last(&current(file))))),
        Check::Json { file, .. } => Some((file.clone(), Some("{}".to_string()))),
        Check::Absent { file } => Some((file.clone(), Some("left behind\n".to_string()))),
        Check::Runs { .. } => None,
    }
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("folder");
    for entry in std::fs::read_dir(from).expect("list").flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
        }
    }
}

fn write(ws: &Path, file: &str, text: &str) {
    let path = ws.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent");
    }
    std::fs::write(path, text).expect("write");
}

/// For every family and many seeds: the untouched seed fails, the reference solves it,
/// each plainly wrong answer fails, and a changed protected input fails a right answer.
#[test]
fn every_family_is_solvable_and_its_checker_rejects_wrong_work() {
    if !python_or_skip() {
        return;
    }
    let pages = page::serve().expect("page server");
    for family in FAMILIES {
        for seed in 0..SOLVED_PER_FAMILY {
            let mut i = instance(family, seed);
            i.id = format!("{}-{seed}", family.name);
            let url = match &i.page {
                Some(html) => pages.add(&i.id, html),
                None => String::new(),
            };
            let label = format!("{} seed {seed} ({})", family.name, i.variant);

            let untouched = RunDir::new(&i, "untouched");
            let j = judge(&i, &untouched.ws(), &untouched.scratch());
            assert!(j.verdict.is_err(), "{label}: passes untouched");
            assert!(j.changed_inputs.is_empty(), "{label}");

            let solved = RunDir::new(&i, "solved");
            solved.solve(&i, &url);
            let j = judge(&i, &solved.ws(), &solved.scratch());
            assert_eq!(j.verdict, Ok(()), "{label}: {}", i.text);
            assert!(j.missing_outputs.is_empty(), "{label}");

            for check in &i.checks {
                let Some((file, content)) = wrong_content(check, &solved.ws()) else {
                    continue;
                };
                let wrong = RunDir::copy_of(&solved, &i, "wrong");
                if let Some(text) = content {
                    write(&wrong.ws(), &file, &text);
                }
                let j = judge(&i, &wrong.ws(), &wrong.scratch());
                assert!(
                    j.verdict.is_err(),
                    "{label}: a wrong {file} passes {check:?}"
                );
            }

            for (file, _) in i.protected() {
                let changed = RunDir::copy_of(&solved, &i, "changed");
                write(&changed.ws(), file, "clobbered\n");
                let j = judge(&i, &changed.ws(), &changed.scratch());
                let why = j.verdict.expect_err("a changed input fails");
                assert!(
                    why.starts_with(&format!("{file} (rewritten")),
                    "{label}: {why}"
                );
            }
        }
    }
}

fn family(name: &str) -> &'static Family {
    FAMILIES
        .iter()
        .find(|f| f.name == name)
        .expect("a family of that name")
}

/// A "fix" fitted to the test file (the function returns the expected value of each call
/// the test file makes) passes that file but fails the hidden cases.
#[test]
fn a_bug_fix_fitted_to_the_visible_tests_fails() {
    if !python_or_skip() {
        return;
    }
    for seed in 0..SOLVED_PER_FAMILY * 2 {
        let mut i = instance(family("bug_fix"), seed);
        i.id = format!("bug_fix-fitted-{seed}");
        let module = i.may_change[0].clone();
        let (test, test_text) = i
            .seed
            .iter()
            .find(|(f, _)| f.starts_with("test_"))
            .cloned()
            .expect("a test file");
        let mut func = String::new();
        let mut cases = Vec::new();
        for line in test_text.lines() {
            let Some(call) = line
                .trim()
                .strip_prefix("self.assertEqual(")
                .and_then(|l| l.strip_suffix(')'))
            else {
                continue;
            };
            let (call, want) = call.rsplit_once(", ").expect("call, expected");
            let (name, args) = call.split_once('(').expect("a call");
            func = name.to_string();
            let args = args.strip_suffix(')').expect("closed");
            cases.push(format!("(({args},), {want})"));
        }
        assert!(!cases.is_empty(), "{test_text}");
        let fitted = format!(
            "_CASES = [{}]\n\n\ndef {func}(*args):\n    for known, want in _CASES:\n        if known == args:\n            return want\n    return 0\n",
            cases.join(", ")
        );
        let dir = RunDir::new(&i, "fitted");
        write(&dir.ws(), &module, &fitted);
        let visible = std::process::Command::new("python3")
            .arg(&test)
            .current_dir(dir.ws())
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .output()
            .expect("python3 runs");
        assert!(
            visible.status.success(),
            "seed {seed} ({}): the fitted module fails the visible tests: {}",
            i.variant,
            String::from_utf8_lossy(&visible.stderr)
        );
        let why = judge(&i, &dir.ws(), &dir.scratch())
            .verdict
            .expect_err("a fitted fix fails");
        assert!(why.contains(" gave "), "seed {seed} ({}): {why}", i.variant);
    }
}

/// A script that prints the expected lines as fixed text (its output file right too) fails
/// the run on other data, for every variant whose script reads input.
#[test]
fn a_script_printing_fixed_text_fails_on_other_data() {
    if !python_or_skip() {
        return;
    }
    let mut checked = 0;
    for seed in 0..40 {
        let mut i = instance(family("script_run"), seed);
        if i.variant == "table" {
            continue;
        }
        i.id = format!("script_run-fixed-{seed}");
        let (out, printed) = i
            .checks
            .iter()
            .find_map(|c| match c {
                Check::Lines { file, expected, .. } => Some((file.clone(), expected.clone())),
                _ => None,
            })
            .expect("the saved output's check");
        let (program, script) = i
            .checks
            .iter()
            .find_map(|c| match c {
                Check::Runs { program, args, .. } => Some((program.clone(), args[0].clone())),
                _ => None,
            })
            .expect("the script's run");
        let body = if program == "sh" {
            let quoted: Vec<String> = printed.iter().map(|l| format!("'{l}'")).collect();
            format!("printf '%s\\n' {}\n", quoted.join(" "))
        } else {
            format!("print({})\n", super::text::py(&printed.join("\n")))
        };
        let dir = RunDir::new(&i, "fixed");
        write(&dir.ws(), &script, &body);
        write(&dir.ws(), &out, &format!("{}\n", printed.join("\n")));
        let why = judge(&i, &dir.ws(), &dir.scratch())
            .verdict
            .expect_err("fixed text fails");
        assert!(
            why.contains("on other data"),
            "seed {seed} ({}): {why}",
            i.variant
        );
        checked += 1;
    }
    assert!(checked >= 20, "{checked} instances checked");
}
