//! Random logs for the log families: application logs in one of three layouts (levels,
//! times, messages with random values) and web access logs (client addresses, paths,
//! status codes).

use super::words;
use crate::eval::rng::Rng;

/// How an application log writes a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// `2026-03-04 10:00:01 INFO message`
    Plain,
    /// `2026-03-04T10:00:01Z [INFO] message`
    Bracketed,
    /// `10:00:01 | INFO: message`
    Piped,
}

/// One line of an application log.
#[derive(Debug, Clone)]
pub(crate) struct LogLine {
    /// Seconds since midnight.
    pub secs: u32,
    pub level: &'static str,
    pub message: String,
}

/// An application log.
#[derive(Debug, Clone)]
pub(crate) struct AppLog {
    pub date: String,
    pub layout: Layout,
    pub lines: Vec<LogLine>,
}

/// `HH:MM:SS` of seconds since midnight.
pub(crate) fn clock(secs: u32) -> String {
    format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// `HH:MM` of seconds since midnight.
pub(crate) fn clock_hm(secs: u32) -> String {
    format!("{:02}:{:02}", secs / 3600, secs / 60 % 60)
}

fn message(rng: &mut Rng, level: &str) -> String {
    let user = *rng.pick(words::PEOPLE);
    let n = rng.range(2, 950);
    let path = *rng.pick(&[
        "/",
        "/cart",
        "/login",
        "/search",
        "/api/items",
        "/help",
        "/checkout",
    ]);
    match level {
        "INFO" => match rng.below(5) {
            0 => format!("user {user} logged in"),
            1 => format!("GET {path} 200 in {n} ms"),
            2 => format!("job {} finished in {n} ms", rng.pick(words::NOUNS)),
            3 => format!("cache warmed with {n} keys"),
            _ => format!("saved {n} {}", rng.pick(words::NOUNS)),
        },
        "WARN" => match rng.below(4) {
            0 => format!("slow response on {path}: {} ms", n * 10),
            1 => format!("disk usage at {}%", rng.range(81, 97)),
            2 => format!(
                "retrying {} (attempt {})",
                rng.pick(&["db", "mailer", "queue", "search"]),
                rng.range(2, 5)
            ),
            _ => format!(
                "config option {}_mode is deprecated",
                rng.pick(words::VERBS)
            ),
        },
        "ERROR" => match rng.below(5) {
            0 => format!("database timeout after {} s", rng.range(5, 60)),
            1 => format!(
                "{} service unreachable",
                rng.pick(&["payment", "email", "search", "storage"])
            ),
            2 => format!("disk full on /{}", rng.pick(&["var", "data", "srv", "tmp"])),
            3 => format!(
                "cannot open {}.dat: permission denied",
                rng.pick(words::NOUNS)
            ),
            _ => format!("user {user} failed to log in"),
        },
        _ => match rng.below(2) {
            0 => format!("cache hit for key {}", rng.pick(words::NOUNS)),
            _ => format!("parsed {n} rows"),
        },
    }
}

impl AppLog {
    /// A log of `n` lines, in time order, with at least two ERROR and one WARN line.
    pub(crate) fn generate(rng: &mut Rng, n: usize) -> AppLog {
        let layout = *rng.pick(&[Layout::Plain, Layout::Bracketed, Layout::Piped]);
        let date = format!("2026-{:02}-{:02}", rng.range(1, 12), rng.range(1, 28));
        let mut secs = (rng.range(6, 20) * 3600 + rng.range(0, 59) * 60) as u32 + 1;
        let mut levels: Vec<&'static str> = vec!["ERROR", "ERROR", "WARN"];
        while levels.len() < n {
            levels.push(*rng.pick(&["INFO", "INFO", "INFO", "INFO", "WARN", "ERROR", "DEBUG"]));
        }
        rng.shuffle(&mut levels);
        let lines = levels
            .into_iter()
            .map(|level| {
                secs += rng.range(3, 240) as u32;
                // No line at a whole minute: a time range given in minutes never ends on one.
                if secs.is_multiple_of(60) {
                    secs += 1;
                }
                LogLine {
                    secs,
                    level,
                    message: message(rng, level),
                }
            })
            .collect();
        AppLog {
            date,
            layout,
            lines,
        }
    }

    /// How `level` appears in a line (`ERROR`, `[ERROR]`, `ERROR:`).
    pub(crate) fn level_token(&self, level: &str) -> String {
        match self.layout {
            Layout::Plain => level.to_string(),
            Layout::Bracketed => format!("[{level}]"),
            Layout::Piped => format!("{level}:"),
        }
    }

    /// One line as written.
    pub(crate) fn line(&self, l: &LogLine) -> String {
        let token = self.level_token(l.level);
        match self.layout {
            Layout::Plain => format!("{} {} {token} {}", self.date, clock(l.secs), l.message),
            Layout::Bracketed => format!("{}T{}Z {token} {}", self.date, clock(l.secs), l.message),
            Layout::Piped => format!("{} | {token} {}", clock(l.secs), l.message),
        }
    }

    pub(crate) fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&self.line(l));
            s.push('\n');
        }
        s
    }

    /// A Python regular expression capturing (time, level, message) of a line.
    pub(crate) fn py_regex(&self) -> &'static str {
        match self.layout {
            Layout::Plain => r"^\S+ (\d\d:\d\d:\d\d) (\w+) (.*)$",
            Layout::Bracketed => r"^\S+T(\d\d:\d\d:\d\d)Z \[(\w+)\] (.*)$",
            Layout::Piped => r"^(\d\d:\d\d:\d\d) \| (\w+): (.*)$",
        }
    }
}

