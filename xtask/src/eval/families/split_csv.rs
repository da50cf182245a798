//! `split_csv`: a multi-step job: make a folder, split a CSV by a column into one file per
//! value there (header kept, rows in their order), and write a summary file with the
//! number of rows per value.

use super::table::{Table, THEMES};
use super::text::{py, py_csv_rows, Names};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "split_csv",
    category: Category::Multi,
    language: "en",
    about: "make a folder, split a CSV by a column into one file per value there (header kept, \
            rows in order), then write a summary with the row count per value",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let size = rng.range(6, 16) as usize;
    let t = Table::generate(rng, theme, size);
    let mut names = Names::default();
    let file = t.file_name(rng, &mut names, "csv");
    let gc = t.header[t.group].clone();
    let folder = format!("by_{gc}");
    names.take(&folder);
    let summary_stem = *rng.pick(&["summary", "counts", "overview", "index"]);
    let summary = format!("{folder}/{summary_stem}.txt");
    let groups = t.groups();
    let counts: Vec<(String, usize)> = groups
        .iter()
        .map(|g| {
            (
                g.clone(),
                t.rows.iter().filter(|r| &r[t.group] == g).count(),
            )
        })
        .collect();
    let sep = *rng.pick(&[": ", " = ", ","]);
    let example = format!("{}{sep}{}", groups[0], counts[0].1);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "split");
    b.input(&file, &t.csv(','));
    for g in &groups {
        let rows: Vec<Vec<String>> = t
            .rows
            .iter()
            .filter(|r| &r[t.group] == g)
            .cloned()
            .collect();
        b.check(Check::Csv {
            file: format!("{folder}/{g}.csv"),
            separator: ',',
            header: t.header.clone(),
            rows,
            ordered: true,
        });
    }
    let summary_lines: Vec<String> = counts.iter().map(|(g, n)| format!("{g}{sep}{n}")).collect();
    b.lines_are(&summary, &summary_lines, true);
    let summary_name = format!("{summary_stem}.txt");
    b.phrased(
        rng,
        vec![
            format!(
                "Make a folder {folder}. Split {file} by its {gc} column: for each {gc}, write \
                 {folder}/<{gc}>.csv with the header line and that {gc}'s rows in their original \
                 order. Then write {folder}/{summary_name} with one line per {gc}, sorted by name, \
                 like `{example}`."
            ),
            format!(
                "1) mkdir {folder}  2) one CSV per {gc} value of {file} in there, named after the \
                 value (e.g. {folder}/{}.csv), same header, rows in file order  3) \
                 {folder}/{summary_name}: lines `<{gc}>{sep}<number of rows>`, alphabetical",
                groups[0]
            ),
            format!(
                "I want {file} broken up per {gc}. Create the folder {folder} and put one file per \
                 {gc} in it, called after the {gc} with .csv at the end, each starting with the \
                 same header as {file} and keeping the row order. Finally add \
                 {folder}/{summary_name} listing each {gc} and its number of rows, alphabetically, \
                 written like {example}."
            ),
        ],
    )
    .reference(&format!(
        "import os\n{}os.makedirs({d}, exist_ok=True)\nheader = open({f}).read().splitlines()[0]\ngroups = sorted(set(r[{gc}] for r in rows))\ncols = header.split(',')\nfor g in groups:\n    with open(os.path.join({d}, g + '.csv'), 'w') as out:\n        out.write(header + '\\n')\n        for r in rows:\n            if r[{gc}] == g:\n                out.write(','.join(r[c] for c in cols) + '\\n')\nwith open({s}, 'w') as out:\n    for g in groups:\n        out.write(g + {sep} + str(sum(1 for r in rows if r[{gc}] == g)) + '\\n')\n",
        py_csv_rows(&file, ','),
        d = py(&folder),
        f = py(&file),
        gc = py(&gc),
        s = py(&summary),
        sep = py(sep)
    ));
    b.build()
}
