//! The JavaScript the actions run in the page (the view's own script is in `view.rs`).
//!
//! Each constant is a function expression; [`call`] applies it to JSON arguments.

use serde_json::Value;

/// `(FUNCTION)(arg1, arg2, ...)` with every argument written as a JSON literal.
pub(crate) fn call(function: &str, args: &[Value]) -> String {
    let args: Vec<String> = args.iter().map(Value::to_string).collect();
    format!("({function})({})", args.join(", "))
}

/// Installs the settle probes (idempotent per document) and starts a new watch; returns its
/// token. A `beforeunload` flag says a navigation is starting, a MutationObserver stamps the
/// last DOM change, and wrapped `fetch`/`XMLHttpRequest` count requests in flight.
pub(crate) const INSTRUMENT_JS: &str = r#"(function () {
  const token = Math.random().toString(36).slice(2) + Date.now().toString(36);
  window.__pwSettle = { token: token, unloading: false, start: performance.now(), last: performance.now(), changed: false };
  if (!window.__pwHooked) {
    window.__pwHooked = true;
    window.__pwNet = { pending: 0 };
    addEventListener('beforeunload', () => { if (window.__pwSettle) window.__pwSettle.unloading = true; }, true);
    new MutationObserver(() => {
      const s = window.__pwSettle;
      if (s) { s.last = performance.now(); s.changed = true; }
    }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    if (window.fetch) {
      const f = window.fetch;
      window.fetch = function () {
        window.__pwNet.pending++;
        return f.apply(this, arguments).finally(() => { window.__pwNet.pending--; });
      };
    }
    const send = XMLHttpRequest.prototype.send;
    XMLHttpRequest.prototype.send = function () {
      window.__pwNet.pending++;
      this.addEventListener('loadend', () => { window.__pwNet.pending--; }, { once: true });
      return send.apply(this, arguments);
    };
  }
  return token;
})"#;

/// `(token) => {nav, unloading, ready, quietMs, pending, changed}`; `nav` is true once the
/// watched document has been replaced by another one.
pub(crate) const SETTLE_POLL_JS: &str = r#"(function (token) {
  const s = window.__pwSettle;
  if (!s || s.token !== token) return { nav: true, ready: document.readyState, url: location.href };
  return {
    nav: false,
    unloading: s.unloading,
    ready: document.readyState,
    quietMs: performance.now() - s.last,
    pending: window.__pwNet ? Math.max(0, window.__pwNet.pending) : 0,
    changed: s.changed,
    url: location.href,
  };
})"#;

/// `(index) => {found, x, y, hit, tag, type, desc}`: scrolls element `[index]` to the
/// middle of the window and says whether a click at its centre would reach it.
pub(crate) const LOCATE_JS: &str = r#"(function (index) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return { found: false };
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const r = el.getBoundingClientRect();
  const x = r.left + r.width / 2, y = r.top + r.height / 2;
  const top = document.elementFromPoint(x, y);
  const hit = !!top && (top === el || el.contains(top));
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || '').toLowerCase();
  const text = String(el.innerText || el.value || el.getAttribute('aria-label') || '').replace(/\s+/g, ' ').trim();
  const desc = '<' + tag + (type ? ' type=' + type : '') + '>' + (text ? ' ' + (text.length > 60 ? text.slice(0, 59) + '…' : text) : '');
  if (tag === 'a' && el.target && el.target !== '_self') el.target = '_self';
  const form = el.form;
  if (form && form.target && form.target !== '_self') form.target = '_self';
  return { found: true, x: x, y: y, hit: hit, tag: tag, type: type, desc: desc, disabled: !!el.disabled };
})"#;

/// `(index) => bool`: clicks element `[index]` from script (when something covers it).
pub(crate) const JS_CLICK: &str = r#"(function (index) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return false;
  el.click();
  return true;
})"#;

/// `(index) => {found, ok, reason, mode, desc}`: focuses text field `[index]` and empties
/// it (with `input` events, through the native setter so frameworks notice). `mode` is
/// `type` (then the text is typed) or `set` (dates, colours, ranges: the value is set).
pub(crate) const PREPARE_INPUT_JS: &str = r#"(function (index) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return { found: false };
  const tag = el.tagName.toLowerCase();
  const type = (el.getAttribute('type') || 'text').toLowerCase();
  const desc = '<' + tag + (tag === 'input' ? ' type=' + type : '') + (el.name ? ' name=' + el.name : '') + '>';
  const NOT_TEXT = ['checkbox', 'radio', 'submit', 'button', 'reset', 'image', 'file', 'hidden'];
  const SET = ['date', 'datetime-local', 'month', 'week', 'time', 'color', 'range'];
  const isField = tag === 'textarea' || (tag === 'input' && !NOT_TEXT.includes(type));
  if (!isField && !el.isContentEditable) {
    let hint = 'it is not a text field';
    if (tag === 'select') hint = 'it is a <select>; use browser_select_option';
    else if (type === 'checkbox' || type === 'radio') hint = 'it is a ' + type + '; use browser_click to toggle it';
    else if (type === 'file') hint = 'file uploads are not supported';
    return { found: true, ok: false, reason: desc + ': ' + hint, desc: desc };
  }
  if (el.disabled) return { found: true, ok: false, reason: desc + ' is disabled', desc: desc };
  if (el.readOnly) return { found: true, ok: false, reason: desc + ' is read-only', desc: desc };
  el.scrollIntoView({ block: 'center', behavior: 'instant' });
  el.focus();
  if (el.isContentEditable && !isField) {
    const range = document.createRange();
    range.selectNodeContents(el);
    const sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    document.execCommand('delete');
    return { found: true, ok: true, mode: 'type', desc: desc };
  }
  const proto = tag === 'textarea' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  const setter = Object.getOwnPropertyDescriptor(proto, 'value').set;
  if (el.value !== '') {
    setter.call(el, '');
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }
  return { found: true, ok: true, mode: SET.includes(type) ? 'set' : 'type', desc: desc };
})"#;

