//! A small, strict reader of bash command lines for the approval rules
//! (docs/approvals.md, "What a shell rule sees"): it splits a script into its simple
//! commands across `;`, `&&`, `||`, `|`, `&`, newlines, subshells `( )`, groups `{ }`,
//! command substitutions `$( )` and backticks, removes quotes (single, double, backslash)
//! and keeps each command's assignments and redirections.
//!
//! Heredocs are data; the commands an unquoted one's text substitutes (`$( )`, backticks)
//! are read as commands. It understands on purpose only the plain part of the language:
//! anything else (functions, `case`, arithmetic, process substitution, `${ }` forms that
//! evaluate text, line continuations inside a word or an operator, unbalanced quotes…) is
//! recorded in [`ShellScript::unknown`], and the caller treats the script as one it could
//! not check, never as an allowed one.
//!
//! Every character is read through a [`cursor::Cursor`], which counts each look: reading is
//! linear in the text, and [`ShellScript::steps`] lets the tests hold it to that.
//!
//! The same reader reads rule patterns ([`Mode::Pattern`]): there an unquoted `*` or `?` is
//! a wildcard, and a quoted one is written `\*` / `\?` (see `rule::glob`).

mod cursor;
mod expansion;

use cursor::Cursor;

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
    /// Holds an expansion whose value is known only when it runs (`$X`, `$(…)`, `{a,b}`,
    /// `~`, `$'…'`).
    pub dynamic: bool,
    /// Holds an unquoted glob character (`*`, `?`, `[`): bash may replace it by file names.
    pub glob: bool,
    /// Starts with an unquoted glob character (`*.txt`): a file name it expands to may
    /// start with `-` and read as an option.
    pub glob_leads: bool,
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
    /// The characters the reader looked at (each look counted): linear in the text.
    pub steps: usize,
}

/// Reads `text` as bash would (or as a rule pattern).
pub(crate) fn parse(text: &str, mode: Mode) -> ShellScript {
    let mut parser = Parser::new(text, mode, 0);
    if let Err(Stop) = parser.sequence(End::Eof) {
        // The reason is in `out.unknown`; what was read before it is kept.
    }
    parser.finish()
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
    cursor: Cursor,
    mode: Mode,
    out: ShellScript,
    depth: usize,
    /// Heredocs whose bodies start after the current line.
    heredocs: Vec<Heredoc>,
    /// Steps of the nested readers (backticks, heredoc texts).
    nested_steps: usize,
}

/// `<<EOF` / `<<-'EOF'`: the body runs to a line holding only the delimiter.
struct Heredoc {
    delimiter: String,
    /// `<<-`: leading tabs of the body's lines are dropped.
    strip_tabs: bool,
    /// The delimiter was quoted: the body is plain text (no expansion).
    quoted: bool,
    /// The nesting (`( )`, `$( )`, `{ }`) where it was opened: its body must start after
    /// a newline at the same nesting, where this reader is sure bash reads it too.
    depth: usize,
}

/// What a `$` (or `` ` ``) is read inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A word outside quotes.
    Bare,
    /// Double quotes: `$'` and `$"` are plain characters there.
    Double,
    /// The text of an unquoted heredoc: as in double quotes, and `"` is a plain character.
    Heredoc,
}

impl Parser {
    fn new(text: &str, mode: Mode, depth: usize) -> Parser {
        Parser {
            cursor: Cursor::new(text),
            mode,
            out: ShellScript::default(),
            depth,
            heredocs: Vec::new(),
            nested_steps: 0,
        }
    }

    fn finish(mut self) -> ShellScript {
        self.out.steps = self.cursor.steps().saturating_add(self.nested_steps);
        self.out
    }

    fn peek(&self) -> Option<char> {
        self.cursor.peek()
    }

    fn peek_at(&self, n: usize) -> Option<char> {
        self.cursor.peek_at(n)
    }

    fn unknown(&mut self, why: impl Into<String>) -> Stop {
        self.out.unknown.push(why.into());
        Stop
    }

    /// The character after the current one as bash's reader sees it: line continuations
    /// (backslash, newline) between them are removed first. When the character after them
    /// would join the current one into something else (`joins`: `&\` newline `&` is `&&`,
    /// `$\` newline `(` is `$(`), this reader does not follow, and says so.
    fn second(&mut self, joins: fn(char) -> bool) -> Result<Option<char>, Stop> {
        let mut i = self.cursor.pos() + 1;
        if !self.cursor.continuation_at(i) {
            return Ok(self.cursor.at(i));
        }
        while self.cursor.continuation_at(i) {
            i += 2;
        }
        let after = self.cursor.at(i);
        if after.is_some_and(joins) {
            return Err(self.unknown("a line continuation inside an operator or after `$`"));
        }
        // The continuation is a blank between two words; the operator is one character.
        Ok(None)
    }

