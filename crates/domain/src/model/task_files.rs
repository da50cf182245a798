//! The files a task names, and what it asks of each (docs/security.md, "Input files"): read
//! it, change it, move it, or write it. Pure words-in, facts-out: the runtime decides with
//! it which inputs a run may change and which outputs it must leave.
//!
//! A file is named by a word that looks like a file name (`data.txt`, `out/report.md`) or
//! that is the path or the name of a file the workspace already holds (`README`). What is
//! asked of it comes from the nearest verb before it in its clause (clauses end at `.`, `,`,
//! `;`, `:`, "and", "then"…), and from the preposition just before it:
//!
//! - an edit verb ("fix", "edit", "replace", "update", "change", "modify", "delete",
//!   "remove", "correct", …) → [`Intent::Edit`];
//! - "rename" / "move" → [`Intent::Move`] for the file, [`Intent::Write`] for the name
//!   after "to", "into" or "as";
//! - a write verb ("write", "save", "create", "append", "overwrite", …) → [`Intent::Write`],
//!   except after "from" / "of" or before another file named with "to" / "into" in the same
//!   clause (it is then a source);
//! - any verb followed by "to" / "into" before the file ("copy a.txt to b.txt",
//!   "sum the numbers into total.txt") → [`Intent::Write`];
//! - a read verb ("read", "count", "use", "compare", …), a negated verb ("do not change",
//!   "without modifying"), or no verb → [`Intent::Read`], unless there is no verb at all
//!   (then the file is [`Intent::Unsaid`]).
//!
//! "it" / "them" after an edit or move verb stands for the file named last before it.

use std::collections::BTreeMap;

/// What a task asks of a file it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Intent {
    /// Named without a verb that says what to do with it.
    Unsaid,
    /// Read, used, counted, compared, left as it is.
    Read,
    /// Renamed or moved (its content kept).
    Move,
    /// Written, created, saved, appended to, overwritten: the run's output.
    Write,
    /// Fixed, edited, updated, changed, deleted.
    Edit,
}

/// A file the task names, and the strongest thing it asks of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// As written in the task, or the known path it names.
    pub name: String,
    pub intent: Intent,
    /// Some mention writes it (it may be created, even if another edits it).
    pub written: bool,
    /// Some mention adds to it ("add X to F", "append X to F", "as a new last line of F"):
    /// with [`Intent::Write`], what it holds stays and new text comes after.
    pub added: bool,
}

