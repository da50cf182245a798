// Planwright web page: vanilla JS, no dependencies. Talks to /v1 with the bearer token kept
// in localStorage; follows a run's events with fetch + ReadableStream (EventSource cannot send
// headers), reconnecting with Last-Event-ID so nothing is missed.
"use strict";

const MARKERS = {
  not_started: "[ ]",
  in_progress: "[→]",
  completed: "[✓]",
  blocked: "[!]",
  failed: "[✗]",
  skipped: "[-]",
};
const TOKEN_KEY = "planwright-token";
const $ = (id) => document.getElementById(id);

let token = localStorage.getItem(TOKEN_KEY) || "";
let current = null; // { id, plan, calls: Map, lastSeq, final, controller }

// Text from tools and models without terminal escape sequences and control characters
// (newlines and tabs kept), as the CLI shows it (docs/security.md, "Terminal output").
const CONTROL = /\x1b\[[0-?]*[ -\/]*[@-~]|\x9b[0-?]*[ -\/]*[@-~]|(?:\x1b[\]PX^_]|[\x90\x98\x9d-\x9f])[^\x07\x9c\x1b]*(?:\x07|\x9c|\x1b\\)|\x1b[ -\/]*[0-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;
function plain(s) {
  return typeof s === "string" ? s.replace(CONTROL, "") : s;
}

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  for (const c of children) {
    if (c !== null && c !== undefined) e.append(plain(c));
  }
  return e;
}

async function api(path, options) {
  const opts = options || {};
  const headers = Object.assign({ Authorization: "Bearer " + token }, opts.headers || {});
  if (opts.body) headers["Content-Type"] = "application/json";
  const res = await fetch("/v1" + path, Object.assign({}, opts, { headers }));
  if (res.status === 401) {
    showLogin("The token was refused; enter it again.");
    throw new Error("unauthorized");
  }
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

function showLogin(message) {
  $("app").hidden = true;
  $("login").hidden = false;
  $("login-error").textContent = message || "";
}

function showApp() {
  $("login").hidden = true;
  $("app").hidden = false;
  refreshRuns();
}

// ---- runs list ----

async function refreshRuns() {
  let data;
  try {
    data = await api("/runs");
  } catch (e) {
    return;
  }
  const list = $("runs");
  list.replaceChildren();
  for (const r of data.runs) {
    const li = el(
      "li",
      { "data-run-id": r.run_id, class: current && current.id === r.run_id ? "selected" : "" },
      r.task.length > 90 ? r.task.slice(0, 90) + "…" : r.task,
      el("span", { class: "st" }, r.status + (r.position ? " #" + r.position : "") + " · " + r.run_id)
    );
    li.addEventListener("click", () => openRun(r.run_id));
    list.append(li);
  }
}

// ---- one run ----

function openRun(id) {
  if (current && current.controller) current.controller.abort();
  current = { id, plan: null, calls: new Map(), order: [], lastSeq: 0, final: false, summary: null, controller: null, status: "" };
  $("run").hidden = false;
  $("run-title").textContent = id;
  $("run-task").textContent = "";
  $("steps").replaceChildren();
  $("summary-box").hidden = true;
  $("run-verified").hidden = true;
  $("files-box").hidden = true;
  $("changes-box").hidden = true;
  $("question").hidden = true;
  $("approval").hidden = true;
  $("usage").textContent = "";
  setStatus("connecting");
  for (const li of $("runs").children) {
    li.classList.toggle("selected", li.getAttribute("data-run-id") === id);
  }
  follow(current);
}

function setStatus(s) {
  if (current) current.status = s;
  const st = $("run-status");
  st.textContent = s;
  st.className = "status " + s;
  $("cancel").hidden = !(s === "running" || s === "queued" || s === "waiting" || s === "connecting");
}

async function follow(run) {
  while (!run.final && current === run) {
    run.controller = new AbortController();
    try {
      const headers = { Authorization: "Bearer " + token, Accept: "text/event-stream" };
      if (run.lastSeq > 0) headers["Last-Event-ID"] = String(run.lastSeq);
      const res = await fetch("/v1/runs/" + encodeURIComponent(run.id) + "/events", { headers, signal: run.controller.signal });
      if (res.status === 401) {
        showLogin("The token was refused; enter it again.");
        return;
      }
      if (!res.ok || !res.body) throw new Error("stream failed: " + res.status);
      await readStream(run, res.body);
    } catch (e) {
      if (current !== run) return;
    }
    if (!run.final && current === run) await new Promise((r) => setTimeout(r, 1000));
  }
}

async function readStream(run, body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += decoder.decode(value, { stream: true });
    let idx;
    while ((idx = buf.indexOf("\n\n")) >= 0) {
      const frame = buf.slice(0, idx);
      buf = buf.slice(idx + 2);
      let type = "message";
      let data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).replace(/^ /, "");
      }
      if (!data) continue;
      let ev;
      try {
        ev = JSON.parse(data);
      } catch (e) {
        continue;
      }
      if (current !== run) return;
      apply(run, type, ev);
    }
  }
}

