//! `code_rename`: a function renamed in the two files that define and use it (Python or
//! JavaScript); a third module that is not named stays as it is, and the Python program
//! still runs and prints the same after the rename.

use super::text::{lines, py, Names};
use super::words;
use crate::eval::family::Family;
use crate::eval::instance::{Builder, Category, Check, Instance};
use crate::eval::rng::Rng;

pub(crate) const FAMILY: Family = Family {
    name: "code_rename",
    category: Category::Edit,
    language: "en",
    about: "a function renamed in the two files that define and call it (Python or \
            JavaScript); another module stays untouched and the program still runs the same",
    generate,
};

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `text` with every whole-word `old` made `new`.
pub(crate) fn replace_word(text: &str, old: &str, new: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find(old) {
        let before = rest[..at].chars().last();
        let after = rest[at + old.len()..].chars().next();
        out.push_str(&rest[..at]);
        if before.is_some_and(is_ident) || after.is_some_and(is_ident) {
            out.push_str(old);
        } else {
            out.push_str(new);
        }
        rest = &rest[at + old.len()..];
    }
    out.push_str(rest);
    out
}

fn generate(rng: &mut Rng) -> Instance {
    let mut names = Names::default();
    let noun = *rng.pick(words::NOUNS);
    let (v1, v2) = loop {
        let (a, b) = (*rng.pick(words::VERBS), *rng.pick(words::VERBS));
        if a != b {
            break (a, b);
        }
    };
    let helper_verb = loop {
        let h = *rng.pick(words::VERBS);
        if h != v1 && h != v2 {
            break h;
        }
    };
    let python = rng.chance(65);
    let (old, new, helper, bystander_fn) = if python {
        (
            format!("{v1}_{noun}"),
            format!("{v2}_{noun}"),
            format!("{helper_verb}_total"),
            format!("re{v1}_{noun}_cache"),
        )
    } else {
        let cap = |s: &str| super::text::capitalised(s);
        (
            format!("{v1}{}", cap(noun)),
            format!("{v2}{}", cap(noun)),
            format!("{helper_verb}Total"),
            format!("re{v1}{}Cache", cap(noun)),
        )
    };
    let ext = if python { "py" } else { "js" };
    let module = names.module(rng, words::MODULES, ext);
    let main = names.module(rng, &["main", "app", "run", "cli", "script", "report"], ext);
    let other = names.module(rng, words::MODULES, ext);
    let k = rng.range(2, 9);
    let nums: Vec<i64> = (0..rng.range(3, 6)).map(|_| rng.range(1, 30)).collect();
    let nums_text = nums
        .iter()
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    let stem = |f: &str| {
        f.rsplit_once('.')
            .map_or(f.to_string(), |(s, _)| s.to_string())
    };
    let (module_text, main_text, other_text, printed) = if python {
        let module_text = lines(&[
            format!("def {old}(values):"),
            format!("    \"\"\"Each value times {k}.\"\"\""),
            format!("    return [v * {k} for v in values]"),
            String::new(),
            String::new(),
            format!("def {helper}(values):"),
            "    return sum(values)".to_string(),
        ]);
        let main_text = lines(&[
            format!("from {} import {old}, {helper}", stem(&module)),
            String::new(),
            format!("data = [{nums_text}]"),
            format!("scaled = {old}(data)"),
            "print(scaled)".to_string(),
            format!("print({helper}(scaled))"),
        ]);
        let other_text = lines(&[
            format!("def {bystander_fn}(cache):"),
            "    cache.clear()".to_string(),
            "    return cache".to_string(),
        ]);
        let scaled: Vec<i64> = nums.iter().map(|n| n * k).collect();
        let printed = vec![
            format!(
                "[{}]",
                scaled
                    .iter()
                    .map(|n| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            scaled.iter().sum::<i64>().to_string(),
        ];
        (module_text, main_text, other_text, printed)
    } else {
        let module_text = lines(&[
            format!("function {old}(values) {{"),
            format!("  // each value times {k}"),
            format!("  return values.map((v) => v * {k});"),
            "}".to_string(),
            String::new(),
            format!("function {helper}(values) {{"),
            "  return values.reduce((a, b) => a + b, 0);".to_string(),
            "}".to_string(),
            String::new(),
            format!("module.exports = {{ {old}, {helper} }};"),
        ]);
        let main_text = lines(&[
            format!(
                "const {{ {old}, {helper} }} = require(\"./{}\");",
                stem(&module)
            ),
            String::new(),
            format!("const data = [{nums_text}];"),
            format!("const scaled = {old}(data);"),
            "console.log(scaled);".to_string(),
            format!("console.log({helper}(scaled));"),
        ]);
        let other_text = lines(&[
            format!("function {bystander_fn}(cache) {{"),
            "  cache.clear();".to_string(),
            "  return cache;".to_string(),
            "}".to_string(),
            String::new(),
            format!("module.exports = {{ {bystander_fn} }};"),
        ]);
        (module_text, main_text, other_text, Vec::new())
    };
    let mut b = Builder::new(
        FAMILY.name,
        FAMILY.category,
        if python { "python" } else { "javascript" },
    );
    b.editable(&module, &module_text)
        .editable(&main, &main_text)
        .input(&other, &other_text)
        .text_is(&module, &replace_word(&module_text, &old, &new))
        .text_is(&main, &replace_word(&main_text, &old, &new));
    if python {
        b.check(Check::Runs {
            program: "python3".to_string(),
            args: vec![main.clone()],
            stdout: Some((printed, true)),
            other_data: Vec::new(),
        });
    }
    b.phrased(
        rng,
        vec![
            format!("Rename the function {old} to {new} in {module} and {main}."),
            format!(
                "{old} is defined in {module} and used in {main}. Please rename it to {new} in \
                 both places; nothing else should change."
            ),
            format!("rename fn {old} -> {new} ({module}, {main})"),
            format!(
                "Could you change the name of the function {old} to {new}? It lives in {module} \
                 and {main} calls it. Keep the rest of the code exactly as it is."
            ),
        ],
    )
    .reference(&format!(
        "import re\nfor f in [{}, {}]:\n    t = open(f).read()\n    open(f, 'w').write(re.sub(r'\\b' + {} + r'\\b', {}, t))\n",
        py(&module),
        py(&main),
        py(&old),
        py(&new)
    ));
    b.build()
}

#[cfg(test)]
mod tests {
    use super::replace_word;

    #[test]
    fn only_whole_words_are_replaced() {
        assert_eq!(
            replace_word("load_x(load_xs) reload_x load_x\n", "load_x", "get_x"),
            "get_x(load_xs) reload_x get_x\n"
        );
    }
}
