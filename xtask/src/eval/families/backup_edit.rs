//! `backup_edit`: a multi-step job on one of the user's files: back it up (a copy beside it
//! or in a new folder), edit the original (a word replaced, a line added, a setting
//! changed), then write a figure about the result.

use super::text::{lines, py, py_write, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "backup_edit",
    category: Category::Multi,
    language: "en",
    about: "back up one of the user's files (beside it or in a new folder), edit the original (a \
            word replaced, a line added, a setting changed), then write a figure about the result",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    match rng.below(3) {
        0 => replace(rng, &mut names),
        1 => append(rng, &mut names),
        _ => setting(rng, &mut names),
    }
}

fn replace(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.file(rng, words::DOC_STEMS, "txt");
    let backup = format!("{}.bak", file.trim_end_matches(".txt"));
    names.take(&backup);
    let out = names.file(rng, &["count", "occurrences", "n", "hits"], "txt");
    let (old, new) = *rng.pick(&[
        ("river", "lake"),
        ("quiet", "calm"),
        ("bridge", "tower"),
        ("bread", "cake"),
        ("stone", "brick"),
        ("friend", "cousin"),
    ]);
    let (doc, count) = loop {
        let n = rng.range(4, 12) as usize;
        let doc: Vec<String> = (0..n)
            .map(|_| {
                let len = rng.range(5, 11) as usize;
                sentence(rng, words::WORDS, len)
            })
            .collect();
        let text = lines(&doc);
        let c = text.matches(old).count();
        if c >= 1 && !text.contains(new) {
            break (text, c);
        }
    };
    let after = doc.replace(old, new);
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "replace");
    b.editable(&file, &doc)
        .text_is(&backup, &doc)
        .text_is(&file, &after)
        .number_is(&out, count as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!(
                    "First copy {file} to {backup}. Then replace every \"{old}\" in {file} with \
                     \"{new}\". Finally write how many times \"{new}\" now appears in {file} into {out}."
                ),
                format!("cp {file} {backup}; in {file} change all {old} -> {new}; count of {new} in {file} -> {out}"),
                format!(
                    "Keep the current {file} as {backup}, then edit {file} so that each {old} \
                     becomes {new}. Afterwards tell me in {out} how many {new} there are in it \
                     (just the number)."
                ),
            ],
        )
        .reference(&format!(
            "import shutil\nshutil.copy({f}, {bk})\nt = open({f}).read().replace({o}, {n})\nopen({f}, 'w').write(t)\n{}",
            py_write(&out, &format!("str(t.count({}))", py(new))),
            f = py(&file),
            bk = py(&backup),
            o = py(old),
            n = py(new)
        ));
    b.build()
}

fn append(rng: &mut Rng, names: &mut Names) -> Instance {
    let (pool, stems): (&[&str], &[&str]) = if rng.chance(50) {
        (words::GROCERIES, &["shopping", "groceries", "to_buy"])
    } else {
        (words::PEOPLE, &["guests", "members", "players"])
    };
    let file = names.file(rng, stems, "txt");
    let folder = *rng.pick(&["backup", "old", "archive", "copies"]);
    names.take(folder);
    let out = names.file(rng, &["count", "total", "size", "lines"], "txt");
    let n = rng.range(3, 10) as usize;
    let picked: Vec<String> = rng
        .sample(pool, n + 1)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let items = picked[..n].to_vec();
    let extra = picked[n].clone();
    let mut after = items.clone();
    after.push(extra.clone());
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "append");
    b.editable(&file, &lines(&items))
        .text_is(&format!("{folder}/{file}"), &lines(&items))
        .text_is(&file, &lines(&after))
        .number_is(&out, after.len() as f64, 0.0)
        .phrased(
            rng,
            vec![
                format!(
                    "Back {file} up into a new folder {folder} first. After that, {extra} goes at \
                     the bottom of {file} (the backup keeps the old list), and {out} gets the \
                     number of lines {file} has then."
                ),
                format!("mkdir {folder}, cp {file} {folder}/, append \"{extra}\" to {file}, then line count of {file} -> {out}"),
                format!(
                    "Before changing {file}, save a copy of it in a new folder called {folder}. \
                     Then put {extra} at the end of {file}, and write how many entries it has \
                     after that into {out}."
                ),
            ],
        )
        .reference(&format!(
            "import os, shutil\nos.makedirs({d}, exist_ok=True)\nshutil.copy({f}, os.path.join({d}, {f}))\nwith open({f}, 'a') as fh:\n    fh.write({x} + '\\n')\n{}",
            py_write(&out, &format!("str(len(open({}).read().splitlines()))", py(&file))),
            d = py(folder),
            f = py(&file),
            x = py(&extra)
        ));
    b.build()
}

fn setting(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.file(rng, &["app", "settings", "service"], "conf");
    let backup = format!("{file}.orig");
    names.take(&backup);
    let out = names.file(rng, &["old_value", "previous", "was"], "txt");
    let keys = ["host", "port", "log_level", "workers", "theme", "timeout"];
    let values: Vec<(String, String)> = keys
        .iter()
        .map(|k| {
            let v = match *k {
                "host" => rng.pick(&["localhost", "0.0.0.0", "10.0.0.2"]).to_string(),
                "port" => rng.range(3000, 9000).to_string(),
                "log_level" => rng.pick(&["info", "warn", "error"]).to_string(),
                "workers" => rng.range(1, 16).to_string(),
                "theme" => rng.pick(words::COLOURS).to_string(),
                _ => rng.range(5, 120).to_string(),
            };
            (k.to_string(), v)
        })
        .collect();
    let k = rng.below(values.len());
    let (key, old) = values[k].clone();
    let new = match key.as_str() {
        "host" => "192.168.1.20".to_string(),
        "log_level" => "debug".to_string(),
        "theme" => {
            if old == "black" {
                "white".to_string()
            } else {
                "black".to_string()
            }
        }
        _ => (old.parse::<i64>().unwrap_or(0) + rng.range(1, 50)).to_string(),
    };
    let render = |vals: &[(String, String)]| {
        lines(
            &vals
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>(),
        )
    };
    let mut after = values.clone();
    after[k].1 = new.clone();
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "setting");
    b.editable(&file, &render(&values))
        .text_is(&backup, &render(&values))
        .text_is(&file, &render(&after))
        .text_is(&out, &old)
        .phrased(
            rng,
            vec![
                format!(
                    "Copy {file} to {backup}, then set {key} to {new} in {file}, and write the value \
                     {key} had before into {out}."
                ),
                format!("backup {file} as {backup}; {key}={new} in {file}; old {key} value -> {out}"),
                format!(
                    "I'm about to change {key}. Keep the current {file} as {backup}, change {key} \
                     to {new} in {file} (other lines unchanged) and note the previous value in {out}."
                ),
            ],
        )
        .reference(&format!(
            "import shutil\nshutil.copy({f}, {bk})\nls = open({f}).read().splitlines()\nold = [l.split('=', 1)[1] for l in ls if l.startswith({p})][0]\nls = [({p} + {n}) if l.startswith({p}) else l for l in ls]\nopen({f}, 'w').write('\\n'.join(ls) + '\\n')\n{}",
            py_write(&out, "old"),
            f = py(&file),
            bk = py(&backup),
            p = py(&format!("{key}=")),
            n = py(&new)
        ));
    b.build()
}
