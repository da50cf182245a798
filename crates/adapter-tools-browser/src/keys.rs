//! Key names for `browser_press_key` (`Enter`, `ArrowDown`, `Control+a`...) turned into
//! CDP key events, using chromiumoxide's US keyboard layout.

use chromiumoxide::cdp::browser_protocol::input::{DispatchKeyEventParams, DispatchKeyEventType};
use chromiumoxide::keys::{KeyDefinition, USKEYBOARD_LAYOUT};

/// Modifier bits of `Input.dispatchKeyEvent`.
const ALT: i64 = 1;
const CTRL: i64 = 2;
const META: i64 = 4;
const SHIFT: i64 = 8;

/// A key with the modifiers held while it is pressed.
#[derive(Debug)]
pub(crate) struct Chord {
    pub modifiers: i64,
    pub key: &'static KeyDefinition,
}

/// Parses `Enter`, `escape`, `a`, `Control+Shift+Tab`, `+`...
pub(crate) fn parse(spec: &str) -> Result<Chord, String> {
    let spec = if spec.trim().is_empty() {
        spec
    } else {
        spec.trim()
    };
    let (mods, name) = if spec == "+" {
        ("", "+")
    } else if let Some(mods) = spec.strip_suffix("++") {
        (mods, "+")
    } else {
        match spec.rsplit_once('+') {
            Some((mods, name)) if !mods.is_empty() && !name.is_empty() => (mods, name),
            _ => ("", spec),
        }
    };
    let mut modifiers = 0;
    for m in mods.split('+').filter(|m| !m.is_empty()) {
        modifiers |= match m.trim().to_ascii_lowercase().as_str() {
            "control" | "ctrl" => CTRL,
            "alt" | "option" => ALT,
            "shift" => SHIFT,
            "meta" | "cmd" | "command" | "super" => META,
            other => {
                return Err(format!(
                    "unknown modifier '{other}' in '{spec}'; use Control, Alt, Shift or Meta"
                ))
            }
        };
    }
    let key = lookup(name.trim())
        .or_else(|| lookup(name))
        .ok_or_else(|| {
            format!(
                "unknown key '{name}'; use a name such as Enter, Tab, Escape, Backspace, Delete, \
                 ArrowUp, ArrowDown, ArrowLeft, ArrowRight, PageUp, PageDown, Home, End, Space, \
                 a single character, or a combination such as Control+a"
            )
        })?;
    Ok(Chord { modifiers, key })
}

fn lookup(name: &str) -> Option<&'static KeyDefinition> {
    let canonical = match name.to_ascii_lowercase().as_str() {
        "esc" => "Escape",
        "return" => "Enter",
        "space" | "spacebar" => " ",
        "up" => "ArrowUp",
        "down" => "ArrowDown",
        "left" => "ArrowLeft",
        "right" => "ArrowRight",
        "del" => "Delete",
        "pgup" => "PageUp",
        "pgdn" => "PageDown",
        "ctrl" => "Control",
        _ => name,
    };
    let exact: Vec<&'static KeyDefinition> = USKEYBOARD_LAYOUT
        .iter()
        .filter(|k| k.key == canonical)
        .collect();
    let candidates = if exact.is_empty() && canonical.chars().count() > 1 {
        USKEYBOARD_LAYOUT
            .iter()
            .filter(|k| k.key.chars().count() > 1 && k.key.eq_ignore_ascii_case(canonical))
            .collect()
    } else {
        exact
    };
    // Prefer the main-block key (ArrowDown, not Numpad2; Enter, not NumpadEnter).
    candidates
        .iter()
        .find(|k| !k.code.starts_with("Numpad"))
        .or(candidates.first())
        .copied()
}

/// The key-down and key-up events of a chord. Text is only sent without Control, Alt or
/// Meta, so `Control+a` selects instead of typing an `a`.
pub(crate) fn events(chord: &Chord) -> [DispatchKeyEventParams; 2] {
    let def = chord.key;
    let text = if chord.modifiers & (CTRL | ALT | META) != 0 {
        None
    } else if let Some(t) = def.text {
        Some(t.to_string())
    } else if def.key.chars().count() == 1 {
        Some(def.key.to_string())
    } else {
        None
    };
    let mut down = DispatchKeyEventParams::new(if text.is_some() {
        DispatchKeyEventType::KeyDown
    } else {
        DispatchKeyEventType::RawKeyDown
    });
    down.key = Some(def.key.to_string());
    down.code = Some(def.code.to_string());
    down.windows_virtual_key_code = Some(def.key_code);
    down.native_virtual_key_code = Some(def.key_code);
    down.modifiers = (chord.modifiers != 0).then_some(chord.modifiers);
    down.unmodified_text = text.clone();
    down.text = text;
    let mut up = down.clone();
    up.r#type = DispatchKeyEventType::KeyUp;
    up.text = None;
    up.unmodified_text = None;
    [down, up]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_aliases_and_combinations() {
        assert_eq!(parse("Enter").unwrap().key.code, "Enter");
        assert_eq!(parse("enter").unwrap().key.key, "Enter");
        assert_eq!(parse("Esc").unwrap().key.key, "Escape");
        assert_eq!(parse("ArrowDown").unwrap().key.code, "ArrowDown");
        assert_eq!(parse("a").unwrap().key.key, "a");
        let c = parse("Control+a").unwrap();
        assert_eq!((c.modifiers, c.key.key), (CTRL, "a"));
        let c = parse("ctrl+shift+Tab").unwrap();
        assert_eq!((c.modifiers, c.key.key), (CTRL | SHIFT, "Tab"));
        assert_eq!(parse("+").unwrap().key.key, "+");
        assert_eq!(parse("Shift++").unwrap().modifiers, SHIFT);
        assert!(parse("Hyper+x").unwrap_err().contains("modifier"));
        assert!(parse("NoSuchKey").unwrap_err().contains("unknown key"));
    }

    #[test]
    fn enter_types_a_carriage_return_and_control_chords_type_nothing() {
        let [down, up] = events(&parse("Enter").unwrap());
        assert_eq!(down.r#type, DispatchKeyEventType::KeyDown);
        assert_eq!(down.text.as_deref(), Some("\r"));
        assert_eq!(up.r#type, DispatchKeyEventType::KeyUp);
        let [down, _] = events(&parse("Control+a").unwrap());
        assert_eq!(down.r#type, DispatchKeyEventType::RawKeyDown);
        assert_eq!(down.text, None);
        assert_eq!(down.modifiers, Some(CTRL));
        let [down, _] = events(&parse("Tab").unwrap());
        assert_eq!(down.r#type, DispatchKeyEventType::RawKeyDown);
    }
}