const EDIT: &[&str] = &[
    "fix",
    "fixes",
    "fixed",
    "fixing",
    "edit",
    "edits",
    "edited",
    "editing",
    "replace",
    "replaces",
    "replaced",
    "replacing",
    "update",
    "updates",
    "updated",
    "updating",
    "change",
    "changes",
    "changed",
    "changing",
    "modify",
    "modifies",
    "modified",
    "modifying",
    "delete",
    "deletes",
    "deleted",
    "deleting",
    "remove",
    "removes",
    "removed",
    "removing",
    "correct",
    "corrects",
    "corrected",
    "correcting",
    "patch",
    "patches",
    "patched",
    "patching",
    "rewrite",
    "rewrites",
    "rewriting",
    "rewritten",
    "refactor",
    "refactors",
    "refactored",
    "insert",
    "inserts",
    "inserted",
    "inserting",
    "truncate",
    "truncated",
    "clear",
    "clean",
    "reformat",
    "reformats",
    "uncomment",
    "rm",
    "sed",
];
const MOVE: &[&str] = &[
    "rename", "renames", "renamed", "renaming", "move", "moves", "moved", "moving", "mv",
];
const WRITE: &[&str] = &[
    "write",
    "writes",
    "wrote",
    "writing",
    "written",
    "save",
    "saves",
    "saved",
    "saving",
    "store",
    "stores",
    "stored",
    "create",
    "creates",
    "created",
    "creating",
    "append",
    "appends",
    "appended",
    "appending",
    "overwrite",
    "overwrites",
    "overwriting",
    "overwritten",
    "put",
    "puts",
    "output",
    "outputs",
    "record",
    "records",
    "generate",
    "generates",
    "produce",
    "produces",
    "export",
    "exports",
    "dump",
    "make",
    "makes",
    "redirect",
    "touch",
];
/// Write verbs that keep what a file holds and put the new text after it.
const APPEND: &[&str] = &["append", "appends", "appended", "appending"];
/// "Add X to F", "add X as a new line of F": F is written; "add up the numbers", "add the
/// numbers in F": F is read (summing).
const ADD: &[&str] = &["add", "adds", "added", "adding"];
/// Words that say where in a file something goes ("a new last line of F", "the end of F").
const PLACE: &[&str] = &[
    "line",
    "lines",
    "row",
    "rows",
    "entry",
    "end",
    "top",
    "bottom",
    "start",
    "beginning",
];
/// Words before a noun: a verb-like word right after one ("the list", "my shopping list") is
/// a noun.
const DETERMINERS: &[&str] = &[
    "the", "a", "an", "my", "your", "his", "her", "its", "our", "their", "this", "that", "these",
    "those", "each", "every", "some", "any",
];
const READ: &[&str] = &[
    "read",
    "reads",
    "reading",
    "use",
    "uses",
    "using",
    "look",
    "looks",
    "looking",
    "count",
    "counts",
    "counting",
    "compute",
    "computes",
    "calculate",
    "calculates",
    "sum",
    "sums",
    "find",
    "finds",
    "extract",
    "extracts",
    "parse",
    "parses",
    "check",
    "checks",
    "compare",
    "compares",
    "list",
    "lists",
    "show",
    "shows",
    "print",
    "prints",
    "search",
    "searches",
    "grep",
    "analyze",
    "analyse",
    "summarize",
    "summarise",
    "report",
    "reports",
    "open",
    "opens",
    "load",
    "loads",
    "take",
    "takes",
    "get",
    "gets",
    "inspect",
    "view",
    "display",
    "cat",
    "tell",
    "copy",
    "copies",
    "copied",
    "keep",
    "keeps",
    "leave",
    "leaves",
    "based",
    "answer",
    "verify",
    "contains",
    "containing",
    "given",
    "see",
    "sort",
    "sorts",
    "filter",
    "filters",
    "convert",
    "converts",
    "split",
    "merge",
    "combine",
    "join",
    "concatenate",
    "lookup",
    "consult",
    "mentioned",
    "describe",
    "explain",
    "wc",
    "head",
    "tail",
];
const NEGATIONS: &[&str] = &[
    "not",
    "don't",
    "dont",
    "never",
    "without",
    "no",
    "nor",
    "doesn't",
    "mustn't",
    "shouldn't",
    "cannot",
    "can't",
];
const PREPOSITIONS: &[&str] = &["to", "into", "as", "from", "of", "in", "on", "at", "with"];
const CLAUSE_WORDS: &[&str] = &["and", "then", "but", "while", "also", "so", "or"];
const PRONOUNS: &[&str] = &["it", "them"];

/// One word of the task, as the parser uses it.
#[derive(Debug, Clone)]
struct Word {
    /// Without surrounding punctuation or quotes; original case.
    text: String,
    lower: String,
    /// Inside a quoted text of several words: content, not instructions.
    quoted: bool,
    /// A clause ends after this word.
    ends_clause: bool,
    /// A comma follows it.
    comma: bool,
}