/// `(index, text) => void`: sets the value of field `[index]` directly, with events.
pub(crate) const SET_VALUE_JS: &str = r#"(function (index, text) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return;
  const proto = el.tagName === 'TEXTAREA' ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
  Object.getOwnPropertyDescriptor(proto, 'value').set.call(el, text);
  el.dispatchEvent(new Event('input', { bubbles: true }));
})"#;

/// `(index) => string|null`: fires `change` on field `[index]` and returns its value.
pub(crate) const FINISH_INPUT_JS: &str = r#"(function (index) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return null;
  el.dispatchEvent(new Event('change', { bubbles: true }));
  if (el.isContentEditable && !('value' in el)) return el.innerText;
  return (el.getAttribute('type') || '').toLowerCase() === 'password' ? '(hidden)' : el.value;
})"#;

/// `(index, option) => {found, ok, reason, selected, value, options}`: chooses an option of
/// select `[index]` by value, else by visible text (exact, then case-insensitive).
pub(crate) const SELECT_JS: &str = r#"(function (index, option) {
  const el = document.querySelector('[data-pw-index="' + index + '"]');
  if (!el) return { found: false };
  if (el.tagName !== 'SELECT') {
    return { found: true, ok: false, reason: 'element [' + index + '] is a <' + el.tagName.toLowerCase() + '>, not a <select>' };
  }
  if (el.disabled) return { found: true, ok: false, reason: 'the <select> is disabled' };
  const opts = Array.from(el.options);
  const text = (o) => String(o.text).replace(/\s+/g, ' ').trim();
  const want = String(option).replace(/\s+/g, ' ').trim();
  const o = opts.find((o) => o.value === option) ||
    opts.find((o) => text(o) === want) ||
    opts.find((o) => text(o).toLowerCase() === want.toLowerCase());
  if (!o) return { found: true, ok: false, options: opts.map(text) };
  if (o.disabled) return { found: true, ok: false, reason: 'the option "' + text(o) + '" is disabled' };
  el.focus();
  el.value = o.value;
  o.selected = true;
  el.dispatchEvent(new Event('input', { bubbles: true }));
  el.dispatchEvent(new Event('change', { bubbles: true }));
  return { found: true, ok: true, selected: text(o), value: o.value };
})"#;

/// `(direction) => {y, height, viewport}`.
pub(crate) const SCROLL_JS: &str = r#"(function (direction) {
  const se = document.scrollingElement || document.documentElement;
  const h = window.innerHeight;
  if (direction === 'down') window.scrollBy(0, Math.round(h * 0.85));
  else if (direction === 'up') window.scrollBy(0, -Math.round(h * 0.85));
  else if (direction === 'top') window.scrollTo(0, 0);
  else if (direction === 'bottom') window.scrollTo(0, se.scrollHeight);
  return { y: Math.round(window.scrollY), height: Math.round(se.scrollHeight), viewport: h };
})"#;

/// `() => string`: a short description of the focused element.
pub(crate) const FOCUSED_JS: &str = r#"(function () {
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return 'the page';
  const tag = el.tagName.toLowerCase();
  const i = el.getAttribute('data-pw-index');
  return (i !== null ? '[' + i + '] ' : '') + '<' + tag + (el.name ? ' name=' + el.name : '') + '>';
})"#;

/// Called on a result object: its JSON, or its string form when it has none.
pub(crate) const STRINGIFY_FN: &str = r#"function () {
  try {
    const s = JSON.stringify(this);
    if (s !== undefined && !(s === '{}' && this instanceof Node)) return s;
  } catch (e) {}
  if (this instanceof Element) return this.outerHTML.slice(0, 2000);
  return String(this);
}"#;

/// `() => token`: marks the current document with a new token.
pub(crate) const MARK_DOCUMENT_JS: &str = r#"(function () {
  const token = Math.random().toString(36).slice(2) + Date.now().toString(36);
  window.__pwDocument = token;
  return token;
})"#;

/// `(token) => bool`: whether the marked document was replaced by a page that is neither
/// blank nor a browser error page.
pub(crate) const DOCUMENT_REPLACED_JS: &str = r#"(function (token) {
  if (window.__pwDocument === token) return false;
  const url = location.href;
  return !(url === 'about:blank' || url.startsWith('chrome-error:'));
})"#;

/// `() => readyState`.
pub(crate) const READY_STATE_JS: &str = "document.readyState";

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn call_writes_json_arguments() {
        assert_eq!(
            call("(function (a, b) {})", &[json!(3), json!("x\"y")]),
            r#"((function (a, b) {}))(3, "x\"y")"#
        );
    }
}
