//! `script_run`: write a script that does something, run it, save what it prints. The
//! checks read the saved output and run the script itself (in a copy of the workspace),
//! then once more on other data (another numbers file, the CSV's values dealt out again,
//! another text, one more CSV file), comparing what it prints each time: Python scripts
//! over a numbers file, a CSV or a text, one that needs no input, and a shell script
//! listing files.

use super::table::{Table, THEMES};
use super::text::{lines, num, py, py_csv_rows, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "script_run",
    category: Category::Multi,
    language: "en",
    about: "write a script (Python, or shell) that does something with the workspace's files, \
            run it and save what it prints; the checks run the script too, also on other data",
    generate,
};

/// The files written over the copy for the second run, and what the script prints then.
type OtherRun = (Vec<(String, String)>, Vec<String>);

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let shell = rng.chance(20);
    let script = names.module(
        rng,
        &[
            "report",
            "running_total",
            "show",
            "filter",
            "table",
            "listing",
            "extract",
        ],
        if shell { "sh" } else { "py" },
    );
    let out = names.file(rng, &["output", "printed", "result", "out", "log"], "txt");
    let mut b;
    let printed: Vec<String>;
    let program: String;
    let task: String;
    // Other data for the script's input, and what the script prints on it: the check runs
    // the script on both (none for a script that reads nothing).
    let mut other: Option<OtherRun> = None;
    if shell {
        let count = rng.range(2, 5) as usize;
        // Plain lower-case names: every locale's `sort` agrees on their order.
        let csvs: Vec<String> = rng
            .sample(words::DATA_STEMS, count)
            .into_iter()
            .map(|s| format!("{s}.csv"))
            .collect();
        for f in &csvs {
            names.take(f);
        }
        let others: Vec<String> = (0..2)
            .map(|_| names.file(rng, words::DOC_STEMS, "txt"))
            .collect();
        let mut sorted = csvs.clone();
        sorted.sort();
        printed = sorted.clone();
        let extra = loop {
            let f = format!("{}.csv", rng.pick(words::DATA_STEMS));
            if names.take(&f) {
                break f;
            }
        };
        sorted.push(extra.clone());
        sorted.sort();
        other = Some((vec![(extra, "a,b\n3,4\n".to_string())], sorted));
        b = Builder::new(FAMILY.name, FAMILY.category, "shell_list");
        for f in csvs.iter().chain(&others) {
            b.input(f, "a,b\n1,2\n");
        }
        task = "prints the names of the .csv files in the current folder, sorted, one per line"
            .to_string();
        program = "for f in $(ls *.csv | sort); do echo \"$f\"; done\n".to_string();
    } else {
        match rng.below(4) {
            0 => {
                let file = names.file(rng, &["numbers", "amounts", "readings", "steps"], "txt");
                let numbers = |rng: &mut Rng| {
                    let count = rng.range(4, 12) as usize;
                    let values: Vec<i64> = (0..count).map(|_| rng.range(1, 99)).collect();
                    let mut acc = 0;
                    let totals: Vec<String> = values
                        .iter()
                        .map(|v| {
                            acc += v;
                            acc.to_string()
                        })
                        .collect();
                    let text = lines(&values.iter().map(|v| v.to_string()).collect::<Vec<_>>());
                    (text, totals)
                };
                let (text, totals) = numbers(rng);
                let (other_text, other_totals) = numbers(rng);
                printed = totals;
                other = Some((vec![(file.clone(), other_text)], other_totals));
                b = Builder::new(FAMILY.name, FAMILY.category, "running_total");
                b.input(&file, &text);
                task = format!("reads the numbers in {file} (one per line) and prints the running total after each one, one per line");
                program = format!(
                    "t = 0\nfor l in open({}).read().split():\n    t += int(l)\n    print(t)\n",
                    py(&file)
                );
            }
            1 => {
                let theme = rng.pick(THEMES);
                let size = rng.range(5, 12) as usize;
                let t = Table::generate(rng, theme, size);
                let file = t.file_name(rng, &mut names, "csv");
                let col = *rng.pick(&t.nums);
                let mut values = t.column(col);
                values.sort_by(f64::total_cmp);
                let cut = values[values.len() / 2].floor();
                let (kc, c) = (t.header[t.key].clone(), t.header[col].clone());
                let above = |t: &Table| -> Vec<String> {
                    t.rows
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| t.value(*i, col) > cut)
                        .map(|(_, r)| r[t.key].clone())
                        .collect()
                };
                printed = above(&t);
                // The same rows with the column's values dealt out again.
                let mut shuffled = t.clone();
                for _ in 0..10 {
                    let mut cells: Vec<String> = t.rows.iter().map(|r| r[col].clone()).collect();
                    rng.shuffle(&mut cells);
                    for (row, cell) in shuffled.rows.iter_mut().zip(cells) {
                        row[col] = cell;
                    }
                    if above(&shuffled) != printed {
                        break;
                    }
                }
                other = Some((vec![(file.clone(), shuffled.csv(','))], above(&shuffled)));
                b = Builder::new(FAMILY.name, FAMILY.category, "csv_filter");
                b.input(&file, &t.csv(','));
                let cut_s = num(cut);
                task = format!("reads {file} and prints the {kc} of every row whose {c} is greater than {cut_s}, one per line, in file order");
                program = format!(
                    "{}for r in rows:\n    if float(r[{}]) > {cut}:\n        print(r[{}])\n",
                    py_csv_rows(&file, ','),
                    py(&c),
                    py(&kc)
                );
            }
            2 => {
                let file = names.file(rng, words::DOC_STEMS, "txt");
                let word =
                    *rng.pick(&["river", "light", "house", "bread", "stars", "night", "tea"]);
                let capital = super::text::capitalised(word);
                // A text where the word occurs (never capitalised), with what grep prints.
                let text_with = |rng: &mut Rng| loop {
                    let n = rng.range(5, 14) as usize;
                    let doc: Vec<String> = (0..n)
                        .map(|_| {
                            let len = rng.range(4, 10) as usize;
                            sentence(rng, words::WORDS, len)
                        })
                        .collect();
                    if doc.iter().any(|l| l.contains(word))
                        && !doc.iter().any(|l| l.contains(&capital))
                    {
                        let found: Vec<String> = doc
                            .iter()
                            .enumerate()
                            .filter(|(_, l)| l.contains(word))
                            .map(|(i, l)| format!("{}: {l}", i + 1))
                            .collect();
                        break (lines(&doc), found);
                    }
                };
                let (doc, found) = text_with(rng);
                let (other_doc, other_found) = text_with(rng);
                printed = found;
                other = Some((vec![(file.clone(), other_doc)], other_found));
                b = Builder::new(FAMILY.name, FAMILY.category, "grep");
                b.input(&file, &doc);
                task = format!("prints every line of {file} that contains \"{word}\", each prefixed with its line number and \": \" (like `3: the line`)");
                program = format!(
                    "for i, l in enumerate(open({}).read().splitlines(), 1):\n    if {} in l:\n        print(str(i) + ': ' + l)\n",
                    py(&file),
                    py(word)
                );
            }
            _ => {
                let k = rng.range(2, 12);
                let n = rng.range(5, 12);
                printed = (1..=n).map(|i| format!("{k} x {i} = {}", k * i)).collect();
                b = Builder::new(FAMILY.name, FAMILY.category, "table");
                task = format!("prints the multiplication table of {k} from 1 to {n}, one line each, like `{k} x 1 = {k}`");
                program = format!(
                    "for i in range(1, {n} + 1):\n    print('{k} x %d = %d' % (i, {k} * i))\n"
                );
            }
        }
    }
    let run = if shell {
        format!("sh {script}")
    } else {
        format!("python3 {script}")
    };
    let interpreter = if shell { "sh" } else { "python3" };
    b.lines_are(&out, &printed, true).check(Check::Runs {
        program: interpreter.to_string(),
        args: vec![script.clone()],
        stdout: Some((printed.clone(), true)),
        other_data: Vec::new(),
    });
    if let Some((files, expected)) = other {
        b.check(Check::Runs {
            program: interpreter.to_string(),
            args: vec![script.clone()],
            stdout: Some((expected, true)),
            other_data: files,
        });
    }
    b.phrased(
            rng,
            vec![
                format!("I need {script}, a {} script that {task}. Run it (`{run}`) and put whatever it prints into {out}.", if shell { "shell" } else { "Python" }),
                format!("create {script}: {task}; then run it and put its output in {out}"),
                format!(
                    "I'd like a small script, {script}, that {task}. Please write it, run it \
                     (`{run}`), and keep its output in {out}. I'll run the script again myself later."
                ),
            ],
        )
        .reference(&format!(
            "import subprocess\nopen({s}, 'w').write({p})\nout = subprocess.run([{cmd}, {s}], capture_output=True, text=True, check=True).stdout\nopen({o}, 'w').write(out)\n",
            s = py(&script),
            p = py(&program),
            cmd = py(if shell { "sh" } else { "python3" }),
            o = py(&out)
        ));
    b.build()
}
