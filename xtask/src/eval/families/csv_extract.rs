//! `csv_extract`: a fact read off a CSV file: one cell looked up by its row's name, the
//! row with the largest or smallest number, the rows of one group, or how many rows pass
//! a threshold.

use super::table::{Table, THEMES};
use super::text::{num, py, py_csv_rows, py_write, Names, PY_NUM};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "csv_extract",
    category: Category::Single,
    language: "en",
    about: "a fact read off a CSV file: a cell looked up by its row's name, the row with the \
            largest or smallest number, the names in one group, how many rows pass a threshold",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let rows = rng.range(6, 14) as usize;
    let mut names = Names::default();
    match rng.below(4) {
        0 => {
            let t = Table::generate(rng, theme, rows);
            let file = t.file_name(rng, &mut names, "csv");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            lookup(rng, &t, &file, &out)
        }
        1 => {
            // Regenerated until the column has one largest (or smallest) value.
            let max = rng.chance(60);
            let (t, col, row) = loop {
                let t = Table::generate(rng, theme, rows);
                let col = *rng.pick(&t.nums);
                if let Some(row) = t.unique_extreme(col, max) {
                    break (t, col, row);
                }
            };
            let file = t.file_name(rng, &mut names, "csv");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            extreme(rng, &t, &file, &out, col, row, max)
        }
        2 => {
            let t = Table::generate(rng, theme, rows);
            let file = t.file_name(rng, &mut names, "csv");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            group(rng, &t, &file, &out)
        }
        _ => {
            let t = Table::generate(rng, theme, rows);
            let file = t.file_name(rng, &mut names, "csv");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            threshold(rng, &t, &file, &out)
        }
    }
}

fn lookup(rng: &mut Rng, t: &Table, file: &str, out: &str) -> Instance {
    let row = rng.below(t.rows.len());
    let col = *rng.pick(&t.nums);
    let (kc, c) = (&t.header[t.key], &t.header[col]);
    let key = &t.rows[row][t.key];
    let value = t.value(row, col);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "lookup");
    b.input(file, &t.csv(','))
        .number_is(out, value, 1e-9)
        .phrased(
            rng,
            vec![
                format!("What is the {c} of {key} in {file}? Write just the value into {out}."),
                format!(
                    "{file} has one row per {kc}. Look up the row for {key} and put its {c} in \
                     {out} - only the number, nothing else."
                ),
                format!("need the {c} for {kc} {key} from {file}, save the number alone to {out}"),
                format!(
                    "Could you open {file}, find {key} in the {kc} column and tell me its {c}? \
                     Please write the number by itself into {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}v = [r[{c}] for r in rows if r[{kc}] == {key}][0]\n{}",
            py_csv_rows(file, ','),
            py_write(out, "v"),
            c = py(c),
            kc = py(kc),
            key = py(key)
        ));
    b.build()
}

fn extreme(
    rng: &mut Rng,
    t: &Table,
    file: &str,
    out: &str,
    col: usize,
    row: usize,
    max: bool,
) -> Instance {
    let (kc, c) = (&t.header[t.key], &t.header[col]);
    let (most, word, short) = if max {
        ("highest", "largest", "max")
    } else {
        ("lowest", "smallest", "min")
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "extreme");
    b.input(file, &t.csv(','))
        .text_is(out, &t.rows[row][t.key])
        .phrased(
            rng,
            vec![
                format!("Which {kc} in {file} has the {most} {c}? Write only its {kc} into {out}."),
                format!(
                    "Find the row of {file} with the {word} value in the {c} column and write \
                     that row's {kc} (just the {kc}, no other text) to {out}."
                ),
                format!("{file}: {kc} with the {short} {c} -> {out} (name only)"),
                format!(
                    "Quick one: in {file}, which {kc} has the {word} {c}? Put just that {kc} in \
                     {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}best = {}(rows, key=lambda r: float(r[{c}]))\n{}",
            py_csv_rows(file, ','),
            short,
            py_write(out, &format!("best[{}]", py(kc))),
            c = py(c)
        ));
    b.build()
}

fn group(rng: &mut Rng, t: &Table, file: &str, out: &str) -> Instance {
    let groups = t.groups();
    let g = rng.pick(&groups).clone();
    let (kc, gc) = (&t.header[t.key], &t.header[t.group]);
    let members: Vec<String> = t
        .rows
        .iter()
        .filter(|r| r[t.group] == g)
        .map(|r| r[t.key].clone())
        .collect();
    let ordered = rng.chance(50);
    let order = if ordered {
        " in the order they appear in the file"
    } else {
        ""
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "group");
    b.input(file, &t.csv(','))
        .lines_are(out, &members, ordered)
        .phrased(
            rng,
            vec![
                format!(
                    "List every {kc} in {file} whose {gc} is {g}, one per line{order}, into {out}."
                ),
                format!(
                    "Please write the {kc} of each row of {file} with {gc} = {g} into {out}: one \
                     {kc} per line{order}, nothing else in the file."
                ),
                format!(
                    "{file} -> {out}: the {kc} values where {gc} is \"{g}\", one a line{order}"
                ),
            ],
        )
        .reference(&format!(
            "{}keep = [r[{kc}] for r in rows if r[{gc}] == {g}]\n{}",
            py_csv_rows(file, ','),
            py_write(out, "'\\n'.join(keep)"),
            kc = py(kc),
            gc = py(gc),
            g = py(&g)
        ));
    b.build()
}

fn threshold(rng: &mut Rng, t: &Table, file: &str, out: &str) -> Instance {
    let col = *rng.pick(&t.nums);
    let c = &t.header[col];
    let mut values = t.column(col);
    values.sort_by(f64::total_cmp);
    // A whole number strictly between two values of the column, so that no row is on it.
    let mut cut = None;
    for _ in 0..20 {
        let i = rng.range(1, values.len() as i64 - 2) as usize;
        let (lo, hi) = (values[i - 1], values[i]);
        let candidate = (lo.floor() + 1.0).max(((lo + hi) / 2.0).round());
        if candidate > lo && candidate < hi {
            cut = Some(candidate);
            break;
        }
    }
    let cut = cut.unwrap_or(values[0].floor() - 1.0);
    let count = values.iter().filter(|&&v| v > cut).count();
    let cut_text = num(cut);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "threshold");
    b.input(file, &t.csv(','))
        .number_is(out, count as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!(
                    "How many rows of {file} have a {c} greater than {cut_text}? Write just the \
                     count into {out}."
                ),
                format!("count the entries in {file} with {c} over {cut_text} and put the number in {out}"),
                format!(
                    "In {file}, how many records have {c} above {cut_text}? I only need the \
                     number, saved in {out}."
                ),
            ],
        )
        .reference(&format!(
            "{}{PY_NUM}n = sum(1 for r in rows if float(r[{}]) > {cut})\n{}",
            py_csv_rows(file, ','),
            py(c),
            py_write(out, "str(n)")
        ));
    b.build()
}
