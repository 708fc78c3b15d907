// forensic: the investigation page. Plain JS, no dependencies, nothing from outside this host.
// Every piece of data is put in the page with textContent or attributes, never as HTML.
"use strict";

const $ = (sel) => document.querySelector(sel);
const TOKEN_KEY = "forensic.token";
let me = null;
let liveAbort = null;
let listTimer = null;

function el(tag, attrs, ...children) {
  const n = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") n.className = v;
    else if (k === "style") n.style.cssText = v;  // CSSOM: allowed by the page's CSP, unlike a style attribute
    else if (k.startsWith("on")) n.addEventListener(k.slice(2), v);
    else n.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    n.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return n;
}
const svgEl = (tag, attrs) => {
  const n = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) n.setAttribute(k, String(v));
  return n;
};

function token() { return sessionStorage.getItem(TOKEN_KEY) || ""; }

async function api(path, opts = {}) {
  const r = await fetch(path, { ...opts, headers: { ...(opts.headers || {}), Authorization: "Bearer " + token(),
    "Content-Type": "application/json" } });
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (r.status === 401) { sessionStorage.removeItem(TOKEN_KEY); me = null; }
  if (!r.ok) { const err = new Error((body && body.detail) || ("HTTP " + r.status)); err.status = r.status; throw err; }
  return body;
}

function age(t) {
  if (!t) return "";
  const s = Math.max(0, Date.now() / 1000 - t);
  if (s < 90) return Math.round(s) + " s";
  if (s < 5400) return Math.round(s / 60) + " min";
  if (s < 172800) return Math.round(s / 3600) + " h";
  return Math.round(s / 86400) + " d";
}
const when = (t) => t ? new Date(t * 1000).toISOString().replace("T", " ").slice(0, 19) + "Z" : "";
// The API lists the first 1,000 alerts of an investigation: say so when it has more.
function alertsHeading(inv) {
  const total = inv.alerts_total ?? inv.alerts.length, shown = inv.alerts.length;
  const n = (x) => Number(x).toLocaleString("en-US");
  return "Alerts grouped here (" + n(total) + (shown < total ? "; the first " + n(shown) + " shown" : "") + ")";
}
const pill = (s) => el("span", { class: "pill s-" + String(s || "none").replace(/[^a-z_]/g, "") }, s || "—");

// ---------------------------------------------------------------- sign in
function login(message) {
  const input = el("input", { type: "password", id: "token", autocomplete: "current-password", placeholder: "bearer token", "aria-label": "Token" });
  const form = el("form", { class: "login", onsubmit: async (e) => {
    e.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, input.value.trim());
    try { await whoami(); route(); } catch (err) { login(err.message); }
  } }, el("h1", {}, "Sign in"), el("p", { class: "muted" }, "Paste the token from your token file. It stays in this tab only."),
    input, el("button", { type: "submit", class: "primary" }, "Sign in"), message ? el("p", { class: "error" }, message) : null);
  $("#main").replaceChildren(form);
  input.focus();
}

async function whoami() {
  me = await api("/api/v1/me");
  $("#nav-dead").hidden = me.role !== "admin";
  $("#who").replaceChildren(el("span", { class: "user" }, me.name), " ", el("span", { class: "role" }, me.role),
    el("button", { class: "link", onclick: () => { sessionStorage.removeItem(TOKEN_KEY); me = null; route(); } }, "sign out"));
}

