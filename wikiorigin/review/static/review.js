// wikiorigin review page. Every text from the dataset or the articles is put in with
// textContent (never innerHTML), so markup in a question shows as text and runs nothing.
"use strict";

const CSRF = document.querySelector('meta[name="review-csrf"]').content;
const $ = (id) => document.getElementById(id);
let state = null;      // /api/state
let current = null;    // /api/item/N
let shown = [];        // indices that pass the filters
let at = 0;            // position in `shown`
let renders = 0;       // counts the items shown (data-renders on <body>: tests wait on it)

function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

function say(text, bad) {
  const m = $("message");
  m.textContent = text;
  m.className = bad ? "bad" : "";
}

async function getJSON(url) {
  const r = await fetch(url, {credentials: "same-origin"});
  if (!r.ok) throw new Error((await r.json().catch(() => ({}))).error || r.statusText);
  return r.json();
}

async function post(url, body) {
  const r = await fetch(url, {
    method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-Review-Csrf": CSRF},
    body: JSON.stringify(body || {}),
  });
  const data = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(data.error || r.statusText);
  return data;
}

function filtered() {
  const st = $("filter-status").value, group = $("filter-group").value;
  return state.items.filter((it) => (st === "all" || it.status === st) && (!group || it.group === group))
    .map((it) => it.index);
}

function renderProgress() {
  const p = $("progress");
  clear(p);
  p.appendChild(el("strong", `${state.reviewed}/${state.total} reviewed`));
  p.appendChild(el("span", ` by ${state.who} · by ${state.group_by}: `));
  for (const [name, [done, total]] of Object.entries(state.by_group)) {
    p.appendChild(el("span", `${name} ${done}/${total}`, "group"));
  }
}

function fillSelect(select, values, keep) {
  const old = select.value;
  while (select.options.length > keep) select.remove(keep);
  for (const v of values) select.appendChild(new Option(v, v));
  if ([...select.options].some((o) => o.value === old)) select.value = old;
}

function reasonKeys() {  // the keys that choose a reason: one per reason offered
  return state.reasons.length > 1 ? `1–${state.reasons.length}` : "1";
}

async function loadState(who) {
  state = await getJSON("api/state" + (who ? "?who=" + encodeURIComponent(who) : ""));
  for (const node of document.querySelectorAll(".reason-keys")) node.textContent = reasonKeys();
  $("dataset").textContent = `${state.dataset} (${state.kind})`;
  $("annotator").textContent = state.annotator;
  $("group-name").textContent = state.group_by;
  fillSelect($("filter-group"), Object.keys(state.by_group), 1);
  fillSelect($("filter-who"), state.annotators, 0);
  $("filter-who").value = state.who;
  renderProgress();
  shown = filtered();
}

function goTo(index) {
  at = Math.max(0, shown.indexOf(index));
  return showCurrent();
}

async function showCurrent() {
  $("empty").hidden = shown.length > 0;
  $("position").textContent = shown.length ? `item ${at + 1} of ${shown.length}` : "no items";
  if (!shown.length) { current = null; renderItem(null); return; }
  try {
    current = await getJSON("api/item/" + shown[at]);
  } catch (e) {  // e.g. the dataset file half-written by a rebuild: say so, show no item
    current = null;
    renderItem(null);
    say("could not load the item: " + e.message, true);
    return;
  }
  if ($("message").className === "bad") say("");  // an earlier failure is over
  renderItem(current);
  document.body.dataset.renders = String(++renders);
}

function linkText(url) {
  try { return decodeURI(url); } catch (e) { return url; }  // a malformed % escape: the raw link
}

function renderRow(label, value) {
  const p = el("p", null, "row");
  p.appendChild(el("span", label + ": ", "label"));
  p.appendChild(el("span", value));
  return p;
}

function renderMeta(item) {
  const meta = $("meta"), row = item.row;
  clear(meta);
  const mine = state.items[item.index];
  meta.appendChild(el("span", mine.status, "status " + mine.status));
  if (item.edited) meta.appendChild(el("span", "edited: " + item.edited.join(", "), "tag edited"));
  $("btn-revert").hidden = !item.edits;
  const region = row.region && item.region_class && item.region_class !== row.region
    ? `${row.region} → ${item.region_class}` : row.region;
  for (const [k, v] of [["type", row.type], ["region", region], ["category", row.category],
                        ["culture", row.culture], ["language", row.language],
                        ["footnotes", (item.cited || []).join(", ")], ["id", item.key]]) {
    if (v) meta.appendChild(el("span", `${k}: ${v}`, "tag"));
  }
}

