//! `column_math`: arithmetic over a CSV column: its sum, mean, largest or smallest value,
//! or the sum over the rows of one group.

use super::table::{Table, THEMES};
use super::text::{py, py_csv_rows, py_write, Names, PY_NUM};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "column_math",
    category: Category::Single,
    language: "en",
    about: "arithmetic over a CSV column: the sum, the mean (rounded), the largest or smallest \
            value, the sum over the rows of one group",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let size = rng.range(5, 16) as usize;
    let t = Table::generate(rng, theme, size);
    let mut names = Names::default();
    let file = t.file_name(rng, &mut names, "csv");
    let out = names.file(rng, words::OUT_STEMS, "txt");
    let col = *rng.pick(&t.nums);
    let c = t.header[col].clone();
    let values = t.column(col);
    let rows = py_csv_rows(&file, ',');
    let mut b;
    match rng.below(5) {
        0 => {
            let total: f64 = values.iter().sum();
            b = Builder::new(FAMILY.name, FAMILY.category, "sum");
            b.number_is(&out, total, 0.005).phrased(
                rng,
                vec![
                    format!("Compute the sum of the {c} values in {file} and store the result, nothing else, in {out}."),
                    format!("total of the {c} column in {file} -> {out}"),
                    format!("What do the {c} figures in {file} add up to? Put only the sum in {out}, please."),
                    format!("Sum {c} over every row of {file}; I want the bare number in a file called {out}."),
                ],
            );
            b.reference(&format!(
                "{rows}{PY_NUM}{}",
                py_write(
                    &out,
                    &format!("num(sum(float(r[{}]) for r in rows))", py(&c))
                )
            ));
        }
        1 => {
            let mean = values.iter().sum::<f64>() / values.len() as f64;
            b = Builder::new(FAMILY.name, FAMILY.category, "mean");
            b.number_is(&out, (mean * 100.0).round() / 100.0, 0.0051).phrased(
                rng,
                vec![
                    format!("What is the average {c} in {file}? Write it into {out}, rounded to two decimals."),
                    format!("mean of {c} in {file}, 2 decimal places -> {out}"),
                    format!(
                        "Please work out the mean value of the {c} column of {file} (all rows) \
                         and save it in {out}, rounded to 2 decimal places, number only."
                    ),
                ],
            );
            b.reference(&format!(
                "{rows}v = [float(r[{}]) for r in rows]\n{}",
                py(&c),
                py_write(&out, "'%.2f' % (sum(v) / len(v))")
            ));
        }
        2 | 3 => {
            let max = rng.chance(50);
            let best = if max {
                values.iter().copied().fold(f64::MIN, f64::max)
            } else {
                values.iter().copied().fold(f64::MAX, f64::min)
            };
            let (word, short) = if max {
                ("largest", "max")
            } else {
                ("smallest", "min")
            };
            b = Builder::new(FAMILY.name, FAMILY.category, "extreme");
            b.number_is(&out, best, 1e-9).phrased(
                rng,
                vec![
                    format!("What is the {word} {c} in {file}? Write just the number into {out}."),
                    format!("{short}({c}) from {file} -> {out}"),
                    format!("Look through the {c} column of {file} and put its {word} value alone in {out}."),
                ],
            );
            b.reference(&format!(
                "{rows}{PY_NUM}{}",
                py_write(
                    &out,
                    &format!("num({short}(float(r[{}]) for r in rows))", py(&c))
                )
            ));
        }
        _ => {
            let groups = t.groups();
            let g = rng.pick(&groups).clone();
            let gc = t.header[t.group].clone();
            let total: f64 = t
                .rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r[t.group] == g)
                .map(|(i, _)| t.value(i, col))
                .sum();
            b = Builder::new(FAMILY.name, FAMILY.category, "sum_where");
            b.number_is(&out, total, 0.005).phrased(
                rng,
                vec![
                    format!("In {file}, what is the total {c} of the rows whose {gc} is {g}? Write just the number into {out}."),
                    format!("sum {c} where {gc} = {g} in {file}, result to {out}"),
                    format!(
                        "I only care about {g} ({gc} column) in {file}: add up their {c} and write \
                         the total, nothing else, into {out}."
                    ),
                ],
            );
            b.reference(&format!(
                "{rows}{PY_NUM}{}",
                py_write(
                    &out,
                    &format!(
                        "num(sum(float(r[{}]) for r in rows if r[{}] == {}))",
                        py(&c),
                        py(&gc),
                        py(&g)
                    )
                )
            ));
        }
    }
    b.input(&file, &t.csv(','));
    b.build()
}