// ---------------------------------------------------------------- list
async function showList() {
  const main = $("#main");
  const filter = el("select", { id: "filter", "aria-label": "Status", onchange: () => draw() },
    ["", "queued", "running", "awaiting_approval", "concluded", "failed", "unmapped"].map((s) => el("option", { value: s }, s || "all statuses")));
  const body = el("tbody");
  main.replaceChildren(el("section", { class: "card" },
    el("div", { class: "row between" }, el("h1", {}, "Investigations"), filter),
    el("table", { class: "grid", id: "investigations" },
      el("thead", {}, el("tr", {}, ["Investigation", "Status", "Verdict", "Confidence", "Alerts", "Job", "Hosts", "Age"].map((h) => el("th", {}, h)))),
      body)));
  async function draw() {
    const q = filter.value ? "?status=" + encodeURIComponent(filter.value) : "";
    let data;
    try { data = await api("/api/v1/investigations" + q); } catch (e) { if (e.status === 401) return login(e.message); throw e; }
    body.replaceChildren(...(data.investigations.length ? data.investigations.map((i) => el("tr", { class: "click", "data-id": i.id, onclick: () => { location.hash = "#/investigations/" + encodeURIComponent(i.id); } },
      el("td", {}, el("a", { href: "#/investigations/" + encodeURIComponent(i.id) }, i.id)),
      el("td", {}, pill(i.status)),
      el("td", {}, i.verdict ? el("span", {}, el("b", {}, i.verdict), i.component ? " · " + i.component : "") : el("span", { class: "muted" }, i.status === "running" ? "investigating…" : i.status === "unmapped" ? "not investigated" : "—")),
      el("td", { class: "num" }, i.confidence !== null && i.confidence !== undefined ? i.confidence.toFixed(2) : ""),
      el("td", { class: "num" }, i.alert_count + (i.resolved_count ? " (" + i.resolved_count + " resolved)" : "")),
      el("td", {}, i.job || ""),
      el("td", { class: "hosts" }, (i.hosts || []).slice(0, 4).join(", ") + ((i.hosts || []).length > 4 ? " +" + (i.hosts.length - 4) : "")),
      el("td", { class: "num", title: when(i.created_at) }, age(i.created_at))))
      : [el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No investigations yet. Alerts posted to /api/v1/alerts open them."))]));
  }
  await draw();
  listTimer = setInterval(draw, 3000);
}

// ---------------------------------------------------------------- one investigation
async function showInvestigation(id) {
  const main = $("#main");
  let inv;
  try { inv = await api("/api/v1/investigations/" + encodeURIComponent(id)); }
  catch (e) { if (e.status === 401) return login(e.message); main.replaceChildren(el("p", { class: "error" }, e.message)); return; }
  const report = inv.report;
  const v = (report && report.verdict) || {};
  const evidence = Object.fromEntries(((report && report.evidence) || []).map((r) => [r.id, r]));
  const activity = el("ol", { class: "activity", id: "activity" });
  const unmapped = (inv.events || []).find((e) => e.kind === "unmapped");
  const origin = (inv.events || []).find((e) => e.kind === "evidence_source");

  const head = el("section", { class: "card verdict" },
    el("div", { class: "row between" },
      el("div", {}, el("div", { class: "muted small" }, "Investigation ", el("span", { class: "mono" }, inv.id), " · job ", inv.job || "—"),
        el("h1", { id: "verdict" }, report ? (v.root_cause + (v.component ? " on " + v.component : "")) : (inv.status === "failed" ? "failed" : inv.status === "unmapped" ? "not investigated" : "investigating…"))),
      el("div", { class: "right" }, pill(inv.status), report ? el("span", { class: "pill s-" + report.status }, report.status) : null)),
    report ? el("div", { class: "conf" }, el("span", { class: "muted" }, "confidence"),
      el("div", { class: "bar", role: "meter", "aria-valuenow": v.confidence, "aria-valuemin": 0, "aria-valuemax": 1 },
        el("div", { class: "fill", style: "width:" + Math.round((v.confidence || 0) * 100) + "%" })),
      el("b", {}, (v.confidence || 0).toFixed(2))) : null,
    alertSummary(inv),
    inv.error ? el("p", { class: "error" }, inv.error) : null,
    inv.status === "unmapped" ? el("p", { class: "error", id: "unmapped" }, "Not investigated: " +
      (unmapped ? unmapped.data.reason : "no evidence source matches its alerts")) : null,
    provenance(report, origin, inv),
    report && report.chain && report.chain.length ? el("div", { class: "chain", id: "chain" },
      report.chain.map((c, i) => [i ? el("span", { class: "arrow" }, "→") : null, el("span", { class: "node" }, c)])) : null);

  const findings = el("section", { class: "card" }, el("h2", {}, "Findings"),
    report && report.findings.length ? el("ul", { class: "findings" }, report.findings.map((f) => el("li", { class: f.verified ? "" : "unverified" },
      el("span", {}, f.claim), " ",
      f.evidence.map((eid) => el("button", { class: "cite", "data-ev": eid, onclick: () => showRecord(evidence[eid], eid) }, eid)),
      f.verified ? null : el("span", { class: "error small" }, " not verified: " + (f.problem || ""))))) :
      el("p", { class: "muted" }, report ? "No findings." : "Findings appear as the investigation runs."));

  const heat = el("section", { class: "card" }, el("h2", {}, "Step compute time per rank"),
    el("p", { class: "muted small" }, "Ranks × time; colour is compute time relative to the job median. A straggler is a hot row."),
    el("div", { class: "heatwrap" }, el("div", { class: "heatlabels", id: "heatlabels" }), el("canvas", { id: "heatmap", width: 1200, height: 300, "aria-label": "heat map" }), el("div", { class: "tip", id: "heattip" })),
    el("div", { class: "legend", id: "heatlegend" }));
  const tl = el("section", { class: "card" }, el("h2", {}, "Hosts over time"), el("div", { id: "timeline" }, el("p", { class: "muted" }, "Loading…")));

  const props = el("section", { class: "card", id: "proposals" }, el("h2", {}, "Remediation proposals"),
    report && report.proposals.length ? report.proposals.map((p) => proposalCard(inv, p)) :
      el("p", { class: "muted" }, report ? "None: nothing to remediate." : "Proposed once the investigation concludes."));

  const alerts = el("section", { class: "card" }, el("h2", {}, alertsHeading(inv)),
    el("table", { class: "grid", id: "alerts" }, el("thead", {}, el("tr", {}, ["Alert", "Status", "Labels", "Started"].map((h) => el("th", {}, h)))),
      el("tbody", {}, inv.alerts.map((a) => el("tr", {},
        el("td", {}, a.alertname || a.fingerprint), el("td", {}, pill(a.status)),
        el("td", { class: "labels" }, Object.entries(a.labels).filter(([k]) => k !== "alertname").map(([k, val]) => el("span", { class: "label" }, k + "=" + val))),
        el("td", { class: "num" }, when(a.starts_at)))))));

  const live = el("section", { class: "card" }, el("h2", {}, "Activity"), activity);
  main.replaceChildren(el("div", { class: "layout" }, el("div", { class: "colmain" }, head, props, findings, heat, tl, alerts),
    el("aside", {}, live, chatPanel(inv))));
  for (const e of inv.events || []) addActivity(activity, e.kind, e.data, e.time);
  drawHeatmap(id, v.component);
  drawTimeline(id, v.component, inv.alerts);
  if (inv.status === "queued" || inv.status === "running") follow(id, activity, inv.events.length ? inv.events[inv.events.length - 1].id : 0);
}

// What fired, in its own words: the first alert's name and summary, and how many were grouped.
function alertSummary(inv) {
  const a = (inv.alerts || [])[0];
  if (!a) return null;
  const ann = a.annotations || {};
  const said = ann.summary || ann.description || "";
  const more = (inv.alerts_total ?? inv.alerts.length) - 1;
  return el("p", { class: "alert-summary", id: "alert-summary" }, el("span", { class: "muted" }, "Alert "),
    el("b", {}, a.alertname || a.fingerprint), " ", pill(a.status), said ? " " + said : "",
    el("span", { class: "muted small" }, " · since " + when(a.starts_at) + (more > 0 ? " · " + more + " more grouped (below)" : "")));
}

// Where the evidence came from: live or a bundle, the window, hosts read and unreachable; and,
// when it is a recording from another day than the alert, says so, lest it be read as now.
function provenance(report, origin, inv) {
  const id = inv.id;
  const ev = report && report.evidence_source;
  if (!ev && !origin) return null;
  const w = ev ? ev.window : origin.data.window;
  const fired = (inv.alerts && inv.alerts[0] && inv.alerts[0].starts_at) || inv.first_at || inv.created_at;
  const day = (t) => when(t).slice(0, 10);
  const recorded = ev && ev.origin !== "live" && w && w.end && fired && Math.abs(fired - w.end) > 86400;
  const note = recorded ? el("p", { class: "recording small", id: "recording" }, "A recording: this evidence is from " + day(w.start) +
    (day(w.end) !== day(w.start) ? " to " + day(w.end) : "") + ", " + Math.round(Math.abs(fired - w.end) / 86400) +
    " days before the alert fired (" + day(fired) + "). It explains that recording, not the fleet now.") : null;
  const parts = [(ev ? ev.origin : "live") + " evidence", "window " + when(w.start) + " → " + when(w.end)];
  if (ev) parts.push(ev.hosts_read.length + " host(s) read", ev.hosts_unreachable.length ? "unreachable: " + ev.hosts_unreachable.join(", ") : "none unreachable");
  if (ev && ev.outside_window && ev.outside_window.length) parts.push("outside the window: " + ev.outside_window.map((o) => o.what).join(", "));
  const kept = ev && ev.archive ? el("a", { href: "#", id: "archive", onclick: (e) => { e.preventDefault(); download(id); } }, "download what it read") : null;
  return [note, el("p", { class: "muted small", id: "provenance" }, parts.join(" · "), kept ? " · " : null, kept)];
}

async function download(id) {
  const r = await fetch("/api/v1/investigations/" + encodeURIComponent(id) + "/archive", { headers: { Authorization: "Bearer " + token() } });
  if (!r.ok) return alert("archive: " + r.status);
  const a = el("a", { href: URL.createObjectURL(await r.blob()), download: id + ".tar.gz" });
  document.body.append(a); a.click(); a.remove();
}

// Ask about the incident (POST /api/v1/chat): answers cite evidence; messages never approve.
function chatPanel(inv) {
  const log = el("div", { class: "chatlog" });
  const box = el("input", { type: "text", class: "question", placeholder: "why is it slow? what about <host>? why not the network?",
    "aria-label": "Question", maxlength: "2000" });
  let conversation = null;
  const ask = async () => {
    const q = box.value.trim();
    if (!q) return;
    box.value = "";
    const turn = el("div", { class: "turn" }, el("p", { class: "q" }, "› " + q), el("p", { class: "small" }, "…"));
    log.append(turn);
    try {
      const r = await api("/api/v1/chat", { method: "POST",
        body: JSON.stringify({ investigation: inv.id, question: q, conversation }) });
      conversation = r.conversation;
      turn.replaceChildren(el("p", { class: "q" }, "› " + q),
        ...(r.text || []).map((t) => el("p", {}, t)),
        r.claims && r.claims.length ? el("ul", {}, r.claims.map((c) => el("li", {}, c.claim, " ",
          ...c.evidence.map((eid) => el("button", { class: "cite", "data-ev": eid, onclick: () => showRecord((r.records || {})[eid], eid) }, eid))))) : null,
        r.new_evidence && r.new_evidence.length ? el("p", { class: "small" }, "new evidence: " + r.new_evidence.join(", ")) : null);
    } catch (e) { turn.replaceChildren(el("p", { class: "q" }, "› " + q), el("p", { class: "error small" }, e.message)); }
  };
  box.addEventListener("keydown", (ev) => { if (ev.key === "Enter") ask(); });
  return el("section", { class: "card chat" }, el("h2", {}, "Ask"), log,
    el("div", { class: "row" }, box, el("button", { class: "primary", onclick: ask }, "Ask")));
}

function proposalCard(inv, p) {
  const reason = el("input", { type: "text", class: "reason", placeholder: "why (recorded in the audit log)", "aria-label": "Reason" });
  const msg = el("span", { class: "small" });
  const ex = p.execution || { state: "not_executed" };
  // What ran stays on the card: executed (or undone) is shown, and Execute is no longer offered.
  const ran = ex.state === "succeeded" || ex.state === "unverified";
  const canDecide = me && me.can_approve && p.status === "pending_approval" && inv.status === "awaiting_approval";
  const canExecute = me && me.can_execute && p.status === "approved" && (ex.state === "not_executed" || ex.state === "failed");
  const canUndo = me && me.can_execute && ran && (ex.undo || []).length > 0;
  const noExecutor = me && me.can_approve && !me.can_execute && p.status === "approved" && ex.state === "not_executed";
  const base = "/api/v1/investigations/" + encodeURIComponent(inv.id) + "/proposals/" + encodeURIComponent(p.id);
  const execute = (dry) => async () => {
    // Carrying out is a second decision: it names what it changes before it runs.
    if (!dry && !window.confirm("Execute " + p.action + " on " + p.target + "?\n\nBlast radius: " + (p.blast_radius || "not stated") +
        "\nRollback: " + (p.rollback || "not stated"))) { return; }
    try {
      const r = await api(base + "/execute", { method: "POST", body: JSON.stringify({ dry_run: dry }) });
      if (!dry) return route();  // the card now shows what ran and its result
      msg.className = "small";
      msg.textContent = "would run: " + ((r.plan && r.plan.steps) || []).join("; ");
    } catch (e) { msg.className = "error small"; msg.textContent = e.message; }
  };
  const undo = async () => {
    if (!reason.value.trim()) { msg.className = "error small"; msg.textContent = "Say why first."; reason.focus(); return; }
    if (!window.confirm("Undo " + p.action + " on " + p.target + "?\n\nThis runs: " + ex.undo.join("; "))) return;
    try {
      await api(base + "/undo", { method: "POST", body: JSON.stringify({ reason: reason.value.trim() }) });
      route();
    } catch (e) { msg.className = "error small"; msg.textContent = e.message; }
  };
  const act = (what) => async () => {
    if (!reason.value.trim()) { msg.className = "error small"; msg.textContent = "Say why first."; reason.focus(); return; }
    try {
      await api(base + "/" + what,
        { method: "POST", body: JSON.stringify({ content_hash: p.content_hash, reason: reason.value.trim() }) });
      route();
    } catch (e) { msg.className = "error small"; msg.textContent = e.message; }
  };
  const shown = ran ? "executed" : ex.state === "undone" ? "undone" : ex.state === "running" ? "executing" : p.status;
  const execution = ex.state === "not_executed" ? null : el("p", { class: "small execution" },
    el("b", {}, { succeeded: "Executed", unverified: "Executed, not verified", undone: "Undone", failed: "Execution failed", running: "Executing" }[ex.state] || ex.state),
    ex.by ? " by " + ex.by : "", ex.finished ? " at " + when(ex.finished) : "", ex.detail ? ": " + ex.detail : "");
  return el("div", { class: "proposal", "data-id": p.id, "data-execution": ex.state },
    el("div", { class: "row between" }, el("div", {}, el("b", {}, p.action), " ", el("span", { class: "mono" }, p.target)),
      el("div", {}, el("span", { class: "pill risk-" + p.risk }, "risk " + p.risk), " ", pill(shown))),
    el("p", {}, p.reason),
    el("dl", {}, el("dt", {}, "Blast radius"), el("dd", {}, p.blast_radius || "—"), el("dt", {}, "Rollback"), el("dd", {}, p.rollback || "—"),
      el("dt", {}, "Evidence"), el("dd", {}, (p.evidence || []).join(", ") || "—"), el("dt", {}, "Content hash"), el("dd", { class: "mono small" }, p.content_hash)),
    execution,
    canDecide ? el("div", { class: "row decide" }, reason,
      el("button", { class: "primary approve", onclick: act("approve") }, "Approve"),
      el("button", { class: "danger reject", onclick: act("reject") }, "Reject"), msg) : null,
    canExecute ? el("div", { class: "row decide" },
      el("button", { class: "execute", onclick: execute(true) }, "Dry run"),
      el("button", { class: "primary execute", onclick: execute(false) }, "Execute"), msg) : null,
    canUndo ? el("div", { class: "row decide" }, reason, el("button", { class: "danger undo", onclick: undo }, "Undo"), msg) : null,
    ran && !canUndo && me && me.can_approve ? el("p", { class: "small muted" }, "Its executor (" + ex.executor + ") cannot undo it: " +
      (p.rollback ? "roll back by hand: " + p.rollback : "roll back by hand.")) : null,
    noExecutor ? el("p", { class: "small no-executor" },
      "Approved. This service has no executor configured (executors in serve.toml): carry it out by hand.") : null);
}

function showRecord(rec, id) {
  const body = $("#record-body");
  if (!rec) { body.replaceChildren(el("p", { class: "error" }, "No record " + id + " in this report.")); }
  else {
    body.replaceChildren(el("h2", {}, rec.id + " · " + rec.tool), el("p", {}, pill(rec.status), " ", rec.summary),
      el("dl", {}, el("dt", {}, "Arguments"), el("dd", { class: "mono" }, JSON.stringify(rec.args)),
        el("dt", {}, "Sources"), el("dd", { class: "mono small" }, (rec.sources && rec.sources.length ? rec.sources : [rec.source]).join("\n"))),
      (rec.signals || []).length ? el("div", {}, el("h3", {}, "Signals"), el("ul", {}, rec.signals.map((s) => el("li", {}, el("b", {}, s.name), " on ", s.component, s.detail ? ": " + s.detail : "")))) : null,
      el("h3", {}, "Data"), el("pre", { class: "data" }, JSON.stringify(rec.data, null, 2).slice(0, 20000)));
  }
  $("#record").showModal();
}

function addActivity(list, kind, data, t) {
  let text = kind;
  if (kind === "tool_call") text = data.id + " " + data.tool + " " + JSON.stringify(data.args || {}) + " → " + data.status + ": " + (data.summary || "");
  else if (kind === "hypotheses") text = "beliefs: " + (data.top || []).slice(0, 3).map((h) => h.root_cause + (h.component ? "@" + h.component : "") + " " + Number(h.p).toFixed(2)).join(", ");
  else if (kind === "finding") text = "finding: " + data.signal + " on " + data.component + (data.detail ? " (" + data.detail + ")" : "");
  else if (kind === "verdict") text = "verdict: " + (data.verdict || {}).root_cause + " on " + ((data.verdict || {}).component || "—") + " (" + data.status + ")";
  else if (kind === "alert") text = "alert grouped: " + (data.alertname || data.fingerprint);
  else if (kind === "alert_resolved") text = "alert resolved: " + (data.alertname || data.fingerprint);
  else if (kind === "decision") text = "decision on " + data.proposal + ": " + data.outcome + " by " + data.by;
  else if (kind === "proposals") text = "proposed: " + (data.proposals || []).map((p) => p.action + " " + p.target).join(", ");
  else if (kind === "end") text = "run ended: " + data.status + (data.error ? " (" + data.error + ")" : "");
  else if (kind === "unmapped") text = "not investigated: " + data.reason;
  else if (kind === "evidence_source") text = "reading the live fleet: job " + data.job + ", " + when(data.window.start) + " → " + when(data.window.end);
  else if (kind === "resumed") text = "resumed from checkpoint (run " + data.run + ")";
  list.append(el("li", { class: "k-" + kind }, el("span", { class: "muted small" }, t ? when(t).slice(11, 19) : ""), " ", text));
  list.scrollTop = list.scrollHeight;
}

// Server-sent events read with fetch (EventSource cannot send the bearer token).
async function follow(id, list, after) {
  if (liveAbort) liveAbort.abort();
  liveAbort = new AbortController();
  try {
    const r = await fetch("/api/v1/investigations/" + encodeURIComponent(id) + "/events",
      { headers: { Authorization: "Bearer " + token(), "Last-Event-ID": String(after) }, signal: liveAbort.signal });
    const reader = r.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += dec.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        let kind = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) kind = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (!data) continue;
        const parsed = JSON.parse(data);
        if (kind === "close") { route(); return; }
        addActivity(list, kind, parsed, Date.now() / 1000);
        if (kind === "end") { setTimeout(route, 300); return; }
      }
    }
  } catch (e) { if (e.name !== "AbortError") console.warn(e); }
}

