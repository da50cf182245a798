//! `count_text`: counting in a text file: its lines (or non-empty lines), its words, the
//! lines containing a word, or the distinct entries of a list.

use super::text::{lines, py, py_write, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "count_text",
    category: Category::Single,
    language: "en",
    about: "counting in a text file: its lines or non-empty lines, its words, the lines that \
            contain a word, the distinct entries of a list",
    generate,
};

/// A document of `n` sentences, one per line, with some blank lines when `blanks`.
fn document(rng: &mut Rng, n: usize, blanks: bool) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..n {
        let len = rng.range(3, 11) as usize;
        out.push(sentence(rng, words::WORDS, len));
        if blanks && i + 1 < n && rng.chance(30) {
            out.push(String::new());
        }
    }
    out
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let out = names.file(rng, words::OUT_STEMS, "txt");
    match rng.below(4) {
        0 => {
            let file = names.file(rng, words::DOC_STEMS, "txt");
            let blanks = rng.chance(50);
            let size = rng.range(5, 30) as usize;
            let doc = document(rng, size, blanks);
            let non_empty = doc.iter().filter(|l| !l.is_empty()).count();
            let mut b = Builder::new(
                FAMILY.name,
                FAMILY.category,
                if blanks { "non_empty_lines" } else { "lines" },
            );
            b.input(&file, &lines(&doc));
            if blanks {
                b.number_is(&out, non_empty as f64, 0.0).phrased(
                    rng,
                    vec![
                        format!("How many non-empty lines does {file} have? Write the number into {out}."),
                        format!("count the lines of {file} that aren't blank and put the count in {out}"),
                        format!(
                            "Please count the lines with text on them in {file} (skip the empty \
                             ones) and save just the number as {out}."
                        ),
                    ],
                );
                b.reference(&format!(
                    "n = sum(1 for l in open({}).read().splitlines() if l.strip())\n{}",
                    py(&file),
                    py_write(&out, "str(n)")
                ));
            } else {
                b.number_is(&out, doc.len() as f64, 0.0).phrased(
                    rng,
                    vec![
                        format!("How many lines are in {file}? Write just that number into {out}."),
                        format!("line count of {file} -> {out}"),
                        format!(
                            "I need to know how long {file} is in lines. Count them and put the \
                             number, nothing else, in {out}."
                        ),
                    ],
                );
                b.reference(&format!(
                    "n = len(open({}).read().splitlines())\n{}",
                    py(&file),
                    py_write(&out, "str(n)")
                ));
            }
            b.build()
        }
        1 => {
            let file = names.file(rng, words::DOC_STEMS, "txt");
            let size = rng.range(3, 14) as usize;
            let doc = document(rng, size, false);
            let count: usize = doc.iter().map(|l| l.split_whitespace().count()).sum();
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "words");
            b.input(&file, &lines(&doc))
                .number_is(&out, count as f64, 0.0)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "How many words does {file} contain (words being separated by spaces \
                             or line breaks)? Put the number alone in {out}."
                        ),
                        format!("word count of {file}? save it to {out}"),
                        format!(
                            "My teacher wants the number of words of {file}. Could you count \
                             them and write only the number into {out}?"
                        ),
                    ],
                )
                .reference(&format!(
                    "n = len(open({}).read().split())\n{}",
                    py(&file),
                    py_write(&out, "str(n)")
                ));
            b.build()
        }
        2 => {
            let file = names.file(rng, words::DOC_STEMS, "txt");
            // A word that occurs in some lines, never inside another word.
            let (doc, word, count) = loop {
                let size = rng.range(6, 24) as usize;
                let doc = document(rng, size, false);
                let word = *rng.pick(words::WORDS);
                if word.len() < 3 {
                    continue;
                }
                let tokens = |l: &str| {
                    l.split(|c: char| !c.is_alphabetic())
                        .map(str::to_lowercase)
                        .collect::<Vec<_>>()
                };
                let whole = doc
                    .iter()
                    .filter(|l| tokens(l).iter().any(|t| t == word))
                    .count();
                let sub = doc
                    .iter()
                    .filter(|l| l.to_lowercase().contains(word))
                    .count();
                let exact = doc.iter().filter(|l| l.contains(word)).count();
                if whole == sub && sub == exact && whole > 0 && whole < doc.len() {
                    break (doc, word, whole);
                }
            };
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "matching");
            b.input(&file, &lines(&doc))
                .number_is(&out, count as f64, 0.0)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "How many lines of {file} contain the word \"{word}\"? Write the \
                             number into {out}."
                        ),
                        format!("count lines in {file} that mention {word}, number only -> {out}"),
                        format!(
                            "Go through {file} line by line and count the lines where the word \
                             {word} appears (a line counts once). Save the count in {out}."
                        ),
                    ],
                )
                .reference(&format!(
                    "n = sum(1 for l in open({}).read().splitlines() if {} in l)\n{}",
                    py(&file),
                    py(word),
                    py_write(&out, "str(n)")
                ));
            b.build()
        }
        _ => {
            let pool: &[&str] = if rng.chance(50) {
                words::CITIES
            } else {
                words::PEOPLE
            };
            let stem_pool: &[&str] = &[
                "visitors",
                "signups",
                "attendees",
                "guests",
                "cities",
                "entries",
            ];
            let file = names.file(rng, stem_pool, "txt");
            let distinct = rng.range(3, 9) as usize;
            let chosen = rng.sample(pool, distinct);
            let mut list: Vec<String> = chosen.iter().map(|s| s.to_string()).collect();
            for _ in 0..rng.range(3, 14) {
                list.push(rng.pick(&chosen).to_string());
            }
            rng.shuffle(&mut list);
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "distinct");
            b.input(&file, &lines(&list))
                .number_is(&out, distinct as f64, 0.0)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "{file} has one name per line, with repeats. How many different \
                             names are there? Write the number into {out}."
                        ),
                        format!("number of distinct entries in {file} -> {out}"),
                        format!(
                            "Some names in {file} come up more than once. Count each name only \
                             once and tell me how many there are, as a bare number in {out}."
                        ),
                    ],
                )
                .reference(&format!(
                    "n = len(set(l.strip() for l in open({}).read().splitlines() if l.strip()))\n{}",
                    py(&file),
                    py_write(&out, "str(n)")
                ));
            b.build()
        }
    }
}
