//! `report_job`: a multi-step job over one CSV: make a folder and write three or four
//! small result files into it (row count, a column's total, the row with the largest
//! value, the number of distinct groups), and optionally a copy of the source.

use super::table::{Table, THEMES};
use super::text::{py, py_csv_rows, py_write, Names, PY_NUM};
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "report_job",
    category: Category::Multi,
    language: "en",
    about: "make a folder and write several small results about one CSV into it (row count, a \
            column's total, the row with the largest value, how many groups), optionally with \
            a copy of the source",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let theme = rng.pick(THEMES);
    let (t, col, top) = loop {
        let size = rng.range(5, 15) as usize;
        let t = Table::generate(rng, theme, size);
        let col = *rng.pick(&t.nums);
        if let Some(top) = t.unique_extreme(col, true) {
            break (t, col, top);
        }
    };
    let mut names = Names::default();
    let file = t.file_name(rng, &mut names, "csv");
    let folder = names.file(rng, &["report", "results", "stats", "analysis", "out"], "");
    let (kc, c, gc) = (
        t.header[t.key].clone(),
        t.header[col].clone(),
        t.header[t.group].clone(),
    );
    let total: f64 = t.column(col).iter().sum();
    let count_f = format!("{folder}/{}.txt", rng.pick(&["count", "rows", "n_rows"]));
    let total_f = format!(
        "{folder}/{}.txt",
        rng.pick(&["total", "sum", &format!("total_{c}")])
    );
    let top_f = format!("{folder}/{}.txt", rng.pick(&["top", "best", "max"]));
    let groups_f = format!(
        "{folder}/{}.txt",
        rng.pick(&["groups", &format!("{gc}_count"), "distinct"])
    );
    let with_groups = rng.chance(50);
    let with_copy = rng.chance(40);
    let mut b = Builder::new(
        FAMILY.name,
        FAMILY.category,
        if with_copy { "with_copy" } else { "report" },
    );
    b.input(&file, &t.csv(','))
        .number_is(&count_f, t.rows.len() as f64, 0.0)
        .number_is(&total_f, total, 0.005)
        .text_is(&top_f, &t.rows[top][t.key]);
    let mut steps = vec![
        format!("{count_f}: the number of data rows (not counting the header)"),
        format!("{total_f}: the sum of the {c} column"),
        format!("{top_f}: the {kc} of the row with the highest {c}"),
    ];
    let mut code = format!(
        "import os, shutil\n{}{PY_NUM}os.makedirs({d}, exist_ok=True)\n{}{}{}",
        py_csv_rows(&file, ','),
        py_write(&count_f, "str(len(rows))"),
        py_write(
            &total_f,
            &format!("num(sum(float(r[{}]) for r in rows))", py(&c))
        ),
        py_write(
            &top_f,
            &format!("max(rows, key=lambda r: float(r[{}]))[{}]", py(&c), py(&kc))
        ),
        d = py(&folder)
    );
    if with_groups {
        b.number_is(&groups_f, t.groups().len() as f64, 0.0);
        steps.push(format!(
            "{groups_f}: how many different {gc} values there are"
        ));
        code.push_str(&py_write(
            &groups_f,
            &format!("str(len(set(r[{}] for r in rows)))", py(&gc)),
        ));
    }
    if with_copy {
        let copy = format!("{folder}/{file}");
        b.text_is(&copy, &t.csv(','));
        steps.push(format!(
            "{copy}: a copy of {file} (leave the original where it is)"
        ));
        code.push_str(&format!("shutil.copy({}, {})\n", py(&file), py(&copy)));
    }
    let bullets: String = steps.iter().map(|s| format!("\n- {s}")).collect();
    let inline = steps.join("; ");
    b.phrased(
        rng,
        vec![
            format!("Make a folder named {folder} and write these files into it, each holding just the value:{bullets}"),
            format!("from {file}: mkdir {folder}, then {inline}"),
            format!(
                "I need a little report on {file}. Please create the folder {folder} and put in \
                 it: {inline}. Each file should contain only the answer."
            ),
        ],
    )
    .reference(&code);
    b.build()
}
