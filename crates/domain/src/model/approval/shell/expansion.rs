//! `${…}`, read strictly (docs/approvals.md, "What a shell rule sees"). Bash evaluates
//! text in several of its forms: `${x@P}` expands a prompt string (running the `$( )` in
//! the variable's value), `${!x}` and array subscripts (`${a[$i]}`) and offsets
//! (`${x:$n}`) evaluate arithmetic, whose variable names may hold subscripts that run
//! commands. So only the forms below are understood: a name (or a special parameter),
//! optionally a subscript `[@]`, `[*]` or digits, then `}`, or an operator and a word of
//! plain characters, `$NAME` and nested `${…}` of the same kind:
//!
//! `${x}`, `${#x}`, `${x:-w}`, `${x-w}`, `${x:=w}`, `${x=w}`, `${x:+w}`, `${x+w}`,
//! `${x:?w}`, `${x?w}`, `${x#w}`, `${x##w}`, `${x%w}`, `${x%%w}`, `${x/w}`, `${x//w}`,
//! `${x/#w}`, `${x/%w}`, `${x^w}`, `${x^^w}`, `${x,w}`, `${x,,w}`, `${x:1:2}` (digits),
//! `${x@Q}` (and `E`, `U`, `u`, `L`, `a`, `A`, `K`, `k`).
//!
//! Anything else in a `${…}` (quotes, backticks, `$( )`, `$[ ]`, `{`, a backslash before
//! a newline) is not understood. An assignment form (`:=`, `=`) to a variable that
//! changes what runs (`PS4`, `PATH`…) is not understood either.

use super::{Parser, Stop, Word};
use crate::model::approval::variables::is_risky_variable;

impl Parser {
    /// `${…}` (at its `$`), read into `w` as a dynamic part.
    pub(super) fn parameter(&mut self, w: &mut Word) -> Result<(), Stop> {
        let start = self.cursor.pos();
        self.cursor.advance(2);
        self.parameter_body()?;
        w.dynamic = true;
        w.text.push_str("${");
        let inner: String = self.cursor.since(start + 2).iter().collect();
        w.text.push_str(&inner);
        Ok(())
    }