function renderBody(item) {
  const row = item.row;
  $("question").textContent = item.kind === "preferences" ? row.prompt : row.question;
  const choices = $("choices"), answers = $("answers"), pref = $("preference");
  clear(choices); clear(answers); clear(pref);
  if (item.kind === "mcq") {
    const answer = Number.isInteger(row.answer_index) ? row.answer_index : row.choices.indexOf(row.answer);
    row.choices.forEach((c, i) => choices.appendChild(el("li", c, i === answer ? "answer" : "")));
  } else if (item.kind === "freeform") {
    if (row.question_source) answers.appendChild(renderRow("in the item's language", row.question_source));
    const list = el("ul");
    for (const a of row.answers || []) list.appendChild(el("li", a, "answer"));
    answers.appendChild(el("span", "answers:", "label"));
    answers.appendChild(list);
  } else {
    pref.appendChild(el("h4", `chosen (score ${row.score_chosen})`));
    pref.appendChild(el("div", row.chosen, "chosen text"));
    pref.appendChild(el("h4", `rejected (score ${row.score_rejected})`));
    pref.appendChild(el("div", row.rejected, "rejected text"));
  }
}

function renderOrigin(item) {
  const origin = $("origin");
  clear(origin);
  if (Object.keys(item.origin).length) origin.appendChild(el("span", "made by ", "label"));
  for (const [k, v] of Object.entries(item.origin)) origin.appendChild(el("span", `${k} ${v}`, "tag"));
  const link = $("wikipedia");
  if (item.link && /^https?:\/\//.test(item.link)) {
    link.href = item.link; link.hidden = false; link.textContent = "Wikipedia page: " + linkText(item.link);
  } else {
    link.removeAttribute("href"); link.hidden = true;
  }
  const box = $("decisions");
  clear(box);
  for (const d of item.decisions) {
    const text = `${d.annotator}: ${d.decision}` + (d.reason ? ` (${d.reason})` : "") +
      (d.note ? ` — ${d.note}` : "") + (d.edits ? ` [edited: ${Object.keys(d.edits).join(", ")}]` : "") +
      ` at ${d.at}` + (d.stale ? " — STALE: made on other content of this item" : "");
    box.appendChild(el("div", text, "decision" + (d.stale ? " stale" : "")));
  }
}

function renderArticle(item) {
  const text = $("article-text"), refs = $("references");
  clear(text); clear(refs);
  if (!item.article) {
    $("article-title").textContent = "no article given (--articles) or none matches";
    for (const r of item.refs_detail) refs.appendChild(el("li", r, "cited"));
    return;
  }
  const a = item.article;
  $("article-title").textContent = a.title + (a.anchor ? " § " + a.anchor : "");
  for (const s of a.segments) {
    text.appendChild(s.ref === undefined ? document.createTextNode(s.text) : el(s.cited ? "mark" : "sup", s.text,
      s.cited ? "cited" : "footnote"));
  }
  for (const r of a.references) {
    const li = el("li", (r.group ? r.group + " " : "") + r.number + ". " + r.text, r.cited ? "cited" : "");
    if (r.url) {
      const link = el("a", " ↗");
      link.href = r.url; link.target = "_blank"; link.rel = "noopener noreferrer";
      li.appendChild(link);
    }
    refs.appendChild(li);
  }
  const first = text.querySelector("mark");
  if (first) first.scrollIntoView({block: "center"});
}

function renderItem(item) {
  for (const id of ["question", "meta", "choices", "answers", "preference", "origin", "decisions",
                    "article-title", "article-text", "references"]) clear($(id));
  if (!item) { document.body.dataset.renders = String(++renders); return; }
  renderMeta(item); renderBody(item); renderOrigin(item); renderArticle(item);
}

async function afterChange(index, message) {
  const before = shown.slice();
  await loadState($("filter-who").value);
  say(message);
  if (shown.includes(index) && $("filter-status").value === "all") {
    const pos = shown.indexOf(index);
    at = Math.min(pos + 1, shown.length - 1);
  } else {
    const next = before.slice(before.indexOf(index) + 1).find((i) => shown.includes(i));
    at = next === undefined ? 0 : shown.indexOf(next);
  }
  await showCurrent();
}

async function decide(decision, extra) {
  if (!current) return;
  const index = current.index;
  try {
    await post("api/decide", {index, sha1: current.sha1, decision, ...extra});
    await afterChange(index, `saved: ${decision} #${index + 1}`);
  } catch (e) { say(e.message, true); }
}

