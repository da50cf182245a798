//! `columns_reorder`: a CSV rewritten with other columns: all of them in a new order, only
//! some of them, all but one, or some columns of the rows of one group.

use super::table::{Table, THEMES};
use super::text::{py, py_csv_rows, py_list, Names};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "columns_reorder",
    category: Category::Single,
    language: "en",
    about: "a CSV rewritten into a new file with other columns: all in a new order, only some, \
            all but one, or some columns of the rows of one group",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let size = rng.range(5, 14) as usize;
    let t = Table::generate(rng, theme, size);
    let mut names = Names::default();
    let file = t.file_name(rng, &mut names, "csv");
    let out = names.file(
        rng,
        &[
            "reordered",
            "trimmed",
            "export",
            "clean",
            "subset",
            "for_import",
        ],
        "csv",
    );
    let width = t.header.len();
    let all: Vec<usize> = (0..width).collect();
    let (variant, cols, keep_rows, phrasings): (&str, Vec<usize>, Option<String>, Vec<String>) =
        match rng.below(4) {
            0 => {
                let mut order = all.clone();
                while order == all {
                    rng.shuffle(&mut order);
                }
                let list = order
                    .iter()
                    .map(|&i| t.header[i].clone())
                    .collect::<Vec<_>>()
                    .join(", ");
                let csv_list = order
                    .iter()
                    .map(|&i| t.header[i].clone())
                    .collect::<Vec<_>>()
                    .join(",");
                (
                "reorder",
                order,
                None,
                vec![
                    format!("Rewrite {file} into {out} with its columns in this order: {list}. Keep every row, in the same order."),
                    format!("{file} -> {out}, columns reordered to {csv_list}"),
                    format!(
                        "The tool I import into wants the columns as {list}. Please write {out} \
                         from {file} with that column order (same rows, same row order)."
                    ),
                ],
            )
            }
            1 => {
                let k = rng.range(2, (width - 1) as i64) as usize;
                let pick = rng.sample(&all, k);
                let list = pick
                    .iter()
                    .map(|&i| t.header[i].clone())
                    .collect::<Vec<_>>()
                    .join(" and ");
                let csv_list = pick
                    .iter()
                    .map(|&i| t.header[i].clone())
                    .collect::<Vec<_>>()
                    .join(",");
                (
                "select",
                pick,
                None,
                vec![
                    format!("Make {out} from {file} keeping only the columns {list}, in that order, with the header line."),
                    format!("cut {file} down to columns {csv_list} -> {out}"),
                    format!("I just need {list} from {file}. Write those columns (in that order, all rows) to {out}."),
                ],
            )
            }
            2 => {
                let drop = rng.below(width);
                let keep: Vec<usize> = all.iter().copied().filter(|&i| i != drop).collect();
                let d = &t.header[drop];
                (
                "drop",
                keep,
                None,
                vec![
                    format!("Write a copy of {file} without the {d} column into {out}; the other columns stay in their order."),
                    format!("drop column {d} from {file}, save as {out}"),
                    format!("Please remove the {d} column. Leave {file} as it is and write the result to {out}."),
                ],
            )
            }
            _ => {
                let g = rng.pick(&t.groups()).clone();
                let gc = t.header[t.group].clone();
                let num = *rng.pick(&t.nums);
                let pick = vec![t.key, num];
                let (a, c) = (&t.header[t.key], &t.header[num]);
                (
                    "filter",
                    pick,
                    Some(g.clone()),
                    vec![
                        format!(
                        "From {file}, write {out} with the columns {a},{c} for the rows whose {gc} \
                         is {g} only (header line first, rows in their original order)."
                    ),
                        format!("{file}: rows with {gc}={g}, columns {a} and {c} -> {out}"),
                        format!(
                        "Could you pull the {g} rows out of {file} ({gc} column) into {out}? I \
                         only want their {a} and {c}, with a header."
                    ),
                    ],
                )
            }
        };
    let header: Vec<String> = cols.iter().map(|&i| t.header[i].clone()).collect();
    let rows: Vec<Vec<String>> = t
        .rows
        .iter()
        .filter(|r| keep_rows.as_ref().is_none_or(|g| &r[t.group] == g))
        .map(|r| cols.iter().map(|&i| r[i].clone()).collect())
        .collect();
    let filter = match &keep_rows {
        Some(g) => format!(
            "rows = [r for r in rows if r[{}] == {}]\n",
            py(&t.header[t.group]),
            py(g)
        ),
        None => String::new(),
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.input(&file, &t.csv(','))
        .check(Check::Csv {
            file: out.clone(),
            separator: ',',
            header: header.clone(),
            rows,
            ordered: true,
        })
        .phrased(rng, phrasings)
        .reference(&format!(
            "{}{filter}cols = {}\nwith open({}, 'w') as f:\n    f.write(','.join(cols) + '\\n')\n    for r in rows:\n        f.write(','.join(r[c] for c in cols) + '\\n')\n",
            py_csv_rows(&file, ','),
            py_list(&header),
            py(&out)
        ));
    b.build()
}