/// The files `task` names and what it asks of each, in the order first named. `known`: the
/// paths of the files already in the workspace (matched by path or by file name).
pub fn mentions(task: &str, known: &[&str]) -> Vec<Mention> {
    let words = words(task);
    let mut found: Vec<(usize, String)> = Vec::new(); // (word index, name)
    for (i, w) in words.iter().enumerate() {
        if w.quoted {
            continue;
        }
        if let Some(name) = file_name_of(&w.text, known) {
            found.push((i, name));
        }
    }
    let mut intents: BTreeMap<String, Intent> = BTreeMap::new();
    let mut written: Vec<String> = Vec::new();
    let mut order: Vec<String> = Vec::new();
    let mut note = |name: &str, intent: Intent, order: &mut Vec<String>| {
        if intent == Intent::Write && !written.iter().any(|w| w == name) {
            written.push(name.to_string());
        }
        let entry = intents.entry(name.to_string()).or_insert_with(|| {
            order.push(name.to_string());
            intent
        });
        *entry = strongest(*entry, intent);
    };
    let mut added: Vec<String> = Vec::new();
    let mut previous: Option<(usize, Intent)> = None;
    for (n, (i, name)) in found.iter().enumerate() {
        let later_target = found[n + 1..]
            .iter()
            .take_while(|(j, _)| same_clause(&words, *i, *j))
            .any(|(j, _)| matches!(preposition_before(&words, *j), Some("to" | "into")));
        let intent = match previous {
            // "move a.txt and b.txt", "read a.txt, b.txt or c.txt": one verb for the list.
            Some((j, listed)) if listed != Intent::Unsaid && listed_after(&words, j, *i) => listed,
            _ => intent_at(&words, *i, later_target),
        };
        previous = Some((*i, intent));
        let adds = governing_verb(&words, *i).is_some_and(|v| {
            ADD.contains(&words[v].lower.as_str()) || APPEND.contains(&words[v].lower.as_str())
        });
        if intent == Intent::Write && adds && !added.contains(name) {
            added.push(name.clone());
        }
        note(name, intent, &mut order);
    }
    // "it" / "them" after an edit or move verb: the file named last before it.
    for (i, w) in words.iter().enumerate() {
        if w.quoted || !PRONOUNS.contains(&w.lower.as_str()) {
            continue;
        }
        let Some((_, last)) = found.iter().rev().find(|(j, _)| *j < i) else {
            continue;
        };
        let intent = intent_at(&words, i, false);
        if matches!(intent, Intent::Edit | Intent::Move) {
            note(last, intent, &mut order);
        }
    }
    order
        .into_iter()
        .map(|name| Mention {
            intent: intents.get(&name).copied().unwrap_or(Intent::Unsaid),
            written: written.contains(&name),
            added: added.contains(&name),
            name,
        })
        .collect()
}

/// The stronger of two intents for one file: an edit wins over a write, a write over a move,
/// a move over a read.
fn strongest(a: Intent, b: Intent) -> Intent {
    a.max(b)
}

/// What the words before word `i` ask of it. `later_target`: another file is named further
/// in the clause after "to" / "into" (so this one is a source).
fn intent_at(words: &[Word], i: usize, later_target: bool) -> Intent {
    let Some(v) = governing_verb(words, i) else {
        // "In settings.txt, replace red with green": the file set before its edit verb.
        let next = words.get(i + 1).filter(|w| !w.quoted);
        if words[i].ends_clause
            && preposition_before(words, i) == Some("in")
            && next.is_some_and(|w| EDIT.contains(&w.lower.as_str()))
        {
            return Intent::Edit;
        }
        return Intent::Unsaid;
    };
    if negated(words, v) {
        return Intent::Read;
    }
    let verb = words[v].lower.as_str();
    let prep = preposition_between(words, v, i);
    if EDIT.contains(&verb) {
        return Intent::Edit;
    }
    let to_target = matches!(prep, Some("to" | "into" | "as"));
    if MOVE.contains(&verb) {
        return if to_target {
            Intent::Write
        } else {
            Intent::Move
        };
    }
    if ADD.contains(&verb) {
        let summing = words.get(v + 1).is_some_and(|w| w.lower == "up");
        let placed = (v + 1..i).any(|j| PLACE.contains(&words[j].lower.as_str()));
        return match prep {
            _ if summing => Intent::Read,
            Some("to" | "into" | "at") => Intent::Write,
            Some("of" | "in" | "on") if placed => Intent::Write,
            _ => Intent::Read,
        };
    }
    if WRITE.contains(&verb) {
        if matches!(prep, Some("of" | "in" | "at"))
            && (v + 1..i).any(|j| PLACE.contains(&words[j].lower.as_str()))
        {
            return Intent::Write;
        }
        return if matches!(prep, Some("from" | "of")) || later_target && !to_target {
            Intent::Read
        } else {
            Intent::Write
        };
    }
    if matches!(prep, Some("to" | "into")) {
        return Intent::Write;
    }
    Intent::Read
}

/// The nearest verb before word `i` in its clause.
fn governing_verb(words: &[Word], i: usize) -> Option<usize> {
    (0..i)
        .rev()
        .take_while(|&j| !words[j].ends_clause)
        .find(|&j| {
            !words[j].quoted
                && is_verb(&words[j].lower)
                && !is_noun_at(words, j)
                && !is_adjectival_participle(words, j)
        })
}

/// Whether the participle `j` describes the noun before it ("the item written in a.txt",
/// "the file created by b.sh") rather than saying what to do.
fn is_adjectival_participle(words: &[Word], j: usize) -> bool {
    const AUXILIARIES: &[&str] = &[
        "is", "are", "was", "were", "be", "been", "has", "have", "had",
    ];
    let word = words[j].lower.as_str();
    if j == 0 || !(word.ends_with("ed") || word.ends_with("en")) {
        return false;
    }
    let before = &words[j - 1];
    !before.ends_clause
        && !before.quoted
        && !AUXILIARIES.contains(&before.lower.as_str())
        && !is_verb(&before.lower)
        && !DETERMINERS.contains(&before.lower.as_str())
}