async function undo() {
  try {
    const r = await post("api/undo");
    if (!r.undone) { say("nothing to undo"); return; }
    await loadState($("filter-who").value);
    if (!shown.includes(r.index)) { $("filter-status").value = "all"; shown = filtered(); }
    await goTo(r.index);
    say(`undone: ${r.undone.decision} #${r.index + 1}`);
  } catch (e) { say(e.message, true); }
}

function openReject() {
  if (!current) return;
  const list = $("reasons");
  clear(list);
  state.reasons.forEach((reason, i) => {
    const li = el("li"), label = el("label"), input = el("input");
    input.type = "radio"; input.name = "reason"; input.value = reason; input.id = "reason-" + (i + 1);
    label.appendChild(input); label.appendChild(document.createTextNode(` ${i + 1} ${reason}`));
    li.appendChild(label); list.appendChild(li);
  });
  $("reject-note").value = "";
  $("reject-dialog").showModal();
}

function confirmReject() {
  const picked = document.querySelector('input[name="reason"]:checked');
  const note = $("reject-note").value.trim();
  if (!picked && !note) { say(`choose a reason (${reasonKeys()}) or write a note`, true); return; }
  $("reject-dialog").close();
  decide("reject", {reason: picked ? picked.value : null, note: note || null});
}

function field(name, value, options) {
  const wrap = el("label", name, "field");
  let input;
  if (options) {
    input = el("select");
    for (const o of options) input.appendChild(new Option(o, o));
    if (!options.includes(value) && value) input.appendChild(new Option(value, value));
    input.value = value || "";
  } else {
    input = el("textarea");
    input.rows = Array.isArray(value) ? Math.max(2, value.length) : 2;
    input.value = Array.isArray(value) ? value.join("\n") : (value || "");
  }
  input.id = "edit-" + name;
  input.dataset.shown = input.value;  // as the dialog opened: a field left so is no new edit
  wrap.appendChild(input);
  return wrap;
}

function valueOf(input) {  // a field's value; a multiple select's: its choices joined as the rows join regions
  return input.multiple ? Array.from(input.selectedOptions, (o) => o.value).join(", ") : input.value;
}

function regionsField(value) {  // a set whose rows may name several regions: choose one or more
  const wrap = el("label", "region (one or more)", "field"), input = el("select");
  const chosen = String(value ?? "").split(", ").filter(Boolean);
  input.multiple = true;
  for (const o of [...state.regions, ...chosen.filter((c) => !state.regions.includes(c))]) {
    input.appendChild(new Option(o, o, false, chosen.includes(o)));
  }
  input.size = Math.min(input.options.length, 12);
  input.id = "edit-region";
  input.dataset.shown = valueOf(input);
  wrap.appendChild(input);
  return wrap;
}

function refsOf(ref) {  // the footnote numbers a row cites: a list, or the released rows' "[1][3]"
  if (Array.isArray(ref)) return ref.map(Number);
  return (String(ref ?? "").match(/\d+/g) || []).map(Number);
}

function parseRefs(raw) {  // "1, 3" or "[1][3]" -> [1, 3]; anything else is sent as it is, for the server to refuse
  return raw.split(/[\s,、，\[\]]+/).filter(Boolean).map((t) => (/^\d+$/.test(t) ? Number(t) : t));
}

function openEdit() {
  if (!current) return;
  const box = $("edit-fields"), row = current.row;
  clear(box);
  for (const name of state.editable) {
    if (name === "answer_index") {
      const answer = Number.isInteger(row.answer_index) ? row.answer_index : row.choices.indexOf(row.answer);
      const f = field("answer_index", String(answer + 1), row.choices.map((_, i) => String(i + 1)));
      f.firstChild.textContent = "answer (option number)";
      box.appendChild(f);
    } else if (name === "ref") {
      const f = field("ref", refsOf(row.ref).join(", "));
      f.firstChild.textContent = "footnotes that back the answer (ref: numbers, e.g. 1, 3)";
      f.lastChild.rows = 1;
      box.appendChild(f);
    } else if (name === "region" && state.several_regions) {
      box.appendChild(regionsField(row.region));
    } else {
      const options = name === "type" ? state.types : name === "region" ? state.regions : null;
      const messy = name === "region" && current.region_class && !state.regions.includes(row.region);
      const value = messy ? current.region_class : row[name];  // a released row's label: its class
      box.appendChild(field(name, value, options));
    }
  }
  $("edit-dialog").showModal();
  box.querySelector("textarea, select").focus();
}

