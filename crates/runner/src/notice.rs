//! Notices for the person running Planwright (the sandbox fallback warning, the embedded
//! model picked for want of an endpoint): the runner writes nothing to the terminal itself,
//! so a front end says where notices go in the settings it builds runs from
//! (`RunSettings::notices`, [`Notices::to`]; the binary writes them on stderr, warnings
//! unless `-q`). Without a writer they are logged. No process-wide setting: two embedders in
//! one process each get their own.

use std::fmt;

/// How much a notice matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A choice made for the user that they must know of (the embedded model picked for
    /// want of an endpoint): said even to a quiet front end.
    Choice,
    /// Something the user should act on or silence (no sandbox); a quiet front end drops it.
    Warning,
}

/// A front end's writer of notices.
pub type Writer = fn(Level, &str);

/// Where notices go: a front end's [`Writer`], or the log (the default).
#[derive(Clone, Copy, Default)]
pub struct Notices {
    writer: Option<Writer>,
}

impl Notices {
    /// Notices written by `writer`.
    pub fn to(writer: Writer) -> Notices {
        Notices {
            writer: Some(writer),
        }
    }

    /// Says `text` to the user.
    pub fn say(&self, level: Level, text: &str) {
        match self.writer {
            Some(writer) => writer(level, text),
            None => match level {
                Level::Choice => tracing::info!("{text}"),
                Level::Warning => tracing::warn!("{text}"),
            },
        }
    }
}

impl fmt::Debug for Notices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.writer {
            Some(_) => "Notices(front end)",
            None => "Notices(log)",
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    static SAID: AtomicUsize = AtomicUsize::new(0);

    fn count(_: Level, _: &str) {
        SAID.fetch_add(1, Ordering::SeqCst);
    }

    #[test]
    fn notices_go_to_the_writer_given_and_the_default_writes_to_no_one() {
        Notices::default().say(Level::Warning, "logged");
        assert_eq!(SAID.load(Ordering::SeqCst), 0);
        let notices = Notices::to(count);
        notices.say(Level::Choice, "one");
        notices.say(Level::Warning, "two");
        assert_eq!(SAID.load(Ordering::SeqCst), 2);
        assert_eq!(format!("{:?}", Notices::default()), "Notices(log)");
    }
}