// ---------------------------------------------------------------- heat map (canvas)
function heatColor(x, dark) {
  // x: value / median. <= 1 cool and quiet; above it warms to red at 1.25x and beyond.
  const t = Math.max(0, Math.min(1, (x - 1.02) / 0.23));
  const base = dark ? [38, 52, 74] : [222, 232, 245];
  const hot = [220, 38, 38], mid = [245, 158, 11];
  const mix = (a, b, u) => a.map((c, k) => Math.round(c + (b[k] - c) * u));
  const c = t < 0.5 ? mix(base, mid, t * 2) : mix(mid, hot, (t - 0.5) * 2);
  return "rgb(" + c.join(",") + ")";
}

async function drawHeatmap(id, component) {
  const canvas = $("#heatmap");
  let h;
  try { h = await api("/api/v1/investigations/" + encodeURIComponent(id) + "/heatmap"); } catch (e) { h = { available: false, reason: e.message }; }
  if (!canvas) return;
  if (!h.available) { canvas.replaceWith(el("p", { class: "muted" }, "No per-rank step data: " + (h.reason || ""))); return; }
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  const rows = h.ranks.length, cols = h.values[0].length;
  const left = 92, top = 6, bottom = 24, right = 8;
  const width = canvas.clientWidth || 1000;
  const cell = Math.max(3, Math.min(10, Math.floor(360 / rows)));
  const dpr = window.devicePixelRatio || 1;
  const H = top + rows * cell + bottom;
  canvas.style.height = H + "px";
  canvas.width = Math.round(width * dpr); canvas.height = Math.round(H * dpr);
  const ctx = canvas.getContext("2d");
  ctx.scale(dpr, dpr);
  const cw = (width - left - right) / cols;
  const fg = dark ? "#c9d1d9" : "#1f2328";
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillStyle = fg;
  const compRow = h.where.indexOf(component || "");
  const hot = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const val = h.values[r][c];
      ctx.fillStyle = val === null ? (dark ? "#161b22" : "#f6f8fa") : heatColor(val / h.median, dark);
      ctx.fillRect(left + c * cw, top + r * cell, Math.ceil(cw), cell);
    }
    const seen = h.values[r].filter((x) => x !== null);
    if (r !== compRow && seen.reduce((a, b) => a + b, 0) / Math.max(1, seen.length) / h.median > 1.1) hot.push(r);
  }
  // Rank labels as text beside the canvas, placed so that none overlaps another: the verdict's
  // rank first, then hot rows, then evenly spaced ones where there is room.
  const labelH = 13, placed = [];
  const every = Math.max(1, Math.ceil(labelH / cell));
  const wanted = [compRow, ...hot, ...Array.from({ length: rows }, (_, r) => r).filter((r) => r % every === 0)];
  const gutter = $("#heatlabels");
  gutter.replaceChildren();
  gutter.style.height = H + "px";
  for (const r of wanted) {
    if (r < 0 || placed.some((q) => q.r === r)) continue;
    const y = top + r * cell + cell / 2;
    if (placed.some((q) => Math.abs(q.y - y) < labelH)) continue;
    placed.push({ r, y });
    gutter.append(el("span", { class: "ranklabel" + (r === compRow ? " suspect" : hot.includes(r) ? " warm" : ""), "data-rank": h.ranks[r],
      style: "top:" + (y - labelH / 2) + "px;height:" + labelH + "px" }, "rank " + h.ranks[r]));
  }
  if (compRow >= 0) {
    ctx.strokeStyle = dark ? "#ff7b72" : "#cf222e"; ctx.lineWidth = 1.5;
    ctx.strokeRect(left - 1, top + compRow * cell - 1, width - left - right + 2, cell + 2);
  }
  ctx.fillStyle = fg; ctx.textBaseline = "alphabetic";
  ctx.fillText(when(h.t0).slice(11, 16) + "Z", left, H - 6);
  const endLabel = when(h.t1).slice(11, 16) + "Z";
  ctx.fillText(endLabel, width - right - ctx.measureText(endLabel).width, H - 6);
  $("#heatlegend").replaceChildren("median " + h.median.toFixed(3) + " s, max " + h.max.toFixed(3) + " s  ",
    ...[0.95, 1.05, 1.1, 1.2, 1.3].map((x) => el("span", { class: "swatch-item" }, el("span", { class: "swatch", style: "background:" + heatColor(x, dark) }), "×" + x)));
  const tip = $("#heattip");
  canvas.onmousemove = (ev) => {
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor((ev.clientX - rect.left - left) / cw), r = Math.floor((ev.clientY - rect.top - top) / cell);
    if (c < 0 || r < 0 || c >= cols || r >= rows) { tip.style.display = "none"; return; }
    const val = h.values[r][c];
    tip.textContent = "rank " + h.ranks[r] + " (" + h.where[r] + ") " + when(h.columns[c]).slice(11, 19) + ": " + (val === null ? "no data" : val.toFixed(3) + " s");
    tip.style.display = "block"; tip.style.left = (ev.clientX - rect.left + 12) + "px"; tip.style.top = (ev.clientY - rect.top + 12) + "px";
  };
  canvas.onmouseleave = () => { tip.style.display = "none"; };
}

