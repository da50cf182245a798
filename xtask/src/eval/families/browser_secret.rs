//! `browser_secret`: a fact only a local web page holds, read with the browser: an access
//! code (beside an expired one), the price of an item in a table, or who is on call on a
//! given day. The eval serves each instance's page on 127.0.0.1 and passes
//! `--browser-allow-local` (docs/security.md, "The browser").

use super::text::{capitalised, py, py_write, sentence, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance, URL_PLACEHOLDER};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "browser_secret",
    category: Category::Single,
    language: "en",
    about: "a fact only a local web page holds, read with the browser: an access code (beside \
            an expired one), an item's price in a table, who is on call on a given day",
    generate,
};

fn code(rng: &mut Rng) -> String {
    let word = rng.pick(&[
        "PLUM", "TEAL", "LYNX", "OPAL", "FERN", "KITE", "MOSS", "ONYX", "RUBY", "SAGE",
    ]);
    format!("{word}-{}", rng.range(1000, 9999))
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>{body}</body></html>"
    )
}

fn fetch() -> String {
    format!(
        "import re, urllib.request\nhtml = urllib.request.urlopen({}).read().decode('utf-8')\n",
        py(URL_PLACEHOLDER)
    )
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let out = names.file(
        rng,
        &["code", "answer", "price", "oncall", "note", "found"],
        "txt",
    );
    let url = URL_PLACEHOLDER;
    let filler = sentence(rng, words::WORDS, 12);
    match rng.below(3) {
        0 => {
            let (current, old) = loop {
                let (a, b) = (code(rng), code(rng));
                if a != b {
                    break (a, b);
                }
            };
            let body = format!(
                "<p>{filler}</p><p>The old code <s>{old}</s> expired last month.</p>\
                 <p>The current access code is <b id=\"code\">{current}</b>.</p>"
            );
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "code");
            b.page(&page("Door codes", &body))
                .text_is(&out, &current)
                .phrased(
                    rng,
                    vec![
                        format!("Which access code is valid right now according to {url}? Look with the browser and write only that code into {out}."),
                        format!("go to {url} and copy the access code that is valid now (not the expired one) into {out}"),
                        format!("The page at {url} lists our door code. Please read it with the browser and save only the current code in {out}."),
                    ],
                )
                .reference(&format!(
                    "{}code = re.search(r'id=\"code\">([^<]+)<', html).group(1)\n{}",
                    fetch(),
                    py_write(&out, "code")
                ));
            b.build()
        }
        1 => {
            let count = rng.range(4, 8) as usize;
            let items = rng.sample(words::PRODUCE, count);
            let prices: Vec<String> = (0..count)
                .map(|_| format!("{}.{:02}", rng.range(0, 12), rng.range(0, 99)))
                .collect();
            let k = rng.below(count);
            let rows: String = items
                .iter()
                .zip(&prices)
                .map(|(i, p)| format!("<tr><td>{i}</td><td>{p}</td></tr>"))
                .collect();
            let body =
                format!("<p>{filler}</p><table><tr><th>item</th><th>price</th></tr>{rows}</table>");
            let item = items[k];
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "price");
            b.page(&page("Market prices", &body))
                .number_is(&out, prices[k].parse().unwrap_or(0.0), 1e-9)
                .phrased(
                    rng,
                    vec![
                        format!("Look up the price of {item} on the page {url} and write just the number into {out}."),
                        format!("{url} has a price table - what does {item} cost? number only -> {out}"),
                        format!("Please open {url} with the browser, find the row for {item} and save its price in {out}."),
                    ],
                )
                .reference(&format!(
                    "{}p = re.search(r'<td>' + re.escape({}) + r'</td><td>([^<]+)<', html).group(1)\n{}",
                    fetch(),
                    py(item),
                    py_write(&out, "p")
                ));
            b.build()
        }
        _ => {
            let days = [
                "Monday",
                "Tuesday",
                "Wednesday",
                "Thursday",
                "Friday",
                "Saturday",
                "Sunday",
            ];
            let people: Vec<String> = rng
                .sample(words::PEOPLE, 7)
                .iter()
                .map(|p| capitalised(p))
                .collect();
            let k = rng.below(7);
            let rows: String = days
                .iter()
                .zip(&people)
                .map(|(d, p)| format!("<tr><td>{d}</td><td>{p}</td></tr>"))
                .collect();
            let body = format!(
                "<p>{filler}</p><table><tr><th>day</th><th>on call</th></tr>{rows}</table>"
            );
            let day = days[k];
            let mut b = Builder::new(FAMILY.name, FAMILY.category, "on_call");
            b.page(&page("On-call rota", &body))
                .text_is(&out, &people[k])
                .phrased(
                    rng,
                    vec![
                        format!("Who is on call on {day}? The rota is at {url}. Write just the name into {out}."),
                        format!("check {url} for the {day} on-call person, name only -> {out}"),
                        format!("Open the on-call rota at {url} in the browser and put the name of whoever covers {day} in {out}."),
                    ],
                )
                .reference(&format!(
                    "{}p = re.search(r'<td>{day}</td><td>([^<]+)<', html).group(1)\n{}",
                    fetch(),
                    py_write(&out, "p")
                ));
            b.build()
        }
    }
}