fn is_verb(word: &str) -> bool {
    [EDIT, MOVE, WRITE, ADD, READ]
        .iter()
        .any(|list| list.contains(&word))
}

/// Whether the verb-like word `j` is a noun here: right after a determiner ("the list"), or
/// after one and an unknown word ("my shopping list", "the final report"; not a participle,
/// "the item written in a.txt", nor a verb whose subject that is, "the script reads").
fn is_noun_at(words: &[Word], j: usize) -> bool {
    let determiner = |k: usize| DETERMINERS.contains(&words[k].lower.as_str());
    let participle = ["ed", "en", "ing", "s"]
        .iter()
        .any(|end| words[j].lower.ends_with(end));
    match j {
        0 => false,
        1 => determiner(0),
        _ => {
            determiner(j - 1)
                || (!participle
                    && determiner(j - 2)
                    && !words[j - 2].ends_clause
                    && !words[j - 1].ends_clause
                    && !is_verb(&words[j - 1].lower))
        }
    }
}

/// Whether verb `v` is negated ("do not change", "without modifying", "never edit").
fn negated(words: &[Word], v: usize) -> bool {
    (v.saturating_sub(3)..v)
        .rev()
        .take_while(|&j| !words[j].ends_clause)
        .any(|j| NEGATIONS.contains(&words[j].lower.as_str()))
}

/// The preposition nearest before word `i`, after verb `v`.
fn preposition_between(words: &[Word], v: usize, i: usize) -> Option<&'static str> {
    (v + 1..i)
        .rev()
        .filter(|&j| !words[j].quoted)
        .find_map(|j| PREPOSITIONS.iter().find(|p| **p == words[j].lower).copied())
}

/// The preposition nearest before word `i` in its clause, whatever the verb.
fn preposition_before(words: &[Word], i: usize) -> Option<&'static str> {
    (0..i)
        .rev()
        .take_while(|&j| !words[j].ends_clause)
        .filter(|&j| !words[j].quoted)
        .find_map(|j| PREPOSITIONS.iter().find(|p| **p == words[j].lower).copied())
}

/// Verbs that make one file a copy of another.
const COPY: &[&str] = &["copy", "copies", "copied", "duplicate", "cp"];

/// The (source, copy) pairs the task asks for: "copy names.txt to backup.txt", "duplicate
/// a.txt as b.txt". `known`: the workspace's files, as for [`mentions`].
pub fn copies(task: &str, known: &[&str]) -> Vec<(String, String)> {
    let words = words(task);
    let found: Vec<(usize, String)> = words
        .iter()
        .enumerate()
        .filter(|(_, w)| !w.quoted)
        .filter_map(|(i, w)| file_name_of(&w.text, known).map(|n| (i, n)))
        .collect();
    let mut pairs = Vec::new();
    for pair in found.windows(2) {
        let [(a, source), (b, copy)] = pair else {
            continue;
        };
        let verb = governing_verb(&words, *a);
        let copying = verb.is_some_and(|v| COPY.contains(&words[v].lower.as_str()));
        if copying
            && governing_verb(&words, *b) == verb
            && matches!(
                verb.and_then(|v| preposition_between(&words, v, *b)),
                Some("to" | "into" | "as")
            )
        {
            pairs.push((source.clone(), copy.clone()));
        }
    }
    pairs
}

/// Whether file word `b` continues the list of files that word `a` started: "a.txt and
/// b.txt", "a.txt, b.txt", "a.txt or b.txt".
fn listed_after(words: &[Word], a: usize, b: usize) -> bool {
    match b - a {
        1 => words[a].comma,
        2 => matches!(words[a + 1].lower.as_str(), "and" | "or"),
        _ => false,
    }
}

/// Whether words `a` < `b` are in the same clause.
fn same_clause(words: &[Word], a: usize, b: usize) -> bool {
    !(a..b).any(|k| words[k].ends_clause)
}

