//! `ask_user`: the task needs something only the user knows; the harness answers the
//! question with a random value (`--answer`) and the output must use it: a greeting with
//! the user's name, as many numbered lines as the user says, a seeded number times the
//! user's factor, the total of the column the user names, an item the user names added
//! to a list.

use super::table::{Table, THEMES};
use super::text::{capitalised, lines, py, py_csv_rows, py_write, Names, PY_NUM};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "ask_user",
    category: Category::Single,
    language: "en",
    about: "needs a value only the user knows (the harness answers the question with a random \
            one): a greeting with their name, as many numbered lines as they say, a number times \
            their factor, the total of the column they name, an item they name added to a list",
    generate,
};

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    match rng.below(5) {
        0 => {
            let out = names.file(rng, &["greeting", "hello", "welcome", "card"], "txt");
            let person = *rng.pick(words::PEOPLE);
            let name = capitalised(person);
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "greeting");
            b.answer(&name)
                .text_is(&out, &format!("Hello, {name}!"))
                .phrased(
                    rng,
                    vec![
                        format!("I'd like {out} to greet me with \"Hello, <my name>!\" - you'll have to ask me my name first."),
                        format!("ask what my name is and put a greeting in {out} exactly like: Hello, NAME!"),
                        format!(
                            "You don't know my name yet - ask me. Then create {out} containing \
                             just the line Hello, followed by a space, my name and an \
                             exclamation mark."
                        ),
                    ],
                )
                .reference(&py_write(&out, &py(&format!("Hello, {name}!"))));
            b.build()
        }
        1 => {
            let out = names.file(
                rng,
                &["plan", "schedule", "itinerary", "sheet", "labels"],
                "txt",
            );
            let n = rng.range(3, 9);
            let label = *rng.pick(&["Day", "Week", "Seat", "Table", "Round", "Stage"]);
            let thing = match label {
                "Day" => "days my trip lasts",
                "Week" => "weeks the course runs",
                "Seat" => "seats I booked",
                "Table" => "tables we need",
                "Round" => "rounds the quiz has",
                _ => "stages the race has",
            };
            let expected: Vec<String> = (1..=n).map(|i| format!("{label} {i}")).collect();
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "numbered");
            b.answer(&n.to_string())
                .lines_are(&out, &expected, true)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "You don't know how many {thing} - ask me. Once I've told you, fill \
                             {out} with one numbered line each: {label} 1, {label} 2, and so on."
                        ),
                        format!("ask how many {thing}, then fill {out} with lines \"{label} 1\" .. \"{label} N\""),
                        format!(
                            "I'll tell you how many {thing} when you ask. Write {out} with a \
                             line for each, like \"{label} 1\", \"{label} 2\", ..."
                        ),
                    ],
                )
                .reference(&py_write(
                    &out,
                    &format!("'\\n'.join('{label} %d' % i for i in range(1, {n} + 1))"),
                ));
            b.build()
        }
        2 => {
            let file = names.file(rng, &["amount", "base", "price", "count", "value"], "txt");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            let x = rng.range(3, 400);
            let m = rng.range(2, 12);
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "multiply");
            b.input(&file, &format!("{x}\n"))
                .answer(&m.to_string())
                .number_is(&out, (x * m) as f64, 0.0)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "{file} holds a number. Ask me what to multiply it by, then write the \
                             result into {out}."
                        ),
                        format!("ask me for a factor; multiply the number in {file} by it -> {out} (just the number)"),
                        format!(
                            "Please ask me by how much the value in {file} should be multiplied, \
                             and save only the product in {out}."
                        ),
                    ],
                )
                .reference(&format!(
                    "x = float(open({}).read().strip())\n{PY_NUM}{}",
                    py(&file),
                    py_write(&out, &format!("num(x * {m})"))
                ));
            b.build()
        }
        3 => {
            let theme = rng.pick(THEMES);
            let size = rng.range(5, 12) as usize;
            let t = Table::generate(rng, theme, size);
            let file = t.file_name(rng, &mut names, "csv");
            let out = names.file(rng, words::OUT_STEMS, "txt");
            let col = *rng.pick(&t.nums);
            let c = t.header[col].clone();
            let total: f64 = t.column(col).iter().sum();
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "column");
            b.input(&file, &t.csv(','))
                .answer(&c)
                .number_is(&out, total, 0.005)
                .phrased(
                    rng,
                    vec![
                        format!(
                            "Ask me which column of {file} I want totalled, then write the sum of \
                             that column into {out}."
                        ),
                        format!("ask me for a column name, add up that column of {file}, write the total to {out}"),
                        format!(
                            "I need one column of {file} summed, but first ask me which one. Put \
                             just the total in {out}."
                        ),
                    ],
                )
                .reference(&format!(
                    "{}{PY_NUM}{}",
                    py_csv_rows(&file, ','),
                    py_write(&out, &format!("num(sum(float(r[{}]) for r in rows))", py(&c)))
                ));
            b.build()
        }
        _ => {
            let (pool, stems, what): (&[&str], &[&str], &str) = if rng.chance(50) {
                (
                    words::CITIES,
                    &["trips", "places", "destinations", "wishlist"],
                    "city I want to visit next",
                )
            } else {
                (
                    words::GROCERIES,
                    &["shopping", "groceries", "to_buy", "list"],
                    "thing I still need to buy",
                )
            };
            let file = names.file(rng, stems, "txt");
            let size = rng.range(3, 9) as usize;
            let picked = rng.sample(pool, size + 1);
            let (new, list) = picked.split_last().map_or(("", &[][..]), |(n, l)| (*n, l));
            let mut after: Vec<String> = list.iter().map(|s| s.to_string()).collect();
            after.push(new.to_string());
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "append");
            b.editable(&file, &lines(list))
                .answer(new)
                .text_is(&file, &lines(&after))
                .phrased(
                    rng,
                    vec![
                        format!("Ask me which {what}, then add it as a new last line of {file}."),
                        format!("ask me for one more entry and append it to {file} (keep the existing lines)"),
                        format!(
                            "There's one more line for {file}, but you have to ask me what it is. \
                             Add my answer at the end of the file; leave the other lines alone."
                        ),
                    ],
                )
                .reference(&format!(
                    "with open({}, 'a', encoding='utf-8') as f:\n    f.write({} + '\\n')\n",
                    py(&file),
                    py(new)
                ));
            b.build()
        }
    }
}
