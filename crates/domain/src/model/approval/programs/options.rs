//! Reading a program's options as `getopt` does: short letters in clusters (`-no file` is
//! `-n -o file`), long names that may be cut to any prefix (`--outp=x` is `--output=x`
//! when no other option starts so), values attached (`--output=x`, `-ox`) or in the next
//! word.

/// A long option as written: its name without `--` and its attached value.
pub(super) fn long(arg: &str) -> Option<(&str, Option<&str>)> {
    let rest = arg.strip_prefix("--").filter(|r| !r.is_empty())?;
    Some(match rest.split_once('=') {
        Some((name, value)) => (name, Some(value)),
        None => (rest, None),
    })
}

/// Whether the long option `given` (as written, without `--`) may be `full`: the same, or
/// a prefix of it (getopt takes any unambiguous prefix; an ambiguous one is refused by the
/// program, and counts here all the same).
pub(super) fn may_be(given: &str, full: &str) -> bool {
    !given.is_empty() && full.starts_with(given)
}

/// The letters of a short option cluster (`-nE` → `n`, `E`), up to and including the
/// first letter that takes a value (`takes_value`), with that value when attached (`-ofile`
/// → `o`, `Some("file")`). `None` when `arg` is not a cluster.
pub(super) fn cluster<'a>(arg: &'a str, takes_value: &str) -> Option<Vec<(char, Option<&'a str>)>> {
    let letters = arg.strip_prefix('-')?;
    if letters.is_empty() || letters.starts_with('-') {
        return None;
    }
    let mut out = Vec::new();
    for (i, c) in letters.char_indices() {
        if takes_value.contains(c) {
            let rest = &letters[i + c.len_utf8()..];
            out.push((c, (!rest.is_empty()).then_some(rest)));
            return Some(out);
        }
        out.push((c, None));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_read_as_getopt_reads_them() {
        assert_eq!(long("--output=x"), Some(("output", Some("x"))));
        assert_eq!(long("--quiet"), Some(("quiet", None)));
        assert_eq!(long("-o"), None);
        assert!(may_be("outp", "output"));
        assert!(!may_be("output-indicator-new", "output"));
        assert_eq!(
            cluster("-nofile", "o"),
            Some(vec![('n', None), ('o', Some("file"))])
        );
        assert_eq!(cluster("-nE", "o"), Some(vec![('n', None), ('E', None)]));
        assert_eq!(cluster("--long", "o"), None);
        assert_eq!(cluster("x", "o"), None);
    }
}