/// The task's words, with clause ends and quoted content marked.
fn words(task: &str) -> Vec<Word> {
    let mut out: Vec<Word> = Vec::new();
    let mut in_quote: Option<char> = None;
    for raw in task.split_whitespace() {
        let opens = raw
            .chars()
            .next()
            .filter(|c| matches!(c, '\'' | '"' | '`' | '“' | '‘'));
        let trimmed_end = raw.trim_end_matches(['.', ',', ';', ':', '!', '?', ')']);
        let closes = trimmed_end
            .chars()
            .last()
            .filter(|c| matches!(c, '\'' | '"' | '`' | '”' | '’'));
        let single = opens.is_some() && closes.is_some() && raw.chars().count() > 1;
        let quoted_word = match in_quote {
            Some(_) => true,
            None => opens.is_some() && !single,
        };
        let text: String = raw
            .trim_matches(|c: char| {
                matches!(
                    c,
                    '\'' | '"'
                        | '`'
                        | '“'
                        | '”'
                        | '‘'
                        | '’'
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | '<'
                        | '>'
                        | ','
                        | ';'
                        | ':'
                        | '!'
                        | '?'
                )
            })
            .trim_end_matches('.')
            .trim_matches(|c: char| matches!(c, '\'' | '"' | '`' | '”' | '’'))
            .to_string();
        let punct_end = raw.ends_with(['.', ',', ';', ':', '!', '?'])
            || raw
                .trim_end_matches(['\'', '"', '`', '”', '’', ')'])
                .ends_with(['.', ',', ';', ':', '!', '?']);
        let lower = text.to_lowercase();
        if !quoted_word && CLAUSE_WORDS.contains(&lower.as_str()) {
            if let Some(last) = out.last_mut() {
                last.ends_clause = true;
            }
        }
        match (in_quote, opens, closes) {
            (None, Some(_), _) if !single => in_quote = opens,
            (Some(_), _, Some(_)) => in_quote = None,
            _ => {}
        }
        out.push(Word {
            text,
            lower,
            quoted: quoted_word,
            ends_clause: punct_end && in_quote.is_none(),
            comma: raw
                .trim_end_matches(['\'', '"', '`', '”', '’', ')'])
                .ends_with(','),
        });
    }
    out
}

/// The file `word` names: a known path or file name (the known path), or a word shaped like
/// a file name (`name.ext`, `dir/name.ext`).
fn file_name_of(word: &str, known: &[&str]) -> Option<String> {
    let word = word.trim_start_matches("./");
    if word.is_empty() {
        return None;
    }
    if let Some(k) = known.iter().find(|k| **k == word) {
        return Some((*k).to_string());
    }
    let by_name: Vec<&&str> = known
        .iter()
        .filter(|k| k.rsplit('/').next() == Some(word))
        .collect();
    if let [only] = by_name.as_slice() {
        return Some((**only).to_string());
    }
    looks_like_file(word).then(|| word.to_string())
}

/// `name.ext` with a short extension holding a letter; no URL, address or abbreviation.
fn looks_like_file(word: &str) -> bool {
    if word.contains("://") || word.contains('@') || word.ends_with('/') || word.contains('*') {
        return false;
    }
    let name = word.rsplit('/').next().unwrap_or(word);
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let lower = word.to_lowercase();
    if ["e.g", "i.e", "etc", "vs", "a.m", "p.m"].contains(&lower.as_str()) {
        return false;
    }
    !stem.is_empty()
        && (1..=10).contains(&ext.len())
        && ext.chars().all(|c| c.is_ascii_alphanumeric())
        && ext.chars().any(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-'))
        && word
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/'))
}

/// The folders `task` names ("a folder named archive", "the directory called out",
/// "folder `notes`"): paths a file must not be written to.
pub fn folders_named(task: &str) -> Vec<String> {
    let words: Vec<&str> = task.split_whitespace().collect();
    let mut found = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let w = w.to_lowercase();
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !matches!(w, "folder" | "directory" | "dir") {
            continue;
        }
        let mut next = i + 1;
        if words
            .get(next)
            .is_some_and(|n| matches!(n.to_lowercase().as_str(), "named" | "called"))
        {
            next += 1;
        }
        if let Some(name) = words.get(next) {
            let name = name
                .trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | ',' | '.' | ':' | ';'))
                .trim_end_matches('/');
            let plain = name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | '/' | '.'));
            if !name.is_empty() && plain && !matches!(name, "and" | "with" | "in" | "to" | "for") {
                found.push(name.to_string());
            }
        }
    }
    found
}