    /// After `${`: up to and past its `}`.
    fn parameter_body(&mut self) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > super::MAX_DEPTH {
            return Err(self.unknown("`${ }` nested too deeply"));
        }
        let result = self.parameter_inner();
        self.depth -= 1;
        result
    }

    fn parameter_inner(&mut self) -> Result<(), Stop> {
        match self.peek() {
            Some('!') => return Err(self.unknown("indirect expansion `${!…}`")),
            Some('#') if self.peek_at(1) != Some('}') => {
                // `${#x}`: the length (`${#}` alone is the number of arguments).
                self.cursor.advance(1);
            }
            _ => {}
        }
        let name = self.parameter_name()?;
        if self.peek() == Some('[') {
            self.subscript()?;
        }
        let Some(op) = self.peek() else {
            return Err(self.unknown("a `${` is never closed"));
        };
        match op {
            '}' => {
                self.cursor.advance(1);
                return Ok(());
            }
            '@' => {
                self.cursor.advance(1);
                return match self.peek() {
                    Some('P') => Err(self.unknown(
                        "`${…@P}` expands a prompt string, running the commands it holds",
                    )),
                    Some('Q' | 'E' | 'U' | 'u' | 'L' | 'a' | 'A' | 'K' | 'k')
                        if self.peek_at(1) == Some('}') =>
                    {
                        self.cursor.advance(2);
                        Ok(())
                    }
                    _ => Err(self.unknown("a `${…@…}` transformation not understood")),
                };
            }
            ':' => {
                self.cursor.advance(1);
                match self.peek() {
                    Some('-' | '+' | '?') => self.cursor.advance(1),
                    Some('=') => {
                        self.assigns(&name)?;
                        self.cursor.advance(1);
                    }
                    _ => return self.offset(),
                }
            }
            '=' => {
                self.assigns(&name)?;
                self.cursor.advance(1);
            }
            '-' | '+' | '?' => self.cursor.advance(1),
            '#' | '%' | '^' | ',' | '/' => {
                self.cursor.advance(1);
                let twice = match op {
                    '/' => matches!(self.peek(), Some('/' | '#' | '%')),
                    _ => self.peek() == Some(op),
                };
                if twice {
                    self.cursor.advance(1);
                }
            }
            _ => return Err(self.unknown(format!("`${{…{op}…}}` not understood"))),
        }
        self.parameter_word()
    }

    /// The name (or special parameter) of a `${…}`.
    fn parameter_name(&mut self) -> Result<String, Stop> {
        let mut name = String::new();
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.cursor.advance(1);
                }
            }
            Some(c) if c.is_ascii_digit() => {
                while let Some(c) = self.peek().filter(char::is_ascii_digit) {
                    name.push(c);
                    self.cursor.advance(1);
                }
            }
            Some(c @ ('@' | '*' | '#' | '?' | '$' | '!' | '-')) => {
                name.push(c);
                self.cursor.advance(1);
            }
            _ => return Err(self.unknown("a `${ }` without a plain name")),
        }
        Ok(name)
    }

    /// `[@]`, `[*]` or `[digits]`; any other subscript is arithmetic.
    fn subscript(&mut self) -> Result<(), Stop> {
        self.cursor.advance(1);
        match self.peek() {
            Some('@' | '*') => self.cursor.advance(1),
            Some(c) if c.is_ascii_digit() => {
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.cursor.advance(1);
                }
            }
            _ => {
                return Err(self.unknown(
                    "an array subscript, evaluated as arithmetic (which may run commands)",
                ))
            }
        }
        if self.peek() != Some(']') {
            return Err(self
                .unknown("an array subscript, evaluated as arithmetic (which may run commands)"));
        }
        self.cursor.advance(1);
        Ok(())
    }

    /// `${x:1}`, `${x: -2:1}`: digits, blanks and `-` only (names would be arithmetic).
    fn offset(&mut self) -> Result<(), Stop> {
        loop {
            match self.peek() {
                Some('}') => {
                    self.cursor.advance(1);
                    return Ok(());
                }
                Some(c) if c.is_ascii_digit() || matches!(c, ' ' | '-' | ':') => {
                    self.cursor.advance(1);
                }
                _ => {
                    return Err(self
                        .unknown("a `${x:…}` offset other than digits, evaluated as arithmetic"))
                }
            }
        }
    }

    /// `${x:=…}` assigns `x`: not understood when `x` changes what runs.
    fn assigns(&mut self, name: &str) -> Result<(), Stop> {
        if is_risky_variable(name) {
            return Err(self.unknown(format!(
                "`${{{name}:=…}}` sets `{name}`, which changes what runs"
            )));
        }
        Ok(())
    }

    /// The word after an operator, up to and past the closing `}`.
    fn parameter_word(&mut self) -> Result<(), Stop> {
        loop {
            match self.peek() {
                None => return Err(self.unknown("a `${` is never closed")),
                Some('}') => {
                    self.cursor.advance(1);
                    return Ok(());
                }
                Some('\\') => {
                    if self.peek_at(1) == Some('\n') {
                        return Err(self.unknown("a line continuation inside `${ }`"));
                    }
                    self.cursor.advance(2);
                }
                Some('$') => match self.peek_at(1) {
                    Some('{') => {
                        self.cursor.advance(2);
                        self.parameter_body()?;
                    }
                    Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                        self.cursor.advance(1);
                        while self
                            .peek()
                            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            self.cursor.advance(1);
                        }
                    }
                    Some('@' | '*' | '#' | '?' | '$' | '!' | '-') => self.cursor.advance(2),
                    Some('}') | None => self.cursor.advance(1),
                    Some(_) => {
                        return Err(self.unknown("a substitution or quote inside `${ }`"));
                    }
                },
                Some('`' | '\'' | '"' | '{') => {
                    return Err(self.unknown("a substitution, quote or brace inside `${ }`"));
                }
                Some(_) => self.cursor.advance(1),
            }
        }
    }
}