/// One request of an access log.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub ip: String,
    pub path: String,
    pub status: u32,
    pub bytes: u32,
}

/// A web access log of `n` requests from a few clients, one of which makes strictly the
/// most requests and does not make the first one; returns the log's text, the requests
/// and that client's address.
pub(crate) fn access_log(rng: &mut Rng, n: usize) -> (String, Vec<Request>, String) {
    loop {
        let clients: Vec<String> = (0..rng.range(3, 5))
            .map(|_| match rng.below(3) {
                0 => format!("192.168.{}.{}", rng.range(0, 9), rng.range(2, 254)),
                1 => format!("10.0.{}.{}", rng.range(0, 9), rng.range(2, 254)),
                _ => format!("203.0.113.{}", rng.range(2, 254)),
            })
            .collect();
        let mut distinct = clients.clone();
        distinct.sort();
        distinct.dedup();
        if distinct.len() != clients.len() {
            continue;
        }
        let requests: Vec<Request> = (0..n)
            .map(|_| Request {
                ip: rng.pick(&clients).clone(),
                path: rng
                    .pick(&[
                        "/", "/about", "/shop", "/login", "/cart", "/help", "/search", "/contact",
                    ])
                    .to_string(),
                status: *rng.pick(&[200, 200, 200, 200, 404, 301, 500, 401]),
                bytes: rng.range(64, 4096) as u32,
            })
            .collect();
        let counts: Vec<usize> = clients
            .iter()
            .map(|c| requests.iter().filter(|r| &r.ip == c).count())
            .collect();
        let top = counts.iter().copied().max().unwrap_or(0);
        let winners: Vec<usize> = (0..clients.len()).filter(|&i| counts[i] == top).collect();
        if winners.len() != 1 || requests[0].ip == clients[winners[0]] {
            continue;
        }
        let day = rng.range(1, 28);
        let mut secs = rng.range(8, 20) as u32 * 3600;
        let mut text = String::new();
        for r in &requests {
            secs += rng.range(1, 90) as u32;
            let method = if r.path == "/cart" || r.path == "/login" {
                "POST"
            } else {
                "GET"
            };
            text.push_str(&format!(
                "{} - - [{day:02}/Mar/2026:{} +0000] \"{method} {} HTTP/1.1\" {} {}\n",
                r.ip,
                clock(secs),
                r.path,
                r.status,
                r.bytes
            ));
        }
        let winner = clients[winners[0]].clone();
        return (text, requests, winner);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_are_in_time_order_and_the_top_client_is_unique() {
        for seed in 0..30 {
            let mut rng = Rng::new(seed);
            let log = AppLog::generate(&mut rng, 12);
            assert_eq!(log.text().lines().count(), 12);
            assert!(log.lines.windows(2).all(|w| w[0].secs < w[1].secs));
            assert!(log.lines.iter().filter(|l| l.level == "ERROR").count() >= 2);
            let (text, requests, top) = access_log(&mut rng, 10);
            assert_eq!(text.lines().count(), 10);
            assert_ne!(requests[0].ip, top);
        }
        assert_eq!(clock(3661), "01:01:01");
        assert_eq!(clock_hm(3661), "01:01");
    }
}