// ---------------------------------------------------------------- per-host timeline (SVG)
async function drawTimeline(id, component, alerts) {
  const box = $("#timeline");
  let t;
  try { t = await api("/api/v1/investigations/" + encodeURIComponent(id) + "/timeline"); } catch (e) { t = { available: false }; }
  if (!box) return;
  if (!t.available) { box.replaceChildren(el("p", { class: "muted" }, "No per-host metrics in the evidence.")); return; }
  const signals = Object.keys(t.signals).filter((s) => Object.values(t.hosts).some((h) => h[s]));
  const suspect = (component || "").split("/")[0];
  const hosts = Object.keys(t.hosts).sort((a, b) => (b === suspect) - (a === suspect) || a.localeCompare(b));
  const ranges = {};
  for (const s of signals) {
    let lo = Infinity, hi = -Infinity;
    for (const h of hosts) for (const x of ((t.hosts[h][s] || {}).v || [])) if (x !== null) { lo = Math.min(lo, x); hi = Math.max(hi, x); }
    ranges[s] = [lo, hi];
  }
  // Axes in words: each column's shared scale in its header, each line's last value beside it,
  // and the time span under the table.
  let t0 = Infinity, t1 = -Infinity;
  for (const h of hosts) for (const s of signals) { const ts = (t.hosts[h][s] || {}).t || []; if (ts.length) { t0 = Math.min(t0, ts[0]); t1 = Math.max(t1, ts[ts.length - 1]); } }
  const table = el("table", { class: "grid timeline" }, el("thead", {}, el("tr", {}, el("th", {}, "Host"),
      signals.map((s) => el("th", {}, t.signals[s], el("span", { class: "scale" }, "scale " + fmt(ranges[s][0]) + "–" + fmt(ranges[s][1])))))),
    el("tbody", {}, hosts.map((h) => el("tr", { class: h === suspect ? "suspect" : "" }, el("td", { class: "mono host", title: h }, h),
      signals.map((s) => el("td", {}, spark(t.hosts[h][s], ranges[s], h === suspect)))))),
    el("tfoot", {}, el("tr", {}, el("td", {}), signals.map(() => el("td", { class: "axis" }, el("span", {}, when(t0).slice(11, 16) + "Z"), el("span", {}, when(t1).slice(11, 16) + "Z"))))));
  box.replaceChildren(table);
}

