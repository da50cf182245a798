//! `replace_all`: every occurrence of a word replaced in one of the user's files, in
//! place: a word in a text, a call in a JavaScript file, a category in a CSV. A file beside
//! it holding the same word is not to be touched.

use super::table::{Table, THEMES};
use super::text::{lines, py, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "replace_all",
    category: Category::Edit,
    language: "en",
    about: "every occurrence of a word replaced in place in one of the user's files (a word in \
            a text, a call in a JavaScript file, a category in a CSV); a file beside it with the \
            same word stays as it is",
    generate,
};

/// A text of `n` lines where `word` occurs on several of them (at least twice in all).
fn text_with(rng: &mut Rng, word: &str, n: usize) -> Vec<String> {
    loop {
        let doc: Vec<String> = (0..n)
            .map(|_| {
                let len = rng.range(4, 10) as usize;
                let mut s = sentence(rng, words::WORDS, len);
                if rng.chance(45) {
                    let mut parts: Vec<String> = s.split(' ').map(str::to_string).collect();
                    let at = rng.range(1, parts.len() as i64 - 1).max(1) as usize;
                    parts.insert(at, word.to_string());
                    s = parts.join(" ");
                }
                s
            })
            .collect();
        if doc.iter().map(|l| l.matches(word).count()).sum::<usize>() >= 2 {
            return doc;
        }
    }
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let (variant, file, before, old, new, other, other_text, phrasings) = match rng.below(3) {
        0 => {
            let pairs = [
                ("colour", "color"),
                ("favourite", "favorite"),
                ("centre", "center"),
                ("organise", "organize"),
                ("grey", "gray"),
                ("travelling", "traveling"),
                ("catalogue", "catalog"),
                ("neighbour", "neighbor"),
            ];
            let (old, new) = *rng.pick(&pairs);
            let (old, new) = if rng.chance(30) {
                (new, old)
            } else {
                (old, new)
            };
            let file = names.file(rng, words::DOC_STEMS, "txt");
            let other = names.file(rng, words::DOC_STEMS, "txt");
            let size = rng.range(4, 14) as usize;
            let before = lines(&text_with(rng, old, size));
            let other_size = rng.range(2, 5) as usize;
            let other_text = lines(&text_with(rng, old, other_size));
            let phrasings = vec![
                format!("In {file}, replace every \"{old}\" with \"{new}\". Don't change anything else."),
                format!("change all occurrences of {old} to {new} in {file}"),
                format!(
                    "I'm switching spelling: in {file}, every {old} should become {new}. All of \
                     them, please, and leave the rest of the text exactly as it is."
                ),
            ];
            (
                "text",
                file,
                before,
                old.to_string(),
                new.to_string(),
                other,
                other_text,
                phrasings,
            )
        }
        1 => {
            let (old, new) = *rng.pick(&[
                ("console.log", "logger.debug"),
                ("console.log", "log.info"),
                ("fetchJson", "getJson"),
                ("alert", "notify"),
                ("var ", "let "),
            ]);
            let file = names.file(
                rng,
                &["app", "main", "index", "widget", "cart", "form"],
                "js",
            );
            let other = names.file(rng, &["legacy", "vendor", "old_app", "helpers"], "js");
            let body = |rng: &mut Rng, n: usize| {
                let mut out = Vec::new();
                for i in 0..n {
                    let noun = *rng.pick(words::NOUNS);
                    let line = match (old, rng.below(3)) {
                        ("var ", 0) => format!("var {noun}{i} = {};", rng.range(0, 99)),
                        ("var ", _) => format!("const {noun}Label{i} = \"{noun}\";"),
                        (_, 0) | (_, 1) => {
                            format!("{old}(\"{noun} ready\", {});", rng.range(1, 50))
                        }
                        _ => format!("const {noun}{i} = compute(\"{noun}\");"),
                    };
                    out.push(line);
                }
                out
            };
            let size = rng.range(4, 12) as usize;
            let mut code = body(rng, size);
            // At least two occurrences.
            code.push(if old == "var " {
                "var done = true;".to_string()
            } else {
                format!("{old}(\"done\");")
            });
            code.insert(
                0,
                if old == "var " {
                    "var started = Date.now();".to_string()
                } else {
                    format!("{old}(\"start\");")
                },
            );
            let before = lines(&code);
            let other_text = lines(&[if old == "var " {
                "var legacy = 1;".to_string()
            } else {
                format!("{old}(\"legacy\");")
            }]);
            let shown_old = old.trim();
            let shown_new = new.trim();
            let phrasings = vec![
                format!("Replace {shown_old} with {shown_new} everywhere in {file}."),
                format!("in {file} swap every `{shown_old}` for `{shown_new}`, keep the rest of the code as is"),
                format!(
                    "We're moving off {shown_old}. Please edit {file} so each {shown_old} becomes \
                     {shown_new} (all of them), without touching anything else."
                ),
            ];
            (
                "code",
                file,
                before,
                old.to_string(),
                new.to_string(),
                other,
                other_text,
                phrasings,
            )
        }
        _ => {
            let theme = rng.pick(THEMES);
            let size = rng.range(5, 14) as usize;
            let t = Table::generate(rng, theme, size);
            let groups = t.groups();
            let old = rng.pick(&groups).clone();
            let new = format!("{old}_{}", rng.pick(&["new", "2", "main", "old", "x"]));
            let file = t.file_name(rng, &mut names, "csv");
            let other = format!("{}.bak", file.trim_end_matches(".csv"));
            names.take(&other);
            let before = t.csv(',');
            let other_text = before.clone();
            let gc = &t.header[t.group];
            let phrasings = vec![
                format!("In {file}, rename the {gc} {old} to {new} on every row. Leave everything else as it is."),
                format!("{file}: {gc} value {old} -> {new} everywhere (edit the file in place)"),
                format!(
                    "Every row of {file} whose {gc} is {old} should say {new} instead. Please \
                     fix the file itself; {other} is my backup, don't touch it."
                ),
            ];
            ("csv", file, before, old, new, other, other_text, phrasings)
        }
    };
    let after = if variant == "csv" {
        // Only whole cells of the group column hold the value.
        before
            .lines()
            .map(|l| {
                l.split(',')
                    .map(|c| if c == old { new.as_str() } else { c })
                    .collect::<Vec<_>>()
                    .join(",")
            })
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    } else {
        before.replace(&old, &new)
    };
    let code = if variant == "csv" {
        format!(
            "text = open({f}).read()\nout = '\\n'.join(','.join({new} if c == {old} else c for c in l.split(',')) for l in text.splitlines()) + '\\n'\nopen({f}, 'w').write(out)\n",
            f = py(&file),
            old = py(&old),
            new = py(&new)
        )
    } else {
        format!(
            "text = open({f}, encoding='utf-8').read()\nopen({f}, 'w', encoding='utf-8').write(text.replace({}, {}))\n",
            py(&old),
            py(&new),
            f = py(&file)
        )
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.editable(&file, &before)
        .input(&other, &other_text)
        .text_is(&file, &after)
        .phrased(rng, phrasings)
        .reference(&code);
    b.build()
}