    /// Skips blanks and backslash-newline continuations.
    fn blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t' | '\r') => self.cursor.advance(1),
                Some('\\') if self.peek_at(1) == Some('\n') => self.cursor.advance(2),
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
                    // A comment runs to the end of the line (a backslash does not continue it).
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.cursor.advance(1);
                    }
                }
                '\n' => {
                    self.cursor.advance(1);
                    self.heredoc_bodies()?;
                }
                ';' => {
                    if matches!(self.second(|c| matches!(c, ';' | '&'))?, Some(';' | '&')) {
                        return Err(self.unknown("`;;` belongs to a `case`"));
                    }
                    self.cursor.advance(1);
                }
                '&' if self.second(|c| matches!(c, '&' | '>'))? != Some('>') => {
                    let len = if self.peek_at(1) == Some('&') { 2 } else { 1 };
                    self.cursor.advance(len);
                }
                '|' => {
                    let len = if matches!(self.second(|c| matches!(c, '|' | '&'))?, Some('|' | '&'))
                    {
                        2
                    } else {
                        1
                    };
                    self.cursor.advance(len);
                }
                '!' if matches!(self.peek_at(1), Some(' ' | '\t')) => self.cursor.advance(1),
                '(' => {
                    if self.second(|c| c == '(')? == Some('(') {
                        return Err(self.unknown("arithmetic `(( ))`"));
                    }
                    self.cursor.advance(1);
                    self.sequence(End::Paren)?;
                    self.redirects_after_group()?;
                }
                ')' => {
                    if end == End::Paren {
                        self.cursor.advance(1);
                        return Ok(());
                    }
                    return Err(self.unknown("a `)` without its `(`"));
                }
                '{' if self.word_ends_at(self.cursor.pos() + 1) => {
                    self.cursor.advance(1);
                    self.sequence(End::Brace)?;
                    self.redirects_after_group()?;
                }
                '}' if end == End::Brace && self.word_ends_at(self.cursor.pos() + 1) => {
                    self.cursor.advance(1);
                    return Ok(());
                }
                _ => self.simple_command()?,
            }
        }
    }

    /// Whether a word starting before `at` ends there (a reserved word like `{` stands alone).
    fn word_ends_at(&self, at: usize) -> bool {
        match self.cursor.at(at) {
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
            if matches!(c, '\n' | ';' | '|' | ')')
                || (c == '&' && self.second(|c| matches!(c, '&' | '>'))? != Some('>'))
            {
                break;
            }
            if c == '#' {
                // A word starting with `#` starts a comment, to the end of the line.
                while self.peek().is_some_and(|c| c != '\n') {
                    self.cursor.advance(1);
                }
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
            let start = self.cursor.pos();
            let word = self.word()?;
            if self.cursor.pos() == start {
                return Err(self.unknown(format!("unexpected `{c}`")));
            }
            if cmd.words.is_empty() {
                let raw: String = self.cursor.since(start).iter().collect();
                if let Some((name, value)) = assignment(&raw, &word) {
                    if self.peek() == Some('(') {
                        return Err(self.unknown("an array assignment"));
                    }
                    cmd.assignments.push((name, value));
                    continue;
                }
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
                    let start = self.cursor.pos();
                    self.word()?;
                    if self.cursor.pos() == start {
                        return Err(self.unknown(format!("unexpected `{c}` in a `for`")));
                    }
                }
            }
        }
    }

    /// Reads one redirection into `cmd`; false when there is none here.
    fn redirect(&mut self, cmd: &mut SimpleCommand) -> Result<bool, Stop> {
        let start = self.cursor.pos();
        let mut i = start;
        while self.cursor.at(i).is_some_and(|c| c.is_ascii_digit()) {
            i += 1;
        }
        let both =
            i == start && self.cursor.at(i) == Some('&') && self.cursor.at(i + 1) == Some('>');
        if both {
            i += 1;
        }
        let Some(op) = self.cursor.at(i) else {
            return Ok(false);
        };
        if op != '<' && op != '>' {
            return Ok(false);
        }
        let joins = |c: char| matches!(c, '<' | '>' | '&' | '|' | '(' | '-');
        let next = self.after_operator(i + 1, joins)?;
        if next == Some('(') {
            return Err(self.unknown("process substitution `<( )` / `>( )`"));
        }
        let (kind, len, dup) = match (op, next) {
            ('<', Some('<')) => {
                if self.after_operator(i + 2, joins)? == Some('<') {
                    (None, 3, false)
                } else {
                    self.cursor.seek(i + 2);
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
        self.cursor.seek(i + len);
        self.blanks();
        let target_start = self.cursor.pos();
        let target = self.word()?;
        if self.cursor.pos() == target_start {
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

    /// The character at `i`, inside an operator: a line continuation there joins the
    /// operator with what follows it when `joins` says so (`>\` newline `>` is `>>`), which
    /// this reader does not follow; otherwise it ends the operator (`None`).
    fn after_operator(&mut self, i: usize, joins: fn(char) -> bool) -> Result<Option<char>, Stop> {
        if !self.cursor.continuation_at(i) {
            return Ok(self.cursor.at(i));
        }
        let mut j = i;
        while self.cursor.continuation_at(j) {
            j += 2;
        }
        if self.cursor.at(j).is_some_and(joins) {
            return Err(self.unknown("a line continuation inside a redirection"));
        }
        Ok(None)
    }

    /// `<<DELIM` (the `<<` read): the delimiter; the body comes after the line.
    fn heredoc_start(&mut self) -> Result<(), Stop> {
        if self.mode == Mode::Pattern {
            return Err(self.unknown("a heredoc in a pattern"));
        }
        if self.cursor.continuation_at(self.cursor.pos()) {
            return Err(self.unknown("a line continuation inside a redirection"));
        }
        let strip_tabs = self.peek() == Some('-');
        if strip_tabs {
            self.cursor.advance(1);
        }
        self.blanks();
        let start = self.cursor.pos();
        let word = self.word()?;
        if self.cursor.pos() == start || word.dynamic {
            return Err(self.unknown("a heredoc without a plain delimiter"));
        }
        let quoted = self
            .cursor
            .since(start)
            .iter()
            .any(|c| matches!(c, '\'' | '"' | '\\'));
        self.heredocs.push(Heredoc {
            delimiter: word.text,
            strip_tabs,
            quoted,
            depth: self.depth,
        });
        Ok(())
    }

    /// After a newline: reads the bodies of the heredocs opened on the line just read. A
    /// quoted one's is plain text; an unquoted one's lines are joined at line continuations
    /// (as bash does, also to find the delimiter) and its text read as in double quotes:
    /// the commands it substitutes are commands of the script.
    fn heredoc_bodies(&mut self) -> Result<(), Stop> {
        for doc in std::mem::take(&mut self.heredocs) {
            if doc.depth != self.depth {
                return Err(self.unknown(
                    "a heredoc whose text starts inside or after a group or a substitution",
                ));
            }
            let mut body = String::new();
            loop {
                if self.cursor.at_end() {
                    return Err(self.unknown("a heredoc never ends"));
                }
                let line = if doc.quoted {
                    self.cursor.line()
                } else {
                    self.joined_line()
                };
                let line = if doc.strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if line == doc.delimiter {
                    break;
                }
                if !doc.quoted {
                    body.push_str(line);
                    body.push('\n');
                }
            }
            if !body.is_empty() {
                self.nested(&body, |p| p.heredoc_text())?;
            }
        }
        Ok(())
    }

    /// One line of an unquoted heredoc, backslash-newline pairs removed (a `\\` stays a
    /// pair); the cursor moves past its newline.
    fn joined_line(&mut self) -> String {
        let mut line = String::new();
        loop {
            match self.peek() {
                None => return line,
                Some('\n') => {
                    self.cursor.advance(1);
                    return line;
                }
                Some('\\') => match self.peek_at(1) {
                    Some('\n') => self.cursor.advance(2),
                    Some(c) => {
                        line.push('\\');
                        line.push(c);
                        self.cursor.advance(2);
                    }
                    None => {
                        line.push('\\');
                        self.cursor.advance(1);
                    }
                },
                Some(c) => {
                    line.push(c);
                    self.cursor.advance(1);
                }
            }
        }
    }

    /// The text of an unquoted heredoc (this parser reads only it): `\` escapes `$`, `` ` ``
    /// and `\`; `$` and backticks expand.
    fn heredoc_text(&mut self) -> Result<(), Stop> {
        let mut w = Word::default();
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.cursor.advance(2),
                '$' => self.dollar(&mut w, Context::Heredoc)?,
                '`' => self.backticks(&mut w, Context::Heredoc)?,
                _ => self.cursor.advance(1),
            }
        }
        Ok(())
    }

    /// Runs `read` on a parser of its own over `text` (one nesting deeper); what it reads
    /// joins this one's.
    fn nested(
        &mut self,
        text: &str,
        read: impl FnOnce(&mut Parser) -> Result<(), Stop>,
    ) -> Result<(), Stop> {
        if self.depth >= MAX_DEPTH {
            return Err(self.unknown("commands nested too deeply"));
        }
        let mut nested = Parser::new(text, self.mode, self.depth + 1);
        let stopped = read(&mut nested).is_err();
        let out = nested.finish();
        self.nested_steps = self.nested_steps.saturating_add(out.steps);
        self.out.commands.extend(out.commands);
        self.out.unknown.extend(out.unknown);
        if stopped {
            return Err(Stop);
        }
        Ok(())
    }

    /// One word, quotes removed; stops before a blank or an operator.
    fn word(&mut self) -> Result<Word, Stop> {
        let mut w = Word::default();
        let at_start = self.cursor.pos();
        // Brace expansion (`{a,b}`, `{1..3}`): unquoted `{` not yet closed in this word,
        // and whether a `,` or `..` came after the first of them.
        let mut braces_open = 0usize;
        let mut brace_list = false;
        while let Some(c) = self.peek() {
            let first = self.cursor.pos() == at_start;
            match c {
                ' ' | '\t' | '\r' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                '\'' => {
                    self.cursor.advance(1);
                    loop {
                        match self.peek() {
                            None => return Err(self.unknown("a `'` is never closed")),
                            Some('\'') => {
                                self.cursor.advance(1);
                                break;
                            }
                            Some(c) => {
                                self.literal(&mut w, c);
                                self.cursor.advance(1);
                            }
                        }
                    }
                }
                '"' => {
                    self.cursor.advance(1);
                    self.double_quoted(&mut w)?;
                }
                '\\' => match self.peek_at(1) {
                    Some('\n') => {
                        return Err(self.unknown("a line continuation inside a word"));
                    }
                    Some(c) => {
                        self.literal(&mut w, c);
                        self.cursor.advance(2);
                    }
                    None => {
                        self.cursor.advance(1);
                    }
                },
                '$' => self.dollar(&mut w, Context::Bare)?,
                '`' => self.backticks(&mut w, Context::Bare)?,
                '~' if first && self.mode == Mode::Command => {
                    // Tilde expansion: a home folder, known when it runs.
                    w.dynamic = true;
                    w.text.push(c);
                    self.cursor.advance(1);
                }
                '*' | '?' | '[' => {
                    // A lone `[` is the `test` command, not a pattern.
                    let glob = c != '[' || !self.word_ends_at(self.cursor.pos() + 1);
                    w.glob |= glob;
                    w.glob_leads |= glob && first;
                    w.text.push(c);
                    self.cursor.advance(1);
                }
                '{' if !first || !self.word_ends_at(self.cursor.pos() + 1) => {
                    braces_open += 1;
                    w.text.push(c);
                    self.cursor.advance(1);
                }
                '}' if braces_open > 0 => {
                    braces_open -= 1;
                    if brace_list {
                        w.dynamic = true;
                    }
                    w.text.push(c);
                    self.cursor.advance(1);
                }
                ',' if braces_open > 0 => {
                    brace_list = true;
                    w.text.push(c);
                    self.cursor.advance(1);
                }
                '.' if braces_open > 0 && self.peek_at(1) == Some('.') => {
                    brace_list = true;
                    w.text.push_str("..");
                    self.cursor.advance(2);
                }
                _ => {
                    w.text.push(c);
                    self.cursor.advance(1);
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

    fn double_quoted(&mut self, w: &mut Word) -> Result<(), Stop> {
        loop {
            match self.peek() {
                None => return Err(self.unknown("a `\"` is never closed")),
                Some('"') => {
                    self.cursor.advance(1);
                    return Ok(());
                }
                Some('\\') => match self.peek_at(1) {
                    Some(c @ ('$' | '`' | '"' | '\\')) => {
                        self.literal(w, c);
                        self.cursor.advance(2);
                    }
                    Some('\n') => self.cursor.advance(2),
                    _ => {
                        self.literal(w, '\\');
                        self.cursor.advance(1);
                    }
                },
                Some('$') => self.dollar(w, Context::Double)?,
                Some('`') => self.backticks(w, Context::Double)?,
                Some(c) => {
                    self.literal(w, c);
                    self.cursor.advance(1);
                }
            }
        }
    }

    /// `$NAME`, `${…}`, `$(…)`, `$'…'`; a lone `$` is itself.
    fn dollar(&mut self, w: &mut Word, context: Context) -> Result<(), Stop> {
        // After `$`, a continuation joins whatever follows (`$\` newline `(` is `$(`).
        match self.second(|c| !matches!(c, ' ' | '\t' | '\n'))? {
            Some('(') => {
                if self.cursor.continuation_at(self.cursor.pos() + 2) {
                    return Err(self.unknown("a line continuation after `$(`"));
                }
                if self.peek_at(2) == Some('(') {
                    return Err(self.unknown("arithmetic `$(( ))`"));
                }
                self.cursor.advance(2);
                self.sequence(End::Paren)?;
                w.dynamic = true;
                w.text.push_str("$(…)");
            }
            Some('[') => return Err(self.unknown("arithmetic `$[ ]`")),
            Some('{') => {
                self.parameter(w)?;
            }
            Some('\'') if context == Context::Bare => {
                // ANSI-C quoting (`$'\x72m'`): its value is not worked out here.
                self.cursor.advance(2);
                w.dynamic = true;
                loop {
                    match self.peek() {
                        None => return Err(self.unknown("a `$'` is never closed")),
                        Some('\\') => {
                            w.text.push('\\');
                            if let Some(c) = self.peek_at(1) {
                                w.text.push(c);
                            }
                            self.cursor.advance(2);
                        }
                        Some('\'') => {
                            self.cursor.advance(1);
                            break;
                        }
                        Some(c) => {
                            w.text.push(c);
                            self.cursor.advance(1);
                        }
                    }
                }
            }
            Some('"') if context == Context::Bare => {
                // `$"…"`: a string translated from a message catalog when it runs.
                self.cursor.advance(2);
                w.dynamic = true;
                self.double_quoted(w)?;
            }
            Some(c)
                if c.is_ascii_alphanumeric()
                    || matches!(c, '_' | '@' | '*' | '#' | '?' | '$' | '!' | '-') =>
            {
                w.dynamic = true;
                w.text.push('$');
                self.cursor.advance(1);
                if c.is_ascii_alphabetic() || c == '_' {
                    while let Some(c) = self
                        .peek()
                        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                    {
                        w.text.push(c);
                        self.cursor.advance(1);
                    }
                } else {
                    w.text.push(c);
                    self.cursor.advance(1);
                }
            }
            _ => {
                w.text.push('$');
                self.cursor.advance(1);
            }
        }
        Ok(())
    }

    /// `` `…` ``: the inner text is a script of its own. Inside double quotes (and
    /// heredocs) `\"` is a `"` there too.
    fn backticks(&mut self, w: &mut Word, context: Context) -> Result<(), Stop> {
        self.cursor.advance(1);
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err(self.unknown("a backtick is never closed")),
                Some('`') => {
                    self.cursor.advance(1);
                    break;
                }
                Some('\\') => match self.peek_at(1) {
                    Some(c @ ('`' | '\\' | '$')) => {
                        inner.push(c);
                        self.cursor.advance(2);
                    }
                    Some('"') if context == Context::Double => {
                        inner.push('"');
                        self.cursor.advance(2);
                    }
                    _ => {
                        inner.push('\\');
                        self.cursor.advance(1);
                    }
                },
                Some(c) => {
                    inner.push(c);
                    self.cursor.advance(1);
                }
            }
        }
        self.nested(&inner, |p| p.sequence(End::Eof))?;
        w.dynamic = true;
        w.text.push_str("`…`");
        Ok(())
    }
}

/// `NAME=value` (or `NAME+=value`) before a command: the name, when `raw` (the word as
/// written) starts with an unquoted name and `=`.
fn assignment(raw: &str, word: &Word) -> Option<(String, Word)> {
    let (left, _) = raw.split_once('=')?;
    let name = left.strip_suffix('+').unwrap_or(left);
    if !is_name(name) {
        return None;
    }
    let value_start = word.text.find('=')? + 1;
    Some((
        name.to_string(),
        Word {
            text: word.text[value_start..].to_string(),
            ..word.clone()
        },
    ))
}

/// A shell variable's name: a letter or `_`, then letters, digits and `_`.
pub(crate) fn is_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