function fmt(x) {
  if (x === null || x === undefined || !isFinite(x)) return "–";
  const a = Math.abs(x);
  return a >= 100 ? String(Math.round(x)) : a >= 1 ? x.toFixed(1).replace(/\.0$/, "") : a === 0 ? "0" : x.toPrecision(2);
}

function spark(series, range, hot) {
  const last = series ? series.v.filter((x) => x !== null).slice(-1)[0] : undefined;
  return el("div", { class: "sparkcell" }, sparkline(series, range, hot), el("span", { class: "val", title: "last value" }, fmt(last)));
}

function sparkline(series, range, hot) {
  const W = 180, H = 30;
  const svg = svgEl("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "spark" + (hot ? " hot" : "") });
  if (!series || !series.t.length) return svg;
  const [lo, hi] = range; const span = hi - lo || 1;
  const t0 = series.t[0], t1 = series.t[series.t.length - 1] || t0 + 1;
  let d = "";
  series.t.forEach((x, i) => {
    const v = series.v[i]; if (v === null) return;
    const px = ((x - t0) / ((t1 - t0) || 1)) * (W - 4) + 2, py = H - 3 - ((v - lo) / span) * (H - 6);
    d += (d ? "L" : "M") + px.toFixed(1) + " " + py.toFixed(1);
  });
  svg.append(svgEl("path", { d }));
  const last = series.v.filter((x) => x !== null).slice(-1)[0];
  const title = svgEl("title"); title.textContent = (last !== undefined ? "last " + last : "");
  svg.append(title);
  return svg;
}

// ---------------------------------------------------------------- audit
// Every kind of entry in words: decisions (approve, reject), execution steps (dry-run, execute,
// verify, undo) and refusals; what it acted on when the entry names it, never "undefined".
const AUDIT_VERBS = { approve: "approve", reject: "reject", "dry-run": "dry run", execute: "execute", verify: "verify", undo: "undo" };
function auditWhat(a) {
  const d = a.detail || {};
  const on = [d.action, d.target].filter((x) => typeof x === "string" && x).join(" ");
  return (AUDIT_VERBS[a.action] || String(a.action || "?")) + (on ? " " + on : "");
}
async function showAudit() {
  let data;
  try { data = await api("/api/v1/audit"); } catch (e) { if (e.status === 401) return login(e.message); $("#main").replaceChildren(el("p", { class: "error" }, e.message)); return; }
  $("#main").replaceChildren(el("section", { class: "card" }, el("h1", {}, "Audit log"),
    el("p", { class: "muted small" }, "Append-only: every decision and every execution step (dry run, execute, verify, undo), counted or refused."),
    el("table", { class: "grid", id: "audit" }, el("thead", {}, el("tr", {}, ["When", "Who", "What", "Investigation", "Proposal", "Outcome", "Why"].map((h) => el("th", {}, h)))),
      el("tbody", {}, data.entries.length ? data.entries.map((a) => el("tr", {},
        el("td", { class: "num" }, when(a.time)), el("td", {}, a.actor), el("td", {}, auditWhat(a)),
        el("td", {}, el("a", { href: "#/investigations/" + encodeURIComponent(a.investigation || "") }, a.investigation || "")),
        el("td", {}, a.proposal || ""), el("td", {}, pill(a.outcome)), el("td", {}, auditWhy(a))))
        : [el("tr", {}, el("td", { colspan: 7, class: "muted" }, "No decisions yet."))]))));
}

// A decision's why is the person's reason; an execution step's is what happened (and the person's
// reason for an undo); a refusal's is why it was refused.
function auditWhy(a) {
  const given = (a.detail || {}).reason_given;
  if (a.outcome === "refused") return a.reason || "";
  if (a.action === "approve" || a.action === "reject") return given || a.reason || "";
  return [a.reason, given ? "asked: " + given : ""].filter(Boolean).join(" · ");
}

// ---------------------------------------------------------------- dead letters (admin)
// One page of refused webhook bodies at a time, newest first; "Older" follows the API's cursor.
async function showDeadLetters(cursor) {
  let data;
  const q = "?limit=50" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : "");
  try { data = await api("/api/v1/dead-letters" + q); } catch (e) { if (e.status === 401) return login(e.message); $("#main").replaceChildren(el("p", { class: "error" }, e.message)); return; }
  const rows = data.dead_letters;
  $("#main").replaceChildren(el("section", { class: "card" }, el("h1", {}, "Dead letters (" + Number(data.total).toLocaleString("en-US") + ")"),
    el("p", { class: "muted small" }, "Refused webhook bodies, newest first, " + rows.length + " on this page; the oldest are deleted past the cap."),
    el("table", { class: "grid", id: "dead-letters" }, el("thead", {}, el("tr", {}, ["When", "Who", "Status", "Why", "Bytes"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows.length ? rows.map((d) => el("tr", { "data-id": String(d.id) },
        el("td", { class: "num" }, when(d.received_at)), el("td", {}, d.user || ""), el("td", { class: "num" }, String(d.status)),
        el("td", {}, d.reason), el("td", { class: "num" }, String(d.bytes ?? ""))))
        : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, "None."))])),
    el("p", {}, cursor ? el("a", { href: "#/dead-letters", id: "dl-newest" }, "Newest") : null, " ",
      data.next_cursor ? el("a", { href: "#/dead-letters/" + encodeURIComponent(data.next_cursor), id: "dl-older" }, "Older") : null)));
}

// ---------------------------------------------------------------- routing
async function route() {
  if (listTimer) { clearInterval(listTimer); listTimer = null; }
  if (liveAbort) { liveAbort.abort(); liveAbort = null; }
  if (!token()) return login();
  if (!me) { try { await whoami(); } catch (e) { return login(e.message); } }
  const h = location.hash || "#/";
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", h === a.getAttribute("href") || (a.id === "nav-list" && h.startsWith("#/investigations")) || (a.id === "nav-dead" && h.startsWith("#/dead-letters"))));
  const m = h.match(/^#\/investigations\/([^/]+)$/);
  if (m) return showInvestigation(decodeURIComponent(m[1]));
  if (h === "#/audit") return showAudit();
  const dl = h.match(/^#\/dead-letters(?:\/([0-9]+))?$/);
  if (dl) return showDeadLetters(dl[1]);
  return showList();
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", () => {
  $("#record-close").addEventListener("click", () => $("#record").close());
  route();
});
