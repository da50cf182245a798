//! A small, strict reader of bash command lines for the approval rules
//! (docs/approvals.md, "What a shell rule sees"): it splits a script into its simple
//! commands across `;`, `&&`, `||`, `|`, `&`, newlines, subshells `( )`, groups `{ }`,
//! command substitutions `$( )` and backticks, removes quotes (single, double, backslash)
//! and keeps each command's assignments and redirections.
//!
//! Heredocs are read as data (an unquoted one whose body runs commands, `$(…)` or
//! backticks, is not understood). It understands on purpose only the plain part of the
//! language: anything else (functions, loops, `if`, `case`, arithmetic, process
//! substitution, unbalanced quotes…) is
//! recorded in [`ShellScript::unknown`], and the caller treats the script as one it could
//! not check, never as an allowed one.
//!
//! The same reader reads rule patterns ([`Mode::Pattern`]): there an unquoted `*` or `?` is
//! a wildcard, and a quoted one is written `\*` / `\?` (see `rule::glob`).

/// How the text is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A command line as bash will run it.
    Command,
    /// A rule pattern: unquoted `*` and `?` are wildcards; quoted ones are escaped.
    Pattern,
}

/// One word after quote removal.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    pub text: String,
    /// Holds an expansion whose value is known only when it runs (`$X`, `$(…)`, `{a,b}`).
    pub dynamic: bool,
    /// Holds an unquoted glob character (`*`, `?`, `[`): bash may replace it by file names.
    pub glob: bool,
}

/// What a redirection does with its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    Read,
    Write,
}

/// `> file`, `>> file`, `2> file`, `&> file`, `< file`, `<> file`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
}

/// One simple command: `A=1 B=2 prog arg… > out`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SimpleCommand {
    pub assignments: Vec<(String, Word)>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// A script read into its simple commands, in the order they appear (substitutions first).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ShellScript {
    pub commands: Vec<SimpleCommand>,
    /// What could not be understood, in words for a person; empty when all was.
    pub unknown: Vec<String>,
}

/// Reads `text` as bash would (or as a rule pattern).
pub(crate) fn parse(text: &str, mode: Mode) -> ShellScript {
    let mut parser = Parser {
        chars: text.chars().collect(),
        pos: 0,
        mode,
        out: ShellScript::default(),
        depth: 0,
        heredocs: Vec::new(),
    };
    if let Err(Stop) = parser.sequence(End::Eof) {
        // The reason is in `out.unknown`; what was read before it is kept.
    }
    parser.out
}

/// Reading stopped on something not understood (its reason is in `unknown`).
struct Stop;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Eof,
    Paren,
    Brace,
}

const MAX_DEPTH: usize = 32;

/// Reserved words not understood: a command starting with one is not read further.
const KEYWORDS: [&str; 6] = ["case", "esac", "function", "[[", "]]", "coproc"];

struct Parser {
    chars: Vec<char>,
    pos: usize,
    mode: Mode,
    out: ShellScript,
    depth: usize,
    /// Heredocs whose bodies start after the current line.
    heredocs: Vec<Heredoc>,
}

