//! `list_edit`: an in-place edit of a list the user keeps (shopping, guests, a Markdown
//! todo list): an item added at the end or after another, an item removed, a todo ticked
//! off, an item moved to the top. Another list beside it stays as it is.

use super::text::{lines, py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "list_edit",
    category: Category::Edit,
    language: "en",
    about: "an in-place edit of a list the user keeps (shopping, guests, a Markdown todo list): \
            an item added at the end or after another, removed, ticked off, moved to the top",
    generate,
};

const TODOS: &[&str] = &[
    "call the plumber",
    "renew passport",
    "book dentist",
    "pay rent",
    "water plants",
    "return library books",
    "fix bike light",
    "send invoice",
    "buy birthday card",
    "clean the oven",
    "back up laptop",
    "cancel gym",
    "order printer ink",
    "email landlord",
];

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    if rng.chance(25) {
        return tick(rng, &mut names);
    }
    let (pool, stems): (&[&str], &[&str]) = match rng.below(3) {
        0 => (
            words::GROCERIES,
            &["shopping", "groceries", "to_buy", "market"],
        ),
        1 => (words::PEOPLE, &["guests", "invitees", "party", "team"]),
        _ => (words::CITIES, &["trips", "places", "route", "stops"]),
    };
    let file = names.file(rng, stems, "txt");
    let other = names.file(rng, stems, "txt");
    let n = rng.range(3, 12) as usize;
    let picked: Vec<String> = rng
        .sample(pool, n + 2)
        .iter()
        .map(|s| s.to_string())
        .collect();
    let items = picked[..n].to_vec();
    let extra = picked[n].clone();
    let other_items: Vec<String> = vec![picked[n + 1].clone(), items[0].clone()];
    let (variant, after, phrasings, code): (&str, Vec<String>, Vec<String>, String) = match rng
        .below(4)
    {
        0 => {
            let mut a = items.clone();
            a.push(extra.clone());
            (
                "append",
                a,
                vec![
                    format!("Add {extra} to the end of {file}."),
                    format!("append \"{extra}\" as a new last line in {file}"),
                    format!("Please put {extra} on my list in {file}, at the bottom; keep the rest as it is."),
                ],
                format!("items.append({})", py(&extra)),
            )
        }
        1 => {
            let k = rng.below(n);
            let gone = items[k].clone();
            let mut a = items.clone();
            a.remove(k);
            (
                "remove",
                a,
                vec![
                    format!("Remove {gone} from {file}."),
                    format!("delete the line \"{gone}\" in {file}, keep the others in order"),
                    format!("Take {gone} off the list in {file} - I don't need it any more. Everything else stays."),
                ],
                format!("items.remove({})", py(&gone)),
            )
        }
        2 => {
            let k = rng.below(n);
            let anchor = items[k].clone();
            let mut a = items.clone();
            a.insert(k + 1, extra.clone());
            (
                "insert_after",
                a,
                vec![
                    format!("In {file}, add {extra} on a new line right after {anchor}."),
                    format!("insert \"{extra}\" below \"{anchor}\" in {file}"),
                    format!("Could you slot {extra} into {file} just after {anchor}? Don't reorder anything else."),
                ],
                format!("items.insert(items.index({}) + 1, {})", py(&anchor), py(&extra)),
            )
        }
        _ => {
            let k = rng.range(1, (n - 1) as i64) as usize;
            let top = items[k].clone();
            let mut a = items.clone();
            let moved = a.remove(k);
            a.insert(0, moved);
            (
                "to_top",
                a,
                vec![
                    format!("Move {top} to the top of {file}; the other lines keep their order."),
                    format!("{file}: put \"{top}\" first"),
                    format!("{top} is the most important one. Make it the first line of {file}, leaving the rest in the same order."),
                ],
                format!("items.remove({t})\nitems.insert(0, {t})", t = py(&top)),
            )
        }
    };
    let mut b = Builder::new(FAMILY.name, FAMILY.category, variant);
    b.editable(&file, &lines(&items))
        .input(&other, &lines(&other_items))
        .text_is(&file, &lines(&after))
        .phrased(rng, phrasings)
        .reference(&format!(
            "items = open({f}).read().splitlines()\n{code}\nopen({f}, 'w').write('\\n'.join(items) + '\\n')\n",
            f = py(&file)
        ));
    b.build()
}

fn tick(rng: &mut Rng, names: &mut Names) -> Instance {
    let file = names.file(rng, &["todo", "tasks", "chores", "week"], "md");
    let other = names.file(rng, &["done", "someday", "backlog"], "md");
    let n = rng.range(3, 9) as usize;
    let todos = rng.sample(TODOS, n + 1);
    let done: Vec<bool> = (0..n).map(|_| rng.chance(30)).collect();
    let open: Vec<usize> = (0..n).filter(|&i| !done[i]).collect();
    let k = if open.is_empty() { 0 } else { *rng.pick(&open) };
    let render = |done: &[bool]| {
        let mut out = vec!["# Todo".to_string(), String::new()];
        for (i, t) in todos[..n].iter().enumerate() {
            out.push(format!("- [{}] {t}", if done[i] { "x" } else { " " }));
        }
        lines(&out)
    };
    let mut before_done = done.clone();
    before_done[k] = false;
    let mut after_done = before_done.clone();
    after_done[k] = true;
    let task = todos[k];
    let mut b = Builder::new(FAMILY.name, FAMILY.category, "tick");
    b.editable(&file, &render(&before_done))
        .input(
            &other,
            &lines(&[
                "# Done".to_string(),
                String::new(),
                format!("- [x] {}", todos[n]),
            ]),
        )
        .text_is(&file, &render(&after_done))
        .phrased(
            rng,
            vec![
                format!("I did \"{task}\". Tick it off in {file} (make its box [x])."),
                format!("mark '{task}' as done in {file}"),
                format!(
                    "In {file}, check the box of the item {task}; leave every other line as it is."
                ),
            ],
        )
        .reference(&format!(
            "t = open({f}).read()\nopen({f}, 'w').write(t.replace({}, {}))\n",
            py(&format!("- [ ] {task}")),
            py(&format!("- [x] {task}")),
            f = py(&file)
        ));
    b.build()
}
