//! `browser_view`: the page as readable text plus its numbered interactive elements.
//!
//! [`VIEW_JS`] runs in the page. It drops the `data-pw-index` tags of the previous view,
//! reads `document.body.innerText` (scripts, styles and hidden parts are not in it) with
//! whitespace collapsed, and tags every visible interactive element with
//! `data-pw-index="<n>"` in document order, so the numbers stay valid for the clicks and
//! inputs that follow until the next view (or until the page replaces the element).
//! [`render`] turns the result into the text the model reads, within a character budget.

use serde::Deserialize;

/// Most elements one view numbers; the rest are counted.
pub(crate) const MAX_ELEMENTS: usize = 400;

/// A function `(maxChars, maxElements) => RawView`; call it as `(VIEW_JS)(12000, 400)`.
pub(crate) const VIEW_JS: &str = r#"(function (maxChars, maxElements) {
  const ATTR = 'data-pw-index';
  const clip = (s, n) => {
    s = String(s == null ? '' : s).replace(/\s+/g, ' ').trim();
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  };
  const quote = (s) => (/^[^\s"'<>=`]+$/.test(s) ? s : JSON.stringify(s));
  const visible = (el) => {
    if (typeof el.checkVisibility === 'function') {
      if (!el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true })) return false;
    } else {
      const st = getComputedStyle(el);
      if (st.display === 'none' || st.visibility !== 'visible' || st.opacity === '0') return false;
    }
    const r = el.getBoundingClientRect();
    return r.width > 0 || r.height > 0;
  };
  const labelOf = (el) => {
    const aria = el.getAttribute('aria-label');
    if (aria) return clip(aria, 60);
    if (el.labels && el.labels.length) return clip(el.labels[0].innerText, 60);
    const by = el.getAttribute('aria-labelledby');
    if (by) {
      const l = document.getElementById(by.split(/\s+/)[0]);
      if (l) return clip(l.innerText, 60);
    }
    return clip(el.getAttribute('title') || '', 60);
  };
  const NOT_TEXT = ['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file'];
  const describe = (el) => {
    const tag = el.tagName.toLowerCase();
    const parts = [tag];
    const attr = (k, v, n) => {
      if (v != null && String(v).trim() !== '') parts.push(k + '=' + quote(clip(v, n || 60)));
    };
    let type = '';
    if (tag === 'input') {
      type = (el.getAttribute('type') || 'text').toLowerCase();
      parts.push('type=' + quote(type));
    }
    if (tag === 'a') attr('href', el.getAttribute('href'), 100);
    attr('name', el.getAttribute('name'));
    if (!el.getAttribute('name') && el.id) attr('id', el.id);
    attr('role', el.getAttribute('role'));
    attr('placeholder', el.getAttribute('placeholder'));
    if (el.disabled) parts.push('disabled');
    if ((tag === 'input' || tag === 'textarea') && el.readOnly) parts.push('readonly');
    if ((type === 'checkbox' || type === 'radio') && el.checked) parts.push('checked');
    if (el.getAttribute('aria-checked') === 'true') parts.push('checked');
    if (el.required) parts.push('required');
    let out = '<' + parts.join(' ') + '>';
    const label = labelOf(el);
    if (tag === 'select') {
      if (label) out += ' label=' + JSON.stringify(label);
      const opts = Array.from(el.options).map((o) => clip(o.text, 40));
      out += ' options: ' + opts.slice(0, 30).join(', ');
      if (opts.length > 30) out += ', … (' + opts.length + ' options)';
      const sel = el.selectedOptions && el.selectedOptions[0];
      if (sel) out += ' (selected: ' + clip(sel.text, 40) + ')';
    } else if (tag === 'textarea' || (tag === 'input' && !NOT_TEXT.includes(type))) {
      if (label) out += ' label=' + JSON.stringify(label);
      const v = el.value || '';
      out += ' value=' + (type === 'password' && v ? '"(hidden)"' : JSON.stringify(clip(v, 80)));
    } else if (tag === 'input') {
      let t = label;
      if (['submit', 'button', 'reset'].includes(type)) t = el.value || (type === 'submit' ? 'Submit' : label);
      if (t) out += ' ' + clip(t, 80);
    } else {
      const img = el.querySelector ? el.querySelector('img[alt]') : null;
      const t = clip(el.innerText, 80) || label || clip(img ? img.alt : '', 80);
      if (t) out += ' ' + t;
    }
    return out;
  };

  for (const el of document.querySelectorAll('[' + ATTR + ']')) el.removeAttribute(ATTR);
  const root = document.body || document.documentElement;
  let text = root ? (root.innerText || root.textContent || '') : '';
  text = text
    .replace(/[ \t\f\v\r\u00a0]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  const textChars = text.length;
  if (text.length > maxChars) text = text.slice(0, maxChars);

  const SELECTOR = 'a[href], button, input, select, textarea, summary, [role=button], ' +
    '[role=link], [role=checkbox], [role=radio], [role=switch], [role=tab], [role=menuitem], ' +
    '[role=option], [onclick], [contenteditable=""], [contenteditable="true"]';
  const elements = [];
  let more = 0;
  for (const el of document.querySelectorAll(SELECTOR)) {
    if (el.tagName === 'INPUT' && (el.getAttribute('type') || '').toLowerCase() === 'hidden') continue;
    if (!visible(el)) continue;
    if (elements.length >= maxElements) { more++; continue; }
    const n = elements.length;
    el.setAttribute(ATTR, String(n));
    elements.push('[' + n + '] ' + describe(el));
  }
  const se = document.scrollingElement || document.documentElement;
  let status = 0;
  try {
    const nav = performance.getEntriesByType('navigation')[0];
    status = (nav && nav.responseStatus) || 0;
  } catch (e) {}
  return {
    title: document.title || '',
    url: location.href,
    status: status,
    text: text,
    textChars: textChars,
    elements: elements,
    more: more,
    scrollY: Math.round(window.scrollY),
    scrollHeight: Math.round(se ? se.scrollHeight : 0),
    viewportHeight: window.innerHeight,
  };
})"#;