function apply(run, type, ev) {
  if (typeof ev.seq === "number") {
    if (ev.seq <= run.lastSeq) return;
    run.lastSeq = ev.seq;
  }
  switch (type) {
    case "run_started":
      $("run-task").textContent = plain(ev.task);
      setStatus("running");
      break;
    case "plan_created":
    case "plan_updated":
      run.plan = ev.plan;
      $("plan-title").textContent = "Plan: " + ev.plan.title;
      break;
    case "step_started":
      setStep(run, ev.step_id, "in_progress");
      break;
    case "step_completed":
      setStep(run, ev.step_id, "completed", ev.result);
      break;
    case "step_failed":
      setStep(run, ev.step_id, ev.status, null, ev.error);
      break;
    case "step_skipped":
      setStep(run, ev.step_id, "skipped");
      break;
    case "tool_calling":
      run.calls.set(ev.call_id, { step: ev.step_id, tool: ev.tool, args: ev.arguments, ok: null, output: null });
      break;
    case "tool_called": {
      const c = run.calls.get(ev.call_id) || { step: ev.step_id, tool: ev.tool, args: "" };
      c.ok = ev.ok;
      c.output = ev.output;
      run.calls.set(ev.call_id, c);
      break;
    }
    case "waiting_for_user":
      $("question-text").textContent = plain(ev.question);
      $("question").hidden = false;
      setStatus("waiting");
      break;
    case "user_replied":
      $("question").hidden = true;
      setStatus("running");
      break;
    case "approval_requested":
      run.approval = ev.call_id;
      $("approval-call").textContent = plain(
        ev.tool + " " + ev.arguments + (ev.reason ? " (the rules cannot tell on their own: " + ev.reason + ")" : ""),
      );
      $("approval").hidden = false;
      setStatus("waiting");
      break;
    case "approval_decided":
      run.approval = null;
      $("approval").hidden = true;
      setStatus("running");
      break;
    case "run_completed":
    case "run_failed":
      run.final = true;
      run.summary = ev.summary;
      $("summary").textContent = plain(ev.summary + (ev.reason ? "\n\nRun failed: " + ev.reason : ""));
      $("summary-box").hidden = false;
      $("usage").textContent = ev.usage.llm_calls + " LLM calls, " + ev.usage.prompt_tokens + " prompt" +
        (ev.usage.cached_prompt_tokens ? " (" + ev.usage.cached_prompt_tokens + " cached)" : "") +
        " + " + ev.usage.completion_tokens + " completion tokens";
      setStatus(type === "run_completed" ? "completed" : "failed");
      showVerified(type === "run_completed" && ev.verified === true);
      loadFiles(run);
      loadChanges(run);
      refreshRuns();
      break;
    case "run_cancelled":
    case "run_error":
      run.final = true;
      setStatus(type === "run_cancelled" ? "cancelled" : "failed");
      $("summary").textContent = ev.message;
      $("summary-box").hidden = false;
      refreshRuns();
      break;
    default:
      break;
  }
  renderPlan(run);
}