function saveEdit() {
  const row = current.original || current.row, edits = {};  // edits are of the file's row
  for (const name of state.editable) {
    const input = $("edit-" + name), raw = valueOf(input);
    if (raw === input.dataset.shown) {  // untouched: as it was (a released row's region shown as its class is no edit)
      if (current.edits && name in current.edits) edits[name] = current.edits[name];
      continue;
    }
    let value = raw;
    if (name === "choices" || name === "answers") value = raw.split("\n").map((s) => s.trim()).filter(Boolean);
    if (name === "answer_index") value = Number(raw) - 1;
    if (name === "ref") value = parseRefs(raw);
    const old = name === "answer_index"
      ? (Number.isInteger(row.answer_index) ? row.answer_index : row.choices.indexOf(row.answer))
      : name === "ref" ? refsOf(row.ref) : row[name];
    if (JSON.stringify(value) !== JSON.stringify(old ?? (typeof value === "string" ? "" : old))) edits[name] = value;
  }
  $("edit-dialog").close();
  if (edits.choices && !("answer_index" in edits)) {
    edits.answer_index = Number($("edit-answer_index").value) - 1;
  }
  decide("accept", Object.keys(edits).length ? {edits} : {});
}

function move(step) {
  if (!shown.length) return;
  at = (at + step + shown.length) % shown.length;
  showCurrent();
}

function openWikipedia() {
  const link = $("wikipedia");
  if (link.href && !link.hidden) window.open(link.href, "_blank", "noopener,noreferrer");
}

function accept() {  // an item you edited stays edited: your edits are sent again
  if (current && current.edits) decide("accept", {edits: current.edits});
  else decide("accept");
}

function acceptOriginal() {  // revert your edits: accept the item as the file has it
  if (current && current.edits) decide("accept");
  else say("no edits of yours on this item to revert");
}

const ACTIONS = {
  a: accept, o: acceptOriginal, r: openReject, e: openEdit, s: () => decide("skip"), u: undo,
  j: () => move(1), ArrowRight: () => move(1), k: () => move(-1), ArrowLeft: () => move(-1),
  w: openWikipedia, "?": () => $("help-dialog").showModal(),
  p: () => { $("filter-status").value = "pending"; refilter(); },
};

function onKey(ev) {
  const dialog = document.querySelector("dialog[open]");
  if (dialog && dialog.id === "reject-dialog") {
    const note = $("reject-note"), inNote = ev.target === note;
    if (/^[1-9]$/.test(ev.key) && !inNote) {
      const radio = $("reason-" + ev.key);
      if (radio) { radio.checked = true; ev.preventDefault(); note.focus(); }  // what is typed next is the note
    } else if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); confirmReject(); }
    else if (!inNote && !ev.ctrlKey && !ev.metaKey && !ev.altKey && (ev.key.length === 1 || ev.isComposing ||
             ev.key === "Process")) {
      note.focus();  // typed text (a space too) goes to the note, never to a reason's radio button
    }
    return;
  }
  if (dialog && dialog.id === "edit-dialog") {
    if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); saveEdit(); }
    return;
  }
  if (dialog || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (["INPUT", "TEXTAREA", "SELECT"].includes(ev.target.tagName)) return;
  const action = ACTIONS[ev.key];
  if (action) { ev.preventDefault(); action(); }
}

async function refilter() {
  const index = current ? current.index : null;
  shown = filtered();
  at = Math.max(0, shown.indexOf(index));
  await showCurrent();
}

async function main() {
  document.addEventListener("keydown", onKey);
  const buttons = {"btn-accept": "a", "btn-revert": "o", "btn-reject": "r", "btn-edit": "e", "btn-skip": "s", "btn-undo": "u",
                   "btn-prev": "k", "btn-next": "j", "btn-wiki": "w", "btn-help": "?"};
  for (const [id, key] of Object.entries(buttons)) $(id).addEventListener("click", () => ACTIONS[key]());
  $("reject-confirm").addEventListener("click", confirmReject);
  $("reject-cancel").addEventListener("click", () => $("reject-dialog").close());
  $("edit-save").addEventListener("click", saveEdit);
  $("edit-cancel").addEventListener("click", () => $("edit-dialog").close());
  $("help-close").addEventListener("click", () => $("help-dialog").close());
  $("filter-status").addEventListener("change", refilter);
  $("filter-group").addEventListener("change", refilter);
  $("filter-who").addEventListener("change", async () => { await loadState($("filter-who").value); await refilter(); });
  try {
    await loadState();
    await goTo(state.start);
    document.body.dataset.ready = "1";
  } catch (e) { say("could not load the review: " + e.message, true); }
}

main();
