//! `text_transform`: a list file turned into a new file: sorted (either way), without
//! duplicates, upper- or lower-cased, in reverse order, numbered, or its first or last
//! lines.

use super::text::{capitalised, lines, py, py_write, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "text_transform",
    category: Category::Single,
    language: "en",
    about: "a list file turned into a new file: sorted either way, duplicates removed, upper- \
            or lower-cased, reversed, numbered, or only its first or last lines",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let (pool, stems): (&[&str], &[&str]) = match rng.below(4) {
        0 => (
            words::PEOPLE,
            &["names", "guests", "team", "players", "contacts"],
        ),
        1 => (
            words::GROCERIES,
            &["shopping", "groceries", "pantry", "list"],
        ),
        2 => (words::CITIES, &["cities", "destinations", "trips", "stops"]),
        _ => (words::TITLES, &["books", "reading", "titles", "shelf"]),
    };
    let mut names = Names::default();
    let file = names.file(rng, stems, "txt");
    let out = names.file(
        rng,
        &["sorted", "out", "result", "clean", "new", "list", "final"],
        "txt",
    );
    let n = rng.range(5, 18) as usize;
    let items: Vec<String> = rng
        .sample(pool, n.min(pool.len()))
        .iter()
        .map(|s| s.to_string())
        .collect();
    let read = format!("items = [l.strip() for l in open({}, encoding='utf-8').read().splitlines() if l.strip()]\n", py(&file));
    let (variant, input, expected, phrasings, code): (&str, Vec<String>, Vec<String>, Vec<String>, String) =
        match rng.below(8) {
            0 => {
                let mut e = items.clone();
                e.sort();
                (
                    "sort",
                    items.clone(),
                    e,
                    vec![
                        format!("Sort the lines of {file} alphabetically and write them into {out}, one per line."),
                        format!("{file} -> {out}, sorted a to z"),
                        format!("Could you put the entries of {file} in alphabetical order? Save the sorted list as {out}."),
                    ],
                    "items.sort()".to_string(),
                )
            }
            1 => {
                let mut e = items.clone();
                e.sort();
                e.reverse();
                (
                    "sort_desc",
                    items.clone(),
                    e,
                    vec![
                        format!("Sort {file} in reverse alphabetical order (z to a) into {out}, one entry per line."),
                        format!("write the lines of {file} to {out} sorted descending (Z-A)"),
                        format!("I need {file} ordered from z down to a. Put the result in {out}."),
                    ],
                    "items.sort(reverse=True)".to_string(),
                )
            }
            2 => {
                let mut input = items.clone();
                for _ in 0..rng.range(2, 6) {
                    let dup = rng.pick(&items).clone();
                    let at = rng.range(1, input.len() as i64) as usize;
                    // Only after its first occurrence, so that the first-seen order is items'.
                    let first = input.iter().position(|x| *x == dup).unwrap_or(0);
                    input.insert(at.max(first + 1), dup);
                }
                (
                    "dedupe",
                    input,
                    items.clone(),
                    vec![
                        format!(
                            "{file} has some entries more than once. Write {out} with every entry \
                             only once, keeping the order in which they first appear."
                        ),
                        format!("remove duplicate lines from {file} (keep first occurrence, same order) -> {out}"),
                        format!("Please dedupe {file} into {out}: the first time a line appears it stays, later repeats go."),
                    ],
                    "seen = []\n[seen.append(x) for x in items if x not in seen]\nitems = seen".to_string(),
                )
            }
            3 => (
                "upper",
                items.clone(),
                items.iter().map(|s| s.to_uppercase()).collect(),
                vec![
                    format!("Write every line of {file} in capital letters into {out}, same order."),
                    format!("uppercase {file} -> {out}"),
                    format!("Can you make a copy of {file} called {out} where everything is UPPER CASE?"),
                ],
                "items = [x.upper() for x in items]".to_string(),
            ),
            4 => (
                "lower",
                items.iter().map(|s| if rng_free_title(s) { s.to_uppercase() } else { capitalised(s) }).collect(),
                items.clone(),
                vec![
                    format!("Convert {file} to lower case and save it as {out}, keeping the line order."),
                    format!("lowercase every line of {file}, output in {out}"),
                    format!("The capitals in {file} bother me. Write it again into {out}, all in small letters."),
                ],
                "items = [x.lower() for x in items]".to_string(),
            ),
            5 => {
                let mut e = items.clone();
                e.reverse();
                (
                    "reverse",
                    items.clone(),
                    e,
                    vec![
                        format!("Write the lines of {file} into {out} in reverse order (last line first)."),
                        format!("reverse the line order of {file} -> {out}"),
                        format!("Flip {file} upside down: its last line should be the first line of {out}, and so on."),
                    ],
                    "items.reverse()".to_string(),
                )
            }
            6 => (
                "number",
                items.clone(),
                items.iter().enumerate().map(|(i, s)| format!("{}. {s}", i + 1)).collect(),
                vec![
                    format!("Number the lines of {file}: write them into {out} as \"1. first\", \"2. second\" and so on."),
                    format!("{file} -> {out} with each line prefixed by its number, a dot and a space (1. xxx)"),
                    format!("Make a numbered copy of {file} named {out}; lines should look like `3. something`."),
                ],
                "items = ['%d. %s' % (i + 1, x) for i, x in enumerate(items)]".to_string(),
            ),
            _ => {
                let k = rng.range(2, (items.len() as i64 - 1).max(2)) as usize;
                if rng.chance(50) {
                    (
                        "head",
                        items.clone(),
                        items[..k].to_vec(),
                        vec![
                            format!("Copy the first {k} lines of {file} into {out}."),
                            format!("top {k} lines of {file} -> {out}"),
                            format!("I only need the beginning of {file}: its first {k} entries, saved as {out}."),
                        ],
                        format!("items = items[:{k}]"),
                    )
                } else {
                    (
                        "tail",
                        items.clone(),
                        items[items.len() - k..].to_vec(),
                        vec![
                            format!("Copy the last {k} lines of {file} into {out}, in their order."),
                            format!("last {k} lines of {file} -> {out}"),
                            format!("Keep just the final {k} entries of {file} and write them to {out}, same order."),
                        ],
                        format!("items = items[-{k}:]"),
                    )
                }
            }
        };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.input(&file, &lines(&input))
        .lines_are(&out, &expected, true)
        .phrased(rng, phrasings)
        .reference(&format!(
            "{read}{code}\n{}",
            py_write(&out, "'\\n'.join(items)")
        ));
    b.build()
}

/// Whether to write `word` all in capitals (else capitalised) in a lower-case task's input:
/// a fixed rule on the word, so that the input depends on the random stream only.
fn rng_free_title(word: &str) -> bool {
    word.len().is_multiple_of(3)
}