function setStep(run, id, status, result, error) {
  if (!run.plan) return;
  const s = run.plan.steps.find((x) => x.id === id);
  if (!s) return;
  s.status = status;
  if (result !== undefined && result !== null) s.result = result;
  if (error !== undefined && error !== null) s.error = error;
}

function renderPlan(run) {
  if (!run.plan) return;
  const ol = $("steps");
  ol.replaceChildren();
  run.plan.steps.forEach((s, i) => {
    const li = el(
      "li",
      { class: "step step-" + s.status, "data-step-id": s.id, "data-status": s.status },
      el("span", { class: "marker" }, MARKERS[s.status] || "[ ]"),
      el("span", { class: "desc" }, i + ". " + s.description)
    );
    if (s.result) li.append(el("div", { class: "result" }, s.result));
    if (s.error && s.status !== "completed") li.append(el("div", { class: "result error" }, s.error));
    const calls = el("ul", { class: "calls" });
    for (const c of run.calls.values()) {
      if (c.step !== s.id) continue;
      const mark = c.ok === null || c.ok === undefined ? "…" : c.ok ? "✓" : "✗";
      calls.append(
        el(
          "li",
          { class: c.ok === false ? "bad" : "" },
          el("strong", {}, mark + " " + c.tool + " "),
          el("code", {}, c.args || ""),
          c.output !== null && c.output !== undefined ? el("span", { class: "out" }, c.output) : null
        )
      );
    }
    if (calls.children.length) li.append(calls);
    ol.append(li);
  });
}

async function loadFiles(run) {
  let data;
  try {
    data = await api("/runs/" + encodeURIComponent(run.id));
  } catch (e) {
    return;
  }
  if (current !== run) return;
  const ul = $("files");
  ul.replaceChildren();
  for (const f of data.files || []) {
    const a = el("a", { href: "#" }, f.path);
    a.addEventListener("click", (e) => {
      e.preventDefault();
      download(run.id, f.path, f.path_encoded);
    });
    ul.append(el("li", {}, a, el("span", { class: "muted" }, " " + f.bytes + " bytes")));
  }
  $("files-box").hidden = !(data.files && data.files.length);
}

// What each step changed in the workspace, from the run's checkpoints
// (GET /v1/runs/{id}/diff?step=N, docs/checkpoints.md); a file's diff shows on click. The
// list is shown whole once every step's diff is in (never a list still filling behind a
// hidden box, whose links cannot be clicked).
async function loadChanges(run) {
  const steps = (run.plan && run.plan.steps) || [];
  const items = [];
  for (let i = 0; i < steps.length; i++) {
    let data;
    try {
      data = await api("/runs/" + encodeURIComponent(run.id) + "/diff?step=" + i);
    } catch (e) {
      continue; // no checkpoints, or a step that never started
    }
    if (current !== run) return;
    if (!data.files || !data.files.length) continue;
    const ul = el("ul", { class: "changed" });
    for (const f of data.files) {
      const pre = el("pre", { class: "diff" }, describeChange(f.content));
      pre.hidden = true;
      const a = el("a", { href: "#" }, f.path);
      a.addEventListener("click", (e) => {
        e.preventDefault();
        pre.hidden = !pre.hidden;
      });
      ul.append(el("li", { "data-path": f.path }, el("span", { class: "change change-" + f.change }, f.change + " "), a, pre));
    }
    items.push(el("li", { "data-step": String(i) }, el("span", { class: "desc" }, i + ". " + steps[i].description), ul));
  }
  if (current !== run) return;
  $("changes").replaceChildren(...items);
  $("changes-box").hidden = !items.length;
}

