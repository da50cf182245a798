//! A sed script read as GNU sed reads it, for the two things the rules care about: whether
//! it runs commands (`e`, the `e` flag of `s`) and which files it writes (`w`, `W`, the `w`
//! flag of `s`). Addresses (numbers, `$`, `/re/`, `\cREc`, `first~step`, `,+N`, `,~N`, the
//! `I`/`M` flags, `!`), blocks, labels, comments and every command of GNU sed are
//! understood; anything else is an error, and the caller treats the script as one that may
//! run commands. One pass, linear in the script.

/// What a script does beyond editing its input.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct SedScript {
    pub runs_commands: bool,
    pub writes: Vec<String>,
}

pub(super) fn read(script: &str) -> Result<SedScript, String> {
    let mut reader = Reader {
        chars: script.chars().collect(),
        pos: 0,
        out: SedScript::default(),
    };
    reader.script()?;
    Ok(reader.out)
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
    out: SedScript,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        self.pos += 1;
        c
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
    }

    /// The rest of the line (a file name, a command): up to a newline.
    fn rest_of_line(&mut self) -> String {
        let mut line = String::new();
        while let Some(c) = self.peek().filter(|c| *c != '\n') {
            line.push(c);
            self.pos += 1;
        }
        line
    }

    fn script(&mut self) -> Result<(), String> {
        loop {
            self.blanks();
            let Some(c) = self.peek() else { return Ok(()) };
            match c {
                ';' | '\n' | '}' => self.pos += 1,
                '#' => {
                    self.rest_of_line();
                }
                _ => self.command()?,
            }
        }
    }

    fn command(&mut self) -> Result<(), String> {
        if self.address()? {
            self.blanks();
            if self.peek() == Some(',') {
                self.pos += 1;
                self.blanks();
                match self.peek() {
                    Some('+' | '~') => {
                        self.pos += 1;
                        self.number()?;
                    }
                    _ => {
                        if !self.address()? {
                            return Err("an address range without its end".into());
                        }
                    }
                }
            }
        }
        self.blanks();
        while self.peek() == Some('!') {
            self.pos += 1;
            self.blanks();
        }
        let Some(c) = self.next() else {
            return Err("an address without a command".into());
        };
        match c {
            '{' | '=' | 'd' | 'D' | 'g' | 'G' | 'h' | 'H' | 'n' | 'N' | 'p' | 'P' | 'x' | 'z'
            | 'F' => {}
            'l' | 'L' | 'q' | 'Q' => {
                self.blanks();
                while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    self.pos += 1;
                }
            }
            ':' => {
                self.blanks();
                if self.label().is_empty() {
                    return Err("a `:` without a label".into());
                }
            }
            'b' | 't' | 'T' => {
                self.blanks();
                self.label();
            }
            'v' => {
                self.label();
            }
            'a' | 'i' | 'c' => self.text(),
            'r' | 'R' => {
                self.blanks();
                self.rest_of_line();
            }
            'w' | 'W' => {
                self.blanks();
                let file = self.rest_of_line();
                self.out.writes.push(file);
            }
            'e' => {
                self.out.runs_commands = true;
                self.rest_of_line();
            }
            's' => self.substitute()?,
            'y' => {
                let delimiter = self.delimiter()?;
                self.until(delimiter)?;
                self.until(delimiter)?;
            }
            other => return Err(format!("the sed command `{other}` is not understood")),
        }
        Ok(())
    }

    /// An address, if one starts here.
    fn address(&mut self) -> Result<bool, String> {
        match self.peek() {
            Some(c) if c.is_ascii_digit() => {
                self.number()?;
                if self.peek() == Some('~') {
                    self.pos += 1;
                    self.number()?;
                }
            }
            Some('$') => self.pos += 1,
            Some('/') => {
                self.pos += 1;
                self.until('/')?;
                self.regex_flags();
            }
            Some('\\') => {
                self.pos += 1;
                let delimiter = self.next().ok_or("an address `\\` without its delimiter")?;
                self.until(delimiter)?;
                self.regex_flags();
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some('I' | 'M')) {
            self.pos += 1;
        }
    }

    fn number(&mut self) -> Result<(), String> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        if self.pos == start {
            return Err("a number expected".into());
        }
        Ok(())
    }

    /// A label: up to a blank, `;`, `}` or the end of the line.
    fn label(&mut self) -> String {
        let mut label = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| !matches!(c, ' ' | '\t' | '\n' | ';' | '}'))
        {
            label.push(c);
            self.pos += 1;
        }
        label
    }

    /// The text of `a`, `i`, `c`: `a text`, `a\text`, or `a\` and lines, a line ending in
    /// `\` going on to the next.
    fn text(&mut self) {
        self.blanks();
        if self.peek() == Some('\\') {
            self.pos += 1;
            if self.peek() == Some('\n') {
                self.pos += 1;
            }
        }
        while let Some(c) = self.next() {
            match c {
                '\\' => self.pos += 1,
                '\n' => return,
                _ => {}
            }
        }
    }

    /// The delimiter of `s` or `y`: any character but a newline or a backslash.
    fn delimiter(&mut self) -> Result<char, String> {
        match self.next() {
            Some(c) if c != '\n' && c != '\\' => Ok(c),
            _ => Err("a missing or odd delimiter".into()),
        }
    }

    /// Up to and past the next `delimiter` not escaped by a backslash.
    fn until(&mut self, delimiter: char) -> Result<(), String> {
        loop {
            match self.next() {
                None => return Err(format!("a `{delimiter}` is never closed")),
                Some('\\') => self.pos += 1,
                Some(c) if c == delimiter => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// `s/re/replacement/flags`: the `e` flag runs the result as a command, `w FILE`
    /// writes to FILE (the rest of the line).
    fn substitute(&mut self) -> Result<(), String> {
        let delimiter = self.delimiter()?;
        self.until(delimiter)?;
        self.until(delimiter)?;
        loop {
            match self.peek() {
                Some('g' | 'p' | 'i' | 'I' | 'm' | 'M') => self.pos += 1,
                Some(c) if c.is_ascii_digit() => self.pos += 1,
                Some('e') => {
                    self.out.runs_commands = true;
                    self.pos += 1;
                }
                Some('w') => {
                    self.pos += 1;
                    self.blanks();
                    let file = self.rest_of_line();
                    self.out.writes.push(file);
                    return Ok(());
                }
                None | Some(' ' | '\t' | '\n' | ';' | '}' | '#') => return Ok(()),
                Some(other) => return Err(format!("the `s` flag `{other}` is not understood")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{read, SedScript};

    #[test]
    fn commands_that_run_or_write_are_found_wherever_they_are() {
        let runs = |s: &str| read(s).map(|r| r.runs_commands);
        for plain in [
            "p",
            "1,5p",
            "s/a/b/g",
            "s|a|b|2p",
            "$!N;P;D",
            "/start/,/end/{s/x/y/;p}",
            "1~2d",
            "0,/re/I s/e/E/",
            "y/abc/xyz/",
            ":a;N;$!ba;s/\\n/ /g",
            "a\\\nhello e world",
            "i text with e and w",
            "# comment e\np",
            "r file",
            "/e/d",
            "\\%e%d",
            "s/e/\\//",
        ] {
            assert_eq!(runs(plain), Ok(false), "{plain}");
            assert_eq!(
                read(plain).expect(plain).writes,
                Vec::<String>::new(),
                "{plain}"
            );
        }
        for running in [
            "e",
            "1e touch P",
            "s/x/touch P/e",
            "s/x/y/ge",
            "p;e id",
            "$!{e\n}",
        ] {
            assert_eq!(runs(running), Ok(true), "{running}");
        }
        assert_eq!(
            read("w out.txt"),
            Ok(SedScript {
                runs_commands: false,
                writes: vec!["out.txt".into()]
            })
        );
        assert_eq!(read("s/a/b/w P").expect("w flag").writes, vec!["P"]);
        assert_eq!(read("1W P").expect("W").writes, vec!["P"]);
        for odd in ["k", "s/a/b", "s/a/b/x", "1,", "y/a/"] {
            assert!(read(odd).is_err(), "{odd}");
        }
    }
}
