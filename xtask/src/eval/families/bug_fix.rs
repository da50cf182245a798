//! `bug_fix`: a small Python module with one bug and a unittest file that fails because
//! of it; the module is to be fixed so that the tests pass, the test file left alone. The
//! checks run the tests with python3 after the run, then the function on hidden cases.

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
            fix the module (not the tests); the checks run the tests with python3, then the \
            function on hidden cases",
    generate,
};

/// One bug: the function's lines with the bug, the buggy line, its fix, the test file's
/// cases and hidden cases (arguments as Python source, expected value as Python source).
struct Bug {
    variant: &'static str,
    body: Vec<String>,
    wrong: String,
    right: String,
    cases: Vec<(String, String)>,
    /// Checked after the run but not in the test file: a "fix" that returns the test file's
    /// expected values, or that only makes its cases pass, fails them.
    hidden: Vec<(String, String)>,
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

/// Function names that fit each bug's function, in `bug`'s order.
const NAMES: [&[&str]; 6] = [
    &["total_of", "add_up", "sum_values", "order_total"],
    &["average", "mean_of", "average_score", "mean_value"],
    &["largest", "max_value", "biggest", "highest_score"],
    &["count_vowels", "vowel_count", "vowels_in"],
    &[
        "apply_discount",
        "sale_price",
        "discounted",
        "price_after_discount",
    ],
    &["is_leap", "is_leap_year", "leap_year", "has_feb_29"],
];

/// `n` cases drawn with `case`.
fn draw(
    rng: &mut Rng,
    n: usize,
    case: impl Fn(&mut Rng) -> (String, String),
) -> Vec<(String, String)> {
    (0..n).map(|_| case(&mut *rng)).collect()
}

fn bug(rng: &mut Rng, kind: usize, func: &str) -> Bug {
    match kind {
        0 => {
            let wrong = "    for i in range(1, len(values)):".to_string();
            let right = "    for i in range(len(values)):".to_string();
            let case = |len: (i64, i64)| {
                move |rng: &mut Rng| {
                    let n = rng.range(len.0, len.1) as usize;
                    let v = nums(rng, n, 1, 50);
                    (list(&v), v.iter().sum::<i64>().to_string())
                }
            };
            let cases = draw(rng, 2, case((3, 6)));
            let mut hidden = draw(rng, 1, case((4, 8)));
            hidden.extend(draw(rng, 1, case((1, 1))));
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
                hidden,
                purpose: "add up a list of numbers".to_string(),
            }
        }
        1 => {
            let wrong = "    return sum(values) / (len(values) + 1)".to_string();
            let right = "    return sum(values) / len(values)".to_string();
            let case = |rng: &mut Rng| {
                let n = rng.range(2, 5) as usize;
                let mean = rng.range(2, 40);
                let mut v = nums(rng, n - 1, 1, 2 * mean);
                let last = mean * n as i64 - v.iter().sum::<i64>();
                v.push(last);
                (list(&v), format!("{mean}"))
            };
            let cases = draw(rng, 2, case);
            let hidden = draw(rng, 2, case);
            Bug {
                variant: "mean",
                body: vec![format!("def {func}(values):"), wrong.clone()],
                wrong,
                right,
                cases,
                hidden,
                purpose: "return the average of a list of numbers".to_string(),
            }
        }
        2 => {
            let wrong = "        if v < best:".to_string();
            let right = "        if v > best:".to_string();
            let case = |rng: &mut Rng| {
                let len = rng.range(3, 7) as usize;
                let mut v = nums(rng, len, 1, 99);
                v[0] = 50;
                v[1] = 75;
                rng.shuffle(&mut v);
                (list(&v), v.iter().max().copied().unwrap_or(0).to_string())
            };
            let cases = draw(rng, 2, case);
            // The largest first, and numbers below zero.
            let mut first = nums(rng, 4, 1, 90);
            first.insert(0, 99);
            let negative = nums(rng, 4, -90, -1);
            let hidden = [first, negative]
                .iter()
                .map(|v| (list(v), v.iter().max().copied().unwrap_or(0).to_string()))
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
                hidden,
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
                "mountain",
                "furniture",
            ];
            let mut words: Vec<(String, String)> = rng
                .sample(&samples, 4)
                .into_iter()
                .map(|w| {
                    let n = w.chars().filter(|c| "aeiou".contains(*c)).count();
                    (py(w), n.to_string())
                })
                .collect();
            let hidden = words.split_off(2);
            Bug {
                variant: "vowels",
                body: vec![format!("def {func}(text):"), wrong.clone()],
                wrong,
                right,
                cases: words,
                hidden,
                purpose: "count the vowels (a, e, i, o, u) of a word".to_string(),
            }
        }
        4 => {
            let wrong = "    return price * percent / 100".to_string();
            let right = "    return price - price * percent / 100".to_string();
            let case = |rng: &mut Rng| {
                let price = rng.range(1, 20) * 20;
                let percent = *rng.pick(&[10, 20, 25, 30, 40]);
                (
                    format!("{price}, {percent}"),
                    format!("{}", price - price * percent / 100),
                )
            };
            let cases = draw(rng, 2, case);
            let hidden = draw(rng, 2, case);
            Bug {
                variant: "discount",
                body: vec![format!("def {func}(price, percent):"), wrong.clone()],
                wrong,
                right,
                cases,
                hidden,
                purpose: "return a price after a discount of some percent".to_string(),
            }
        }
        _ => {
            let wrong = "    return year % 4 == 0 and year % 100 != 0".to_string();
            let right =
                "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)".to_string();
            let leap_centuries = [1600, 2000, 2400];
            let century = *rng.pick(&leap_centuries);
            let ordinary = |rng: &mut Rng| {
                let y = rng.range(1901, 2099) / 4 * 4;
                if y % 100 == 0 {
                    y + 4
                } else {
                    y
                }
            };
            let leap = ordinary(rng);
            let cases = vec![
                (century.to_string(), "True".to_string()),
                (leap.to_string(), "True".to_string()),
                ((leap + 1).to_string(), "False".to_string()),
            ];
            // A century that is not a leap year (a fix that drops the rule of 100 passes the
            // test file), another leap year, another ordinary year.
            let plain_century = *rng.pick(&[1700, 1800, 1900, 2100, 2200]);
            let other = ordinary(rng);
            let hidden = vec![
                (plain_century.to_string(), "False".to_string()),
                (other.to_string(), "True".to_string()),
                ((other + 2).to_string(), "False".to_string()),
            ];
            Bug {
                variant: "leap_year",
                body: vec![format!("def {func}(year):"), wrong.clone()],
                wrong,
                right,
                cases,
                hidden,
                purpose: "tell whether a year is a leap year".to_string(),
            }
        }
    }
}

/// A Python program that calls `func` of `module` on each hidden case and fails, naming
/// the call, on the first wrong result.
fn hidden_check(module: &str, func: &str, cases: &[(String, String)]) -> String {
    let table = cases
        .iter()
        .map(|(args, want)| format!("(({args},), {want})"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "from {module} import {func}\n\
         for args, want in [{table}]:\n\
         \x20   got = {func}(*args)\n\
         \x20   assert got == want, '{func}%r gave %r, expected %r' % (args, got, want)\n"
    )
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let module = names.module(rng, words::MODULES, "py");
    let m = module.trim_end_matches(".py").to_string();
    let test = format!("test_{m}.py");
    names.take(&test);
    let kind = rng.below(NAMES.len());
    let func = rng.pick(NAMES[kind]).to_string();
    let b_ = bug(rng, kind, &func);
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
            other_data: Vec::new(),
        })
        .check(Check::Runs {
            program: "python3".to_string(),
            args: vec![
                "-c".to_string(),
                hidden_check(&m, &func, &b_.hidden),
            ],
            stdout: None,
            other_data: Vec::new(),
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
