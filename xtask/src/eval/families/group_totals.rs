//! `group_totals`: per-group figures of a CSV written as a new CSV: the sum of a column
//! per group, the number of rows per group or the largest value per group, sorted as
//! asked.

use super::table::{Table, THEMES};
use super::text::{num, py, py_csv_rows, Names, PY_NUM};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "group_totals",
    category: Category::Single,
    language: "en",
    about: "per-group figures of a CSV written as a new CSV with a given header: the sum of a \
            column, the row count or the largest value per group, sorted as asked",
    generate,
};

/// How the result rows are sorted.
#[derive(Clone, Copy, PartialEq)]
enum Order {
    ByName,
    ByValueDesc,
    Any,
}

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let (what, order) = (
        rng.below(3),
        *rng.pick(&[Order::ByName, Order::ByValueDesc, Order::Any]),
    );
    // Regenerated until sorting by value has no ties.
    let (t, col, result) = loop {
        let size = rng.range(6, 18) as usize;
        let t = Table::generate(rng, theme, size);
        let col = *rng.pick(&t.nums);
        let mut result: Vec<(String, f64)> = t
            .groups()
            .into_iter()
            .map(|g| {
                let values: Vec<f64> = (0..t.rows.len())
                    .filter(|&i| t.rows[i][t.group] == g)
                    .map(|i| t.value(i, col))
                    .collect();
                let v = match what {
                    0 => values.iter().sum(),
                    1 => values.len() as f64,
                    _ => values.iter().copied().fold(f64::MIN, f64::max),
                };
                (g, v)
            })
            .collect();
        if order == Order::ByValueDesc {
            result.sort_by(|a, b| b.1.total_cmp(&a.1));
            if result.windows(2).any(|w| w[0].1 == w[1].1) {
                continue;
            }
        }
        break (t, col, result);
    };
    let mut names = Names::default();
    let file = t.file_name(rng, &mut names, "csv");
    let out_stems: &[&str] = &[
        "totals",
        "per_group",
        "summary",
        "by_group",
        "breakdown",
        "rollup",
    ];
    let out = names.file(rng, out_stems, "csv");
    let gc = t.header[t.group].clone();
    let c = t.header[col].clone();
    let (value_name, variant, phrase, agg) = match what {
        0 => (
            rng.pick(&["total", "sum", format!("total_{c}").as_str()])
                .to_string(),
            "sum",
            format!("the total {c}"),
            format!("sum(float(r[{}]) for r in rs)", py(&c)),
        ),
        1 => (
            rng.pick(&["count", "rows", "n"]).to_string(),
            "count",
            "the number of rows".to_string(),
            "len(rs)".to_string(),
        ),
        _ => (
            rng.pick(&["max", "largest", format!("max_{c}").as_str()])
                .to_string(),
            "max",
            format!("the largest {c}"),
            format!("max(float(r[{}]) for r in rs)", py(&c)),
        ),
    };
    let sort_words = match order {
        Order::ByName => format!(", sorted by {gc}"),
        Order::ByValueDesc => format!(", largest {value_name} first"),
        Order::Any => String::new(),
    };
    let header = vec![gc.clone(), value_name.clone()];
    let rows: Vec<Vec<String>> = result
        .iter()
        .map(|(g, v)| vec![g.clone(), num(*v)])
        .collect();
    let py_sort = match order {
        Order::ByName => "out.sort()".to_string(),
        Order::ByValueDesc => "out.sort(key=lambda x: -x[1])".to_string(),
        Order::Any => String::new(),
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.input(&file, &t.csv(','))
        .check(Check::Csv {
            file: out.clone(),
            separator: ',',
            header: header.clone(),
            rows,
            ordered: order != Order::Any,
        })
        .phrased(
            rng,
            vec![
                format!(
                    "From {file}, make {out} with one row per {gc} giving {phrase} for that {gc}. \
                     Its header line must be {gc},{value_name}{sort_words}."
                ),
                format!(
                    "group {file} by {gc} and write {phrase} per group to {out} (columns: \
                     {gc},{value_name}){sort_words}"
                ),
                format!(
                    "I'd like a small summary of {file}: for each {gc}, {phrase}. Please save it \
                     as a CSV file {out} with the header \"{gc},{value_name}\" and one line per \
                     {gc}{sort_words}."
                ),
            ],
        )
        .reference(&format!(
            "{}{PY_NUM}groups = sorted(set(r[{gcp}] for r in rows))\nout = []\nfor g in groups:\n    rs = [r for r in rows if r[{gcp}] == g]\n    out.append((g, {agg}))\n{py_sort}\nwith open({}, 'w') as f:\n    f.write({} + '\\n')\n    for g, v in out:\n        f.write(g + ',' + num(v) + '\\n')\n",
            py_csv_rows(&file, ','),
            py(&out),
            py(&format!("{gc},{value_name}")),
            gcp = py(&gc),
        ));
    b.build()
}
