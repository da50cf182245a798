//! Snippet and title cleanup: providers send HTML fragments (Brave wraps matches in
//! `<strong>`), entities (`&amp;`, `&#39;`) and ragged whitespace; the model gets one short
//! plain-text line.

/// Longest snippet handed to the model, in characters (an ellipsis marks a cut).
pub(crate) const SNIPPET_CHARS: usize = 300;
/// Longest title, in characters.
pub(crate) const TITLE_CHARS: usize = 200;

/// `raw` as plain text: HTML tags removed, entities decoded, whitespace collapsed to single
/// spaces, at most `max_chars` characters (cut at a word boundary when one is near, with `…`).
pub(crate) fn clean(raw: &str, max_chars: usize) -> String {
    let text = decode_entities(&strip_tags(raw));
    let collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
    truncate(&collapsed, max_chars)
}

/// At most `max_chars` characters of `s` (`…` included), cut at the last space when it is in
/// the second half of the allowance, else mid-word.
pub(crate) fn truncate(s: &str, max_chars: usize) -> String {
    if s.chars().count() <= max_chars {
        return s.to_owned();
    }
    if max_chars == 0 {
        return String::new();
    }
    let keep: String = s.chars().take(max_chars - 1).collect();
    let cut = match keep.rfind(' ') {
        Some(space) if keep[..space].chars().count() >= max_chars / 2 => &keep[..space],
        _ => keep.as_str(),
    };
    let mut out = cut.trim_end().to_owned();
    out.push('…');
    out
}

/// Tag names that are stripped; anything else after `<` stays literal text (`x<y and y>z`).
const TAGS: &[&str] = &[
    "a",
    "abbr",
    "article",
    "b",
    "big",
    "blockquote",
    "br",
    "cite",
    "code",
    "dd",
    "del",
    "div",
    "dl",
    "dt",
    "em",
    "font",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "i",
    "img",
    "ins",
    "kbd",
    "li",
    "mark",
    "nav",
    "ol",
    "p",
    "pre",
    "q",
    "s",
    "samp",
    "section",
    "small",
    "span",
    "strike",
    "strong",
    "sub",
    "sup",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "time",
    "tr",
    "tt",
    "u",
    "ul",
    "var",
    "wbr",
];

/// Tags that separate words: they become a space, the others vanish (`foo<b>bar</b>` is
/// `foobar`).
const BREAKING_TAGS: &[&str] = &[
    "article",
    "blockquote",
    "br",
    "dd",
    "div",
    "dl",
    "dt",
    "footer",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "li",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "tr",
    "ul",
];

/// Removes HTML comments and the tags named in [`TAGS`].
fn strip_tags(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(lt) = rest.find('<') {
        out.push_str(&rest[..lt]);
        let after = &rest[lt + 1..];
        if let Some(comment) = after.strip_prefix("!--") {
            rest = comment.find("-->").map_or("", |end| &comment[end + 3..]);
            continue;
        }
        match tag_len(after) {
            Some((len, name)) => {
                if BREAKING_TAGS.contains(&name.as_str()) {
                    out.push(' ');
                }
                rest = &after[len..];
            }
            None => {
                out.push('<');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// When `after` (the text after a `<`) is a known tag: its length through the closing `>`
/// and its lower-case name.
fn tag_len(after: &str) -> Option<(usize, String)> {
    let body = after.strip_prefix('/').unwrap_or(after);
    let name_len = body
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(body.len());
    let name = body[..name_len].to_ascii_lowercase();
    if !TAGS.contains(&name.as_str()) {
        return None;
    }
    let next = body[name_len..].chars().next()?;
    if !(next == '>' || next == '/' || next.is_whitespace()) {
        return None;
    }
    let gt = after.find('>')?;
    Some((gt + 1, name))
}

/// Decodes `&name;`, `&#123;` and `&#x7b;`; unknown or broken entities stay as they are.
fn decode_entities(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        let decoded = after
            .find(';')
            .filter(|&semi| semi <= 10)
            .and_then(|semi| entity(&after[..semi]).map(|c| (c, semi)));
        match decoded {
            Some((c, semi)) => {
                out.push(c);
                rest = &after[semi + 1..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The character an entity name (between `&` and `;`) stands for.
fn entity(name: &str) -> Option<char> {
    if let Some(num) = name.strip_prefix('#') {
        let code = match num.strip_prefix(['x', 'X']) {
            Some(hex) => u32::from_str_radix(hex, 16).ok()?,
            None => num.parse().ok()?,
        };
        return char::from_u32(code).filter(|c| *c != '\0');
    }
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        "ndash" => '–',
        "mdash" => '—',
        "hellip" => '…',
        "lsquo" => '‘',
        "rsquo" => '’',
        "sbquo" => '‚',
        "ldquo" => '“',
        "rdquo" => '”',
        "bdquo" => '„',
        "laquo" => '«',
        "raquo" => '»',
        "middot" => '·',
        "bull" => '•',
        "copy" => '©',
        "reg" => '®',
        "trade" => '™',
        "deg" => '°',
        "times" => '×',
        "euro" => '€',
        "pound" => '£',
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_decodes_entities() {
        assert_eq!(
            clean(
                "The <strong>Rust</strong> Programming&nbsp;Language &amp; <em>Cargo</em>",
                300
            ),
            "The Rust Programming Language & Cargo"
        );
        assert_eq!(
            clean("It&#39;s &quot;fast&quot; &#x2014; really", 300),
            "It's \"fast\" — really"
        );
        assert_eq!(
            clean("line<br>break<br/>twice<p>para</p>", 300),
            "line break twice para"
        );
        assert_eq!(clean("a<!-- hidden -->b", 300), "ab");
        assert_eq!(clean("<a href=\"x\">link</a> text", 300), "link text");
    }

    #[test]
    fn leaves_what_is_not_markup() {
        assert_eq!(clean("if x<y and y>z", 300), "if x<y and y>z");
        assert_eq!(clean("1 < 2 > 0", 300), "1 < 2 > 0");
        assert_eq!(
            clean("AT&T & co; &bogus; &#xZZ;", 300),
            "AT&T & co; &bogus; &#xZZ;"
        );
        // Encoded markup is text, not a tag to strip.
        assert_eq!(clean("&lt;div&gt; element", 300), "<div> element");
        assert_eq!(clean("unclosed <b", 300), "unclosed <b");
    }

    #[test]
    fn collapses_whitespace() {
        assert_eq!(clean("  a \n\t b\r\n\n c  ", 300), "a b c");
    }

    #[test]
    fn truncates_at_a_word_boundary() {
        let long = "word ".repeat(100);
        let cut = clean(&long, 300);
        assert!(cut.chars().count() <= 300, "{}", cut.chars().count());
        assert!(cut.ends_with("word…"), "{cut}");
        let one_word = "x".repeat(400);
        let cut = clean(&one_word, 300);
        assert_eq!(cut.chars().count(), 300);
        assert!(cut.ends_with('…'));
        assert_eq!(truncate("short", 300), "short");
        assert_eq!(truncate("ééééé", 3), "éé…");
    }
}