function describeChange(c) {
  const sizes = (o, n) => (o == null ? "" : o + " bytes") + (o != null && n != null ? " → " : "") + (n == null ? "" : n + " bytes");
  switch (c && c.kind) {
    case "text": return c.unified;
    case "binary": return "binary file, " + sizes(c.old_size, c.new_size);
    case "not_kept": return "content not kept (too large or unreadable), " + sizes(c.old_size, c.new_size);
    case "too_long_to_show": return "too long to show, " + sizes(c.old_size, c.new_size);
    case "link": return "symbolic link: " + (c.old_target || "(none)") + " → " + (c.new_target || "(none)");
    case "mode":
      if (c.old_mode !== undefined && c.new_mode !== undefined) {
        return "permissions " + c.old_mode.toString(8).padStart(3, "0") + " → " +
          c.new_mode.toString(8).padStart(3, "0");
      }
      return "executable bit " + (c.executable ? "set" : "cleared");
    default: return "";
  }
}

async function download(id, path, encoded) {
  // `path_encoded` is exact for any name (`path` is shown lossily when it is not UTF-8).
  const rel = encoded || path.split("/").map(encodeURIComponent).join("/");
  const url = "/v1/runs/" + encodeURIComponent(id) + "/files/" + rel;
  const res = await fetch(url, { headers: { Authorization: "Bearer " + token } });
  if (!res.ok) return;
  const blob = await res.blob();
  const a = el("a", { href: URL.createObjectURL(blob), download: path.split("/").pop() });
  document.body.append(a);
  a.click();
  a.remove();
}

// ---- wiring ----

document.addEventListener("DOMContentLoaded", () => {
  $("token-form").addEventListener("submit", (e) => {
    e.preventDefault();
    token = $("token-input").value.trim();
    localStorage.setItem(TOKEN_KEY, token);
    showApp();
  });
  $("forget-token").addEventListener("click", () => {
    localStorage.removeItem(TOKEN_KEY);
    token = "";
    showLogin("");
  });
  $("task-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("form-error").textContent = "";
    const body = { task: $("task").value };
    if ($("mode").value) body.mode = $("mode").value;
    try {
      const r = await api("/runs", { method: "POST", body: JSON.stringify(body) });
      $("task").value = "";
      await refreshRuns();
      openRun(r.run_id);
      if (r.queued) setStatus("queued");
    } catch (err) {
      $("form-error").textContent = err.message;
    }
  });
  $("cancel").addEventListener("click", async () => {
    if (!current) return;
    try {
      await api("/runs/" + encodeURIComponent(current.id) + "/cancel", { method: "POST" });
    } catch (err) {
      $("form-error").textContent = err.message;
    }
  });
  document.querySelectorAll("#approval button").forEach((button) => {
    button.addEventListener("click", async () => {
      if (!current || !current.approval) return;
      try {
        await api("/runs/" + encodeURIComponent(current.id) + "/approvals/" + encodeURIComponent(current.approval),
          { method: "POST", body: JSON.stringify({ decision: button.dataset.decision }) });
      } catch (err) {
        $("form-error").textContent = err.message;
      }
    });
  });
  $("reply-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!current) return;
    try {
      await api("/runs/" + encodeURIComponent(current.id) + "/reply", { method: "POST", body: JSON.stringify({ answer: $("reply").value }) });
      $("reply").value = "";
    } catch (err) {
      $("form-error").textContent = err.message;
    }
  });
  setInterval(() => {
    if (!$("app").hidden) refreshRuns();
  }, 5000);
  if (token) showApp();
  else showLogin("");
});

// Whether the run's answer was checked by an independent reproduction (docs/verification.md):
// said plainly either way, once the run ended.
function showVerified(verified) {
  const badge = $("run-verified");
  badge.textContent = verified ? "verified" : "not verified";
  badge.className = "verified " + (verified ? "yes" : "no");
  badge.hidden = false;
}
