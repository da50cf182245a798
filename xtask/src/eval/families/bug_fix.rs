//! `bug_fix`: a small Python module with one bug and a unittest file that fails because
//! of it; the module is to be fixed so that the tests pass, the test file left alone. The
//! check runs the tests with python3 after the run.

use super::text::{capitalised, lines, py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "bug_fix",
    category: Category::Edit,
    language: "en",
    about: "a small Python module with one bug and a unittest file that fails because of it: \
            fix the module (not the tests); the check runs the tests with python3",
    generate,
};

/// One bug: the function's lines with the bug, the buggy line, its fix, and test cases
/// (arguments as Python source, expected value as Python source).
struct Bug {
    variant: &'static str,
    body: Vec<String>,
    wrong: String,
    right: String,
    cases: Vec<(String, String)>,
    /// What the function should do, as a user says it.
    purpose: String,
}

fn nums(rng: &mut Rng, n: usize, lo: i64, hi: i64) -> Vec<i64> {
    (0..n).map(|_| rng.range(lo, hi)).collect()
}

fn list(v: &[i64]) -> String {
    format!(
        "[{}]",
        v.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )
}

fn bug(rng: &mut Rng, func: &str) -> Bug {
    match rng.below(6) {
        0 => {
            let wrong = "    for i in range(1, len(values)):".to_string();
            let right = "    for i in range(len(values)):".to_string();
            let cases = (0..2)
                .map(|_| {
                    let len = rng.range(3, 6) as usize;
                    let v = nums(rng, len, 1, 50);
                    (list(&v), v.iter().sum::<i64>().to_string())
                })
                .collect();
            Bug {
                variant: "skips_first",
                body: vec![
                    format!("def {func}(values):"),
                    "    total = 0".to_string(),
                    wrong.clone(),
                    "        total += values[i]".to_string(),
                    "    return total".to_string(),
                ],
                wrong,
                right,
                cases,
                purpose: "add up a list of numbers".to_string(),
            }
        }
        1 => {
            let wrong = "    return sum(values) / (len(values) + 1)".to_string();
            let right = "    return sum(values) / len(values)".to_string();
            let cases = (0..2)
                .map(|_| {
                    let n = rng.range(2, 5) as usize;
                    let mean = rng.range(2, 40);
                    let mut v = nums(rng, n - 1, 1, 2 * mean);
                    let last = mean * n as i64 - v.iter().sum::<i64>();
                    v.push(last);
                    (list(&v), format!("{mean}"))
                })
                .collect();
            Bug {
                variant: "mean",
                body: vec![format!("def {func}(values):"), wrong.clone()],
                wrong,
                right,
                cases,
                purpose: "return the average of a list of numbers".to_string(),
            }
        }
        2 => {
            let wrong = "        if v < best:".to_string();
            let right = "        if v > best:".to_string();
            let cases = (0..2)
                .map(|_| {
                    let len = rng.range(3, 7) as usize;
                    let mut v = nums(rng, len, 1, 99);
                    v[0] = 50;
                    v[1] = 75;
                    rng.shuffle(&mut v);
                    (list(&v), v.iter().max().copied().unwrap_or(0).to_string())
                })
                .collect();
            Bug {
                variant: "largest",
                body: vec![
                    format!("def {func}(values):"),
                    "    best = values[0]".to_string(),
                    "    for v in values:".to_string(),
                    wrong.clone(),
                    "            best = v".to_string(),
                    "    return best".to_string(),
                ],
                wrong,
                right,
                cases,
                purpose: "return the largest number of a list".to_string(),
            }
        }
        3 => {
            let wrong = "    return sum(1 for c in text.lower() if c in \"aeio\")".to_string();
            let right = "    return sum(1 for c in text.lower() if c in \"aeiou\")".to_string();
            let samples = [
                "umbrella",
                "tuesday",
                "computer",
                "sunflower",
                "cucumber",
                "museum",
                "volume",
                "autumn",
            ];
            let cases = rng
                .sample(&samples, 2)
                .into_iter()
                .map(|w| {
                    let n = w.chars().filter(|c| "aeiou".contains(*c)).count();
                    (py(w), n.to_string())
                })
                .collect();
            Bug {
                variant: "vowels",
                body: vec![format!("def {func}(text):"), wrong.clone()],
                wrong,
                right,
                cases,
                purpose: "count the vowels (a, e, i, o, u) of a word".to_string(),
            }
        }
        4 => {
            let wrong = "    return price * percent / 100".to_string();
            let right = "    return price - price * percent / 100".to_string();
            let cases = (0..2)
                .map(|_| {
                    let price = rng.range(1, 20) * 20;
                    let percent = *rng.pick(&[10, 20, 25, 30]);
                    (
                        format!("{price}, {percent}"),
                        format!("{}", price - price * percent / 100),
                    )
                })
                .collect();
            Bug {
                variant: "discount",
                body: vec![format!("def {func}(price, percent):"), wrong.clone()],
                wrong,
                right,
                cases,
                purpose: "return a price after a discount of some percent".to_string(),
            }
        }
        _ => {
            let wrong = "    return year % 4 == 0 and year % 100 != 0".to_string();
            let right =
                "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)".to_string();
            let century = *rng.pick(&[1600, 2000, 2400]);
            let ordinary = rng.range(1901, 2099) / 4 * 4;
            let ordinary = if ordinary % 100 == 0 {
                ordinary + 4
            } else {
                ordinary
            };
            let cases = vec![
                (century.to_string(), "True".to_string()),
                (ordinary.to_string(), "True".to_string()),
                ((ordinary + 1).to_string(), "False".to_string()),
            ];
            Bug {
                variant: "leap_year",
                body: vec![format!("def {func}(year):"), wrong.clone()],
                wrong,
                right,
                cases,
                purpose: "tell whether a year is a leap year".to_string(),
            }
        }
    }
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let module = names.module(rng, words::MODULES, "py");
    let m = module.trim_end_matches(".py").to_string();
    let test = format!("test_{m}.py");
    names.take(&test);
    let func = match rng.below(3) {
        0 => format!("{}_{}", rng.pick(words::VERBS), rng.pick(words::NOUNS)),
        1 => format!("get_{}", rng.pick(words::NOUNS)),
        _ => format!("{}_value", rng.pick(words::VERBS)),
    };
    let b_ = bug(rng, &func);
    let mut module_lines = vec![
        format!(
            "\"\"\"Helpers for the {} report.\"\"\"",
            rng.pick(words::NOUNS)
        ),
        String::new(),
        String::new(),
    ];
    module_lines.extend(b_.body.iter().cloned());
    let source = lines(&module_lines);
    let mut test_lines = vec![
        "import unittest".to_string(),
        String::new(),
        format!("from {m} import {func}"),
        String::new(),
        String::new(),
        format!(
            "class Test{}(unittest.TestCase):",
            capitalised(&func.replace('_', ""))
        ),
    ];
    for (i, (args, expected)) in b_.cases.iter().enumerate() {
        test_lines.push(format!("    def test_case_{}(self):", i + 1));
        test_lines.push(format!(
            "        self.assertEqual({func}({args}), {expected})"
        ));
        test_lines.push(String::new());
    }
    test_lines.push(String::new());
    test_lines.push("if __name__ == \"__main__\":".to_string());
    test_lines.push("    unittest.main()".to_string());
    let purpose = &b_.purpose;
    let mut b = Builder::new(FAMILY.name, FAMILY.category, b_.variant);
    b.editable(&module, &source)
        .input(&test, &lines(&test_lines))
        .check(Check::Runs {
            program: "python3".to_string(),
            args: vec![test.clone()],
            stdout: None,
        })
        .phrased(
            rng,
            vec![
                format!("The tests in {test} fail. Fix the bug in {module} so that `python3 {test}` passes; don't change the test file."),
                format!("{func} in {module} is supposed to {purpose} but {test} says it's wrong. Find the bug and fix it (only edit {module})."),
                format!("fix {module} so {test} passes (leave {test} as is)"),
                format!(
                    "My unit tests ({test}) for {module} are red. Could you track down the bug in \
                     {module} and correct it? The tests are right, please don't touch them."
                ),
            ],
        )
        .reference(&format!(
            "t = open({f}).read()\nopen({f}, 'w').write(t.replace({}, {}))\n",
            py(&b_.wrong),
            py(&b_.right),
            f = py(&module)
        ));
    b.build()
}