/// `<<EOF` / `<<-'EOF'`: the body runs to a line holding only the delimiter.
struct Heredoc {
    delimiter: String,
    /// `<<-`: leading tabs of the body's lines are dropped.
    strip_tabs: bool,
    /// The delimiter was quoted: the body is plain text (no expansion).
    quoted: bool,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.chars.get(self.pos + n).copied()
    }

    fn unknown(&mut self, why: impl Into<String>) -> Stop {
        self.out.unknown.push(why.into());
        Stop
    }

    /// Skips blanks and backslash-newline continuations.
    fn blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.pos += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.pos += 2,
                _ => return,
            }
        }
    }

    /// A list of commands up to `end`.
    fn sequence(&mut self, end: End) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.unknown("commands nested too deeply"));
        }
        let result = self.sequence_inner(end);
        self.depth -= 1;
        result
    }

    fn sequence_inner(&mut self, end: End) -> Result<(), Stop> {
        loop {
            self.blanks();
            let Some(c) = self.peek() else {
                if !self.heredocs.is_empty() {
                    return Err(self.unknown("a heredoc never ends"));
                }
                return match end {
                    End::Eof => Ok(()),
                    End::Paren => Err(self.unknown("a `(` is never closed")),
                    End::Brace => Err(self.unknown("a `{` is never closed")),
                };
            };
            match c {
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.pos += 1;
                    self.heredoc_bodies()?;
                }
                ';' => {
                    if self.peek_at(1) == Some(';') || self.peek_at(1) == Some('&') {
                        return Err(self.unknown("`;;` belongs to a `case`"));
                    }
                    self.pos += 1;
                }
                '&' if self.peek_at(1) != Some('>') => {
                    self.pos += if self.peek_at(1) == Some('&') { 2 } else { 1 };
                }
                '|' => {
                    self.pos += if matches!(self.peek_at(1), Some('|' | '&')) {
                        2
                    } else {
                        1
                    };
                }
                '!' if matches!(self.peek_at(1), Some(' ' | '\t')) => self.pos += 1,
                '(' => {
                    if self.peek_at(1) == Some('(') {
                        return Err(self.unknown("arithmetic `(( ))`"));
                    }
                    self.pos += 1;
                    self.sequence(End::Paren)?;
                    self.redirects_after_group()?;
                }
                ')' => {
                    if end == End::Paren {
                        self.pos += 1;
                        return Ok(());
                    }
                    return Err(self.unknown("a `)` without its `(`"));
                }
                '{' if self.word_ends_at(self.pos + 1) => {
                    self.pos += 1;
                    self.sequence(End::Brace)?;
                    self.redirects_after_group()?;
                }
                '}' if end == End::Brace && self.word_ends_at(self.pos + 1) => {
                    self.pos += 1;
                    return Ok(());
                }
                _ => self.simple_command()?,
            }
        }
    }

    /// Whether a word starting before `at` ends there (a reserved word like `{` stands alone).
    fn word_ends_at(&self, at: usize) -> bool {
        match self.chars.get(at) {
            None => true,
            Some(c) => matches!(
                c,
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
            ),
        }
    }

    /// `( … ) > out`: a group's redirections apply to all of it.
    fn redirects_after_group(&mut self) -> Result<(), Stop> {
        let mut group = SimpleCommand::default();
        loop {
            self.blanks();
            if !self.redirect(&mut group)? {
                break;
            }
        }
        if !group.redirects.is_empty() {
            self.out.commands.push(group);
        }
        Ok(())
    }

    fn simple_command(&mut self) -> Result<(), Stop> {
        let mut cmd = SimpleCommand::default();
        // After `fi` / `done`: only redirections may follow.
        let mut closed = false;
        // Substitutions inside this command's words land in `out` before it.
        loop {
            self.blanks();
            let Some(c) = self.peek() else { break };
            if matches!(c, '\n' | ';' | '|' | ')') || (c == '&' && self.peek_at(1) != Some('>')) {
                break;
            }
            if c == '(' {
                return Err(self.unknown(if cmd.words.is_empty() {
                    "an array or a `(` in the middle of a command"
                } else {
                    "a function definition"
                }));
            }
            if self.redirect(&mut cmd)? {
                continue;
            }
            let start = self.pos;
            let word = self.word()?;
            if self.pos == start {
                return Err(self.unknown(format!("unexpected `{c}`")));
            }
            if cmd.words.is_empty() {
                if let Some((name, value)) = assignment(&self.chars[start..self.pos], &word) {
                    if self.peek() == Some('(') {
                        return Err(self.unknown("an array assignment"));
                    }
                    cmd.assignments.push((name, value));
                    continue;
                }
                let raw: String = self.chars[start..self.pos].iter().collect();
                if cmd.assignments.is_empty() && !closed && raw == word.text {
                    match raw.as_str() {
                        // The list after these goes on: their commands are read as any.
                        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" => {
                            continue
                        }
                        "fi" | "done" => {
                            closed = true;
                            continue;
                        }
                        "for" | "select" => return self.loop_header(),
                        _ if KEYWORDS.contains(&raw.as_str()) => {
                            return Err(self.unknown(format!("the shell keyword `{raw}`")))
                        }
                        _ => {}
                    }
                }
                if closed {
                    return Err(self.unknown("words after `fi` or `done`"));
                }
                if word.text == "}" || word.text == "{" {
                    return Err(self.unknown("a misplaced `{` or `}`"));
                }
            }
            cmd.words.push(word);
        }
        self.out.commands.push(cmd);
        Ok(())
    }

    /// `for NAME in WORDS` (the `for` read) up to the end of the line or `;`: the words'
    /// substitutions run; the loop's body is read as commands after it.
    fn loop_header(&mut self) -> Result<(), Stop> {
        loop {
            self.blanks();
            match self.peek() {
                None | Some('\n' | ';') => return Ok(()),
                Some('(') => return Err(self.unknown("arithmetic `for (( ))`")),
                Some(c) => {
                    let start = self.pos;
                    self.word()?;
                    if self.pos == start {
                        return Err(self.unknown(format!("unexpected `{c}` in a `for`")));
                    }
                }
            }
        }
    }

    /// Reads one redirection into `cmd`; false when there is none here.
    fn redirect(&mut self, cmd: &mut SimpleCommand) -> Result<bool, Stop> {
        let start = self.pos;
        let mut i = self.pos;
        while self.chars.get(i).is_some_and(char::is_ascii_digit) {
            i += 1;
        }
        let both =
            i == start && self.chars.get(i) == Some(&'&') && self.chars.get(i + 1) == Some(&'>');
        if both {
            i += 1;
        }
        let Some(&op) = self.chars.get(i) else {
            return Ok(false);
        };
        if op != '<' && op != '>' {
            return Ok(false);
        }
        let next = self.chars.get(i + 1).copied();
        if next == Some('(') {
            return Err(self.unknown("process substitution `<( )` / `>( )`"));
        }
        let (kind, len, dup) = match (op, next) {
            ('<', Some('<')) => {
                if self.chars.get(i + 2) == Some(&'<') {
                    (None, 3, false)
                } else {
                    self.pos = i + 2;
                    self.heredoc_start()?;
                    return Ok(true);
                }
            }
            ('<', Some('>')) => (Some(RedirectKind::Write), 2, false),
            ('<', Some('&')) => (Some(RedirectKind::Read), 2, true),
            ('<', _) => (Some(RedirectKind::Read), 1, false),
            ('>', Some('>' | '|')) => (Some(RedirectKind::Write), 2, false),
            ('>', Some('&')) => (Some(RedirectKind::Write), 2, true),
            _ => (Some(RedirectKind::Write), 1, false),
        };
        self.pos = i + len;
        self.blanks();
        let target_start = self.pos;
        let target = self.word()?;
        if self.pos == target_start {
            return Err(self.unknown("a redirection without its file"));
        }
        let Some(kind) = kind else {
            // `<<< word`: the word is the command's input, not a file.
            return Ok(true);
        };
        let is_fd = dup && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit()));
        if !is_fd {
            cmd.redirects.push(Redirect { kind, target });
        }
        Ok(true)
    }

    /// `<<DELIM` (the `<<` read): the delimiter; the body comes after the line.
    fn heredoc_start(&mut self) -> Result<(), Stop> {
        if self.mode == Mode::Pattern {
            return Err(self.unknown("a heredoc in a pattern"));
        }
        let strip_tabs = self.peek() == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        self.blanks();
        let start = self.pos;
        let word = self.word()?;
        if self.pos == start || word.dynamic {
            return Err(self.unknown("a heredoc without a plain delimiter"));
        }
        let quoted = self.chars[start..self.pos]
            .iter()
            .any(|c| matches!(c, '\'' | '"' | '\\'));
        self.heredocs.push(Heredoc {
            delimiter: word.text,
            strip_tabs,
            quoted,
        });
        Ok(())
    }

    /// After a newline: skips the bodies of the heredocs opened on the line just read.
    fn heredoc_bodies(&mut self) -> Result<(), Stop> {
        for doc in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return Err(self.unknown("a heredoc never ends"));
                }
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |n| self.pos + n);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == doc.delimiter {
                    break;
                }
                if !doc.quoted && (line.contains("$(") || line.contains('`')) {
                    return Err(self.unknown("a heredoc whose text runs commands"));
                }
            }
        }
        Ok(())
    }

    /// One word, quotes removed; stops before a blank or an operator.
    fn word(&mut self) -> Result<Word, Stop> {
        let mut w = Word::default();
        let at_start = self.pos;
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\'' => {
                    self.pos += 1;
                    loop {
                        match self.peek() {
                            None => return Err(self.unknown("a `'` is never closed")),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(c) => {
                                self.literal(&mut w, c);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut w)?;
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => self.pos += 2,
                    Some(c) => {
                        self.literal(&mut w, c);
                        self.pos += 2;
                    }
                    None => {
                        self.pos += 1;
                    }
                },
                '$' => self.dollar(&mut w)?,
                '`' => self.backticks(&mut w)?,
                '*' | '?' | '[' => {
                    // A lone `[` is the `test` command, not a pattern.
                    w.glob |= c != '[' || !self.word_ends_at(self.pos + 1);
                    w.text.push(c);
                    self.pos += 1;
                }
                '{' if self.pos > at_start || !self.word_ends_at(self.pos + 1) => {
                    if self.brace_expansion_ahead() {
                        w.dynamic = true;
                    }
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        Ok(w)
    }

    /// A character that was quoted: in a pattern, a wildcard character stays literal.
    fn literal(&self, w: &mut Word, c: char) {
        if self.mode == Mode::Pattern && matches!(c, '*' | '?' | '\\') {
            w.text.push('\\');
        }
        w.text.push(c);
    }

    /// Whether the `{` here opens a brace expansion (`{a,b}`, `{1..3}`).
    fn brace_expansion_ahead(&self) -> bool {
        let rest = &self.chars[self.pos..];
        let Some(close) = rest.iter().position(|&c| c == '}') else {
            return false;
        };
        let inner: String = rest[1..close].iter().collect();
        inner.contains(',') || inner.contains("..")
    }

    fn double_quoted(&mut self, w: &mut Word) -> Result<(), Stop> {
        loop {
            match self.peek() {
                None => return Err(self.unknown("a `\"` is never closed")),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => match self.peek_at(1) {
                    Some(c @ ('$' | '`' | '"' | '\\')) => {
                        self.literal(w, c);
                        self.pos += 2;
                    }
                    Some('\n') => self.pos += 2,
                    _ => {
                        self.literal(w, '\\');
                        self.pos += 1;
                    }
                },
                Some('$') => self.dollar(w)?,
                Some('`') => self.backticks(w)?,
                Some(c) => {
                    self.literal(w, c);
                    self.pos += 1;
                }
            }
        }
    }

    /// `$NAME`, `${…}`, `$(…)`, `$'…'`; a lone `$` is itself.
    fn dollar(&mut self, w: &mut Word) -> Result<(), Stop> {
        match self.peek_at(1) {
            Some('(') => {
                if self.peek_at(2) == Some('(') {
                    return Err(self.unknown("arithmetic `$(( ))`"));
                }
                self.pos += 2;
                self.sequence(End::Paren)?;
                w.dynamic = true;
                w.text.push_str("$(…)");
            }
            Some('{') => {
                let Some(close) = self.chars[self.pos..].iter().position(|&c| c == '}') else {
                    return Err(self.unknown("a `${` is never closed"));
                };
                let inner: String = self.chars[self.pos + 2..self.pos + close].iter().collect();
                if inner.contains("$(") || inner.contains('`') {
                    return Err(self.unknown("a command inside `${ }`"));
                }
                w.dynamic = true;
                w.text.push_str(&format!("${{{inner}}}"));
                self.pos += close + 1;
            }
            Some('\'') => {
                // ANSI-C quoting (`$'\x72m'`): its value is not worked out here.
                self.pos += 2;
                w.dynamic = true;
                loop {
                    match self.peek() {
                        None => return Err(self.unknown("a `$'` is never closed")),
                        Some('\\') => {
                            w.text.push('\\');
                            if let Some(c) = self.peek_at(1) {
                                w.text.push(c);
                            }
                            self.pos += 2;
                        }
                        Some('\'') => {
                            self.pos += 1;
                            break;
                        }
                        Some(c) => {
                            w.text.push(c);
                            self.pos += 1;
                        }
                    }
                }
            }
            Some('"') => {
                // `$"…"`: a translated string, read as a double-quoted one.
                self.pos += 2;
                self.double_quoted(w)?;
            }
            Some(c)
                if c.is_ascii_alphanumeric()
                    || matches!(c, '_' | '@' | '*' | '#' | '?' | '$' | '!' | '-') =>
            {
                w.dynamic = true;
                w.text.push('$');
                self.pos += 1;
                if c.is_ascii_alphabetic() || c == '_' {
                    while self
                        .peek()
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        w.text.push(self.chars[self.pos]);
                        self.pos += 1;
                    }
                } else {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
            _ => {
                w.text.push('$');
                self.pos += 1;
            }
        }
        Ok(())
    }

    /// `` `…` ``: the inner text is a script of its own.
    fn backticks(&mut self, w: &mut Word) -> Result<(), Stop> {
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(self.unknown("a backtick is never closed")),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') if matches!(self.peek_at(1), Some('`' | '\\' | '$')) => {
                    if let Some(c) = self.peek_at(1) {
                        inner.push(c);
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        if self.depth >= MAX_DEPTH {
            return Err(self.unknown("commands nested too deeply"));
        }
        let mut nested = Parser {
            chars: inner.chars().collect(),
            pos: 0,
            mode: self.mode,
            out: ShellScript::default(),
            depth: self.depth,
            heredocs: Vec::new(),
        };
        let stopped = nested.sequence(End::Eof).is_err();
        self.out.commands.append(&mut nested.out.commands);
        self.out.unknown.append(&mut nested.out.unknown);
        if stopped {
            return Err(Stop);
        }
        w.dynamic = true;
        w.text.push_str("`…`");
        Ok(())
    }
}

/// `NAME=value` (or `NAME+=value`) before a command: the name, when `raw` (the word as
/// written) starts with an unquoted name and `=`.
fn assignment(raw: &[char], word: &Word) -> Option<(String, Word)> {
    let eq = raw.iter().position(|&c| c == '=')?;
    let name_end = if eq > 0 && raw[eq - 1] == '+' {
        eq - 1
    } else {
        eq
    };
    let name: String = raw[..name_end].iter().collect();
    let mut chars = name.chars();
    let first = chars.next()?;
    if !(first.is_ascii_alphabetic() || first == '_')
        || !chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        return None;
    }
    let value_start = word.text.find('=')? + 1;
    Some((
        name,
        Word {
            text: word.text[value_start..].to_string(),
            dynamic: word.dynamic,
            glob: word.glob,
        },
    ))
}