/// What [`VIEW_JS`] returns.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct RawView {
    pub title: String,
    pub url: String,
    pub status: u16,
    /// The collapsed text, at most `maxChars` long.
    pub text: String,
    /// Length of the whole collapsed text.
    pub text_chars: usize,
    pub elements: Vec<String>,
    /// Visible elements beyond `maxElements`, not numbered.
    pub more: usize,
    pub scroll_y: i64,
    pub scroll_height: i64,
    pub viewport_height: i64,
}

/// Text of the marker that ends a cut page text.
pub(crate) const TEXT_CUT_MARKER: &str = "[… page text cut";

/// The view as the model reads it, at most about `max_chars` characters: the header, then
/// the text, then the elements. Elements take at most half the budget; the text gets the
/// rest and is cut with a marker saying how much was left out.
pub(crate) fn render(view: &RawView, max_chars: usize) -> String {
    let mut header = format!("Title: {}\nURL: {}\n", one_line(&view.title), view.url);
    if view.status >= 400 {
        header.push_str(&format!("HTTP status: {}\n", view.status));
    }
    if view.scroll_height > view.viewport_height && view.viewport_height > 0 {
        header.push_str(&format!(
            "Scroll: showing {}-{} of {} px\n",
            view.scroll_y,
            view.scroll_y + view.viewport_height,
            view.scroll_height
        ));
    }

    let elements = render_elements(view, max_chars / 2);
    let budget = max_chars
        .saturating_sub(header.chars().count() + elements.chars().count() + 40)
        .max(200);

    let mut out = header;
    out.push_str("\nPage text:\n");
    let shown: String = view.text.chars().take(budget).collect();
    let shown_chars = shown.chars().count();
    if view.text.trim().is_empty() {
        out.push_str("(no text)\n");
    } else {
        out.push_str(&shown);
        out.push('\n');
    }
    if shown_chars < view.text_chars {
        out.push_str(&format!(
            "{TEXT_CUT_MARKER}: showing the first {shown_chars} of {} characters …]\n",
            view.text_chars
        ));
    }
    out.push('\n');
    out.push_str(&elements);
    out
}

fn render_elements(view: &RawView, budget: usize) -> String {
    if view.elements.is_empty() {
        return "Interactive elements: none\n".to_string();
    }
    let total = view.elements.len() + view.more;
    let mut out = format!("Interactive elements ({total}):\n");
    let mut used = out.chars().count();
    let mut listed = 0;
    for line in &view.elements {
        let len = line.chars().count() + 1;
        if used + len > budget && listed > 0 {
            break;
        }
        out.push_str(line);
        out.push('\n');
        used += len;
        listed += 1;
    }
    if listed < total {
        out.push_str(&format!(
            "[… {} more elements not listed; scroll, or use browser_console_exec to find them …]\n",
            total - listed
        ));
    }
    out
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(text: &str, elements: usize) -> RawView {
        RawView {
            title: "T".into(),
            url: "http://x/".into(),
            text: text.into(),
            text_chars: text.chars().count(),
            elements: (0..elements)
                .map(|i| format!("[{i}] <button> B{i}"))
                .collect(),
            viewport_height: 800,
            scroll_height: 800,
            ..RawView::default()
        }
    }

    #[test]
    fn small_page_is_shown_whole() {
        let out = render(&view("hello\nworld", 2), 12_000);
        assert!(out.starts_with("Title: T\nURL: http://x/\n"), "{out}");
        assert!(out.contains("Page text:\nhello\nworld\n"), "{out}");
        assert!(out.contains("Interactive elements (2):\n[0] <button> B0\n[1] <button> B1\n"));
        assert!(!out.contains(TEXT_CUT_MARKER));
    }

    #[test]
    fn long_text_is_cut_with_a_marker_and_the_budget_holds() {
        let text = "x".repeat(50_000);
        let mut v = view(&text[..12_000], 3);
        v.text_chars = 50_000;
        let out = render(&v, 12_000);
        assert!(out.contains(TEXT_CUT_MARKER), "{out}");
        assert!(out.contains("of 50000 characters"));
        assert!(out.chars().count() <= 12_200, "{}", out.chars().count());
        assert!(out.contains("[2] <button> B2"));
    }

    #[test]
    fn many_elements_take_at_most_half_and_say_how_many_are_left() {
        let mut v = view("text", 400);
        v.more = 100;
        let out = render(&v, 4_000);
        assert!(out.contains("Interactive elements (500):"));
        assert!(out.contains("more elements not listed"), "{out}");
        assert!(out.chars().count() <= 4_200);
    }

    #[test]
    fn error_status_and_scroll_position_are_in_the_header() {
        let mut v = view("", 0);
        v.status = 404;
        v.scroll_height = 3000;
        v.scroll_y = 800;
        let out = render(&v, 1000);
        assert!(out.contains("HTTP status: 404\n"));
        assert!(out.contains("Scroll: showing 800-1600 of 3000 px\n"));
        assert!(out.contains("(no text)"));
        assert!(out.contains("Interactive elements: none"));
    }
}