/// Whether `task` tells the agent to ask its user something ("Ask me which city…", "ask
/// the user for…"): the run is not done before a question was asked (docs/direct.md).
pub fn asks_the_user(task: &str) -> bool {
    let lower = format!(" {} ", task.to_lowercase());
    ["ask me ", "ask me,", "ask me:", "ask the user", "ask us "]
        .iter()
        .any(|m| lower.contains(&format!(" {m}")) || lower.contains(&format!(".{m}")))
}

/// Whether the task asks for an empty file (an output that may stay empty).
pub fn allows_empty_output(task: &str) -> bool {
    task.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w == "empty")
}

/// Verbs that make a file without saying what goes in it.
const CREATE: &[&str] = &["create", "creates", "make", "makes", "touch"];
/// Words that say what goes in a file.
const CONTENT: &[&str] = &[
    "containing",
    "contains",
    "contain",
    "with",
    "holding",
    "holds",
    "content",
    "text",
    "line",
    "lines",
    "result",
    "results",
    "answer",
    "number",
    "count",
    "total",
    "sum",
    "list",
];

/// Whether output `name` may stay empty: the task says "empty", or it only asks to create
/// the file ("create a.txt", "touch done.flag") without saying what goes in it.
pub fn may_stay_empty(task: &str, name: &str) -> bool {
    if allows_empty_output(task) {
        return true;
    }
    let words = words(task);
    let Some(i) = words
        .iter()
        .position(|w| !w.quoted && w.text.trim_start_matches("./") == name)
    else {
        return false;
    };
    let Some(v) = governing_verb(&words, i) else {
        return false;
    };
    let start = (0..v)
        .rev()
        .find(|&j| words[j].ends_clause)
        .map_or(0, |j| j + 1);
    let end = (i..words.len())
        .find(|&j| words[j].ends_clause)
        .unwrap_or(words.len().saturating_sub(1));
    let clause = &words[start..=end.max(start)];
    CREATE.contains(&words[v].lower.as_str())
        && !clause
            .iter()
            .any(|w| w.quoted || CONTENT.contains(&w.lower.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_the_task_names_are_found() {
        assert_eq!(
            folders_named("Make a folder named archive and move report1.txt into it."),
            ["archive"]
        );
        assert_eq!(
            folders_named("Create a folder notes and in it a file todo.md"),
            ["notes"]
        );
        assert_eq!(
            folders_named("Put it in the directory called `out/`."),
            ["out"]
        );
        assert!(folders_named("List the folder and report").is_empty());
    }

    #[test]
    fn a_task_that_says_to_ask_the_user_is_recognised() {
        for t in [
            "Ask me which city I live in, then write it into city.txt.",
            "Ask me how many days my trip lasts.",
            "First ask the user for a name, then greet them",
            "Write a.txt. Ask me: which colour?",
        ] {
            assert!(asks_the_user(t), "{t}");
        }
        for t in [
            "Write the FAQ about what people ask most",
            "Do not task me with this",
            "Make a mask meeting note in notes.txt",
        ] {
            assert!(!asks_the_user(t), "{t}");
        }
    }

    fn intents(task: &str, known: &[&str]) -> Vec<(String, Intent)> {
        mentions(task, known)
            .into_iter()
            .map(|m| (m.name, m.intent))
            .collect()
    }

    fn of(task: &str, known: &[&str], name: &str) -> Option<Intent> {
        mentions(task, known)
            .into_iter()
            .find(|m| m.name == name)
            .map(|m| m.intent)
    }

    #[test]
    fn outputs_written_and_inputs_read() {
        let task = "Read data.txt, sum the numbers and write the total to total.txt";
        assert_eq!(
            intents(task, &["data.txt"]),
            [
                ("data.txt".to_string(), Intent::Read),
                ("total.txt".to_string(), Intent::Write)
            ]
        );
        let task = "Write hello.txt containing 'hello from planwright' with the shell tool, \
                    then read it back and report its content";
        assert_eq!(of(task, &[], "hello.txt"), Some(Intent::Write));
        let task = "Count the lines of log.txt into count.txt";
        assert_eq!(of(task, &["log.txt"], "log.txt"), Some(Intent::Read));
        assert_eq!(of(task, &["log.txt"], "count.txt"), Some(Intent::Write));
        let task = "Write the sum of the numbers in data.txt to sum.txt";
        assert_eq!(of(task, &["data.txt"], "data.txt"), Some(Intent::Read));
        assert_eq!(of(task, &["data.txt"], "sum.txt"), Some(Intent::Write));
    }

    #[test]
    fn edits_the_task_asks_for() {
        let known = ["notes.md", "data.txt"];
        let task = "Fix the typo in notes.md using the word list in data.txt";
        assert_eq!(of(task, &known, "notes.md"), Some(Intent::Edit));
        assert_eq!(of(task, &known, "data.txt"), Some(Intent::Read));
        for task in [
            "Replace foo with bar in notes.md",
            "Update notes.md with today's date",
            "Append a line 'done' to notes.md",
            "delete notes.md",
            "Please change the title of notes.md",
            "Read notes.md and fix the typo in it",
            "In notes.md, replace the word red with green.",
            "In notes.md, change the port from 8000 to 9090",
        ] {
            let want = if task.starts_with("Append") {
                Intent::Write
            } else {
                Intent::Edit
            };
            assert_eq!(of(task, &known, "notes.md"), Some(want), "{task}");
        }
    }

    #[test]
    fn adding_to_a_file_writes_it_and_adding_up_reads_it() {
        let known = ["extra.txt", "shopping.txt", "names.txt", "data.txt"];
        let added = |task: &str, name: &str| {
            mentions(task, &known)
                .into_iter()
                .find(|m| m.name == name)
                .is_some_and(|m| m.added)
        };
        assert!(added("Add milk to shopping.txt", "shopping.txt"));
        assert!(added(
            "Add the item written in extra.txt to my shopping list shopping.txt",
            "shopping.txt"
        ));
        assert!(added(
            "Append the word done as the last line of names.txt",
            "names.txt"
        ));
        assert!(!added("Write the list into shopping.txt", "shopping.txt"));
        assert!(!added(
            "Add milk to shopping.txt and fix its typos",
            "extra.txt"
        ));
        for (task, name) in [
            (
                "Add the item written in extra.txt to my shopping list shopping.txt, as a new \
                 last line.",
                "shopping.txt",
            ),
            (
                "Copy names.txt to backup.txt. Then add the name dave as a new last line of \
                 names.txt; backup.txt keeps the list as it was.",
                "names.txt",
            ),
            ("Add 'eggs' at the end of shopping.txt", "shopping.txt"),
            (
                "Append the word done as the last line of names.txt",
                "names.txt",
            ),
        ] {
            assert_eq!(of(task, &known, name), Some(Intent::Write), "{task}");
        }
        let task = "Add the item written in extra.txt to shopping.txt";
        assert_eq!(of(task, &known, "extra.txt"), Some(Intent::Read));
        for task in [
            "Add up the numbers in data.txt and write the total to total.txt",
            "Add the numbers in data.txt and write the sum into total.txt",
            "Add the values of data.txt together into total.txt",
        ] {
            assert_eq!(of(task, &known, "data.txt"), Some(Intent::Read), "{task}");
        }
    }

    #[test]
    fn one_verb_for_a_list_of_files() {
        let known = ["report1.txt", "report2.txt", "report3.txt", "notes.txt"];
        let task = "Make a folder named archive and move report1.txt and report2.txt into it, \
                    keeping their names and content. notes.txt stays where it is.";
        assert_eq!(of(task, &known, "report1.txt"), Some(Intent::Move));
        assert_eq!(of(task, &known, "report2.txt"), Some(Intent::Move));
        assert_eq!(of(task, &known, "notes.txt"), Some(Intent::Unsaid));
        let task = "Delete report1.txt, report2.txt or report3.txt";
        assert_eq!(of(task, &known, "report3.txt"), Some(Intent::Edit));
        let task = "Read report1.txt and write a summary to notes.txt";
        assert_eq!(of(task, &known, "notes.txt"), Some(Intent::Write));
    }

    #[test]
    fn copies_the_task_asks_for() {
        let known = ["names.txt"];
        let task = "Copy names.txt to backup.txt. Then add the name dave as a new last line \
                    of names.txt; backup.txt keeps the list as it was.";
        assert_eq!(
            copies(task, &known),
            [("names.txt".to_string(), "backup.txt".to_string())]
        );
        assert!(copies("Read names.txt and write a summary to out.txt", &known).is_empty());
        assert!(copies(
            "Copy the first line of names.txt. Write it to b.txt",
            &known
        )
        .is_empty());
    }

    #[test]
    fn a_verb_after_a_determiner_is_a_noun() {
        let known = ["shopping.txt", "report.txt"];
        // "list" and "report" are read verbs; as nouns they do not govern the file.
        let task = "Put the word milk into my shopping list shopping.txt";
        assert_eq!(of(task, &known, "shopping.txt"), Some(Intent::Write));
        let task = "Please list report.txt";
        assert_eq!(of(task, &known, "report.txt"), Some(Intent::Read));
        let task = "Fix the cause (the script reads the number 21 from report.txt)";
        assert_eq!(of(task, &known, "report.txt"), Some(Intent::Read));
    }

    #[test]
    fn a_file_set_before_a_verb_that_does_not_edit_is_unsaid() {
        let known = ["notes.md"];
        for task in [
            "In notes.md, do not change anything; count its lines into n.txt",
            "In notes.md, count the lines",
        ] {
            assert_ne!(of(task, &known, "notes.md"), Some(Intent::Edit), "{task}");
        }
    }

    #[test]
    fn negated_verbs_protect() {
        let known = ["notes.md", "data.txt"];
        let task = "Fix the typo in notes.md; do not modify data.txt";
        assert_eq!(of(task, &known, "notes.md"), Some(Intent::Edit));
        assert_eq!(of(task, &known, "data.txt"), Some(Intent::Read));
        let task = "Look up the port in config.json without changing config.json";
        assert_eq!(
            of(task, &["config.json"], "config.json"),
            Some(Intent::Read)
        );
        let task = "Leave data.txt as it is and write the count to count.txt";
        assert_eq!(of(task, &known, "data.txt"), Some(Intent::Read));
    }

    #[test]
    fn renames_move_the_file_and_write_the_new_name() {
        let task = "Rename a.txt to b.txt without changing it";
        assert_eq!(
            intents(task, &["a.txt"]),
            [
                ("a.txt".to_string(), Intent::Move),
                ("b.txt".to_string(), Intent::Write)
            ]
        );
        let task = "Move report.md into archive/report.md";
        assert_eq!(of(task, &["report.md"], "report.md"), Some(Intent::Move));
        assert_eq!(
            of(task, &["report.md"], "archive/report.md"),
            Some(Intent::Write)
        );
        let task = "Copy a.txt to b.txt";
        assert_eq!(of(task, &["a.txt"], "a.txt"), Some(Intent::Read));
        assert_eq!(of(task, &["a.txt"], "b.txt"), Some(Intent::Write));
    }

    #[test]
    fn known_files_by_path_or_name_and_words_that_are_not_files() {
        let task = "Fix the spelling in README and in docs/guide.md";
        let known = ["README", "docs/guide.md"];
        assert_eq!(of(task, &known, "README"), Some(Intent::Edit));
        let task = "Summarize guide.md";
        assert_eq!(of(task, &known, "docs/guide.md"), Some(Intent::Read));
        let task = "Open https://example.com/a.html, e.g. with the browser, version 1.5 or 3.14";
        assert!(mentions(task, &[]).is_empty(), "{:?}", mentions(task, &[]));
        let task = "Write 'see data.txt for details' to note.txt";
        assert_eq!(
            intents(task, &[]),
            [("note.txt".to_string(), Intent::Write)]
        );
    }

    #[test]
    fn an_existing_file_the_task_writes_is_both() {
        let task = "Write the word count of essay.txt to count.txt";
        let known = ["essay.txt", "count.txt"];
        assert_eq!(of(task, &known, "count.txt"), Some(Intent::Write));
        assert_eq!(of(task, &known, "essay.txt"), Some(Intent::Read));
    }

    #[test]
    fn names_without_a_verb_are_unsaid() {
        assert_eq!(
            intents("data.txt: what is the total?", &["data.txt"]),
            [("data.txt".to_string(), Intent::Unsaid)]
        );
        assert!(allows_empty_output("create an empty file marker.txt"));
        assert!(!allows_empty_output("write hello to a.txt"));
        assert!(may_stay_empty("create a.txt", "a.txt"));
        assert!(may_stay_empty(
            "Touch done.flag, then list the folder",
            "done.flag"
        ));
        assert!(!may_stay_empty("create a.txt containing 'hi'", "a.txt"));
        assert!(!may_stay_empty("Create a.txt with the total", "a.txt"));
        assert!(!may_stay_empty("write the total to a.txt", "a.txt"));
    }
}
