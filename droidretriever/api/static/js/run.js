// One run: plan and checklist, exploration map, every phone of the run (each with its app and
// sub-task; the person picks one or follows the one acting), the chosen phone's live screen with
// the next action and takeover, the intervention buttons (for that phone), the pause banner, the
// event log, the app map each app's navigation followed (where one did) and the cited report.
import { settled } from "./alerts.js";
import { api, follow } from "./api.js";
import { LiveScreen } from "./live.js";
import { ExplorationMap } from "./map.js";
import { RunMapPanel } from "./maps.js";
import { PhoneLossNotice } from "./phone_loss.js";
import { clear, clock, h, icon, pill, showError, toast } from "./ui.js";

let me = null; // this browser's actor name ("browser 3f2a")
const FINISHED = new Set(["completed", "failed", "stopped"]);
const STICK_MS = 4000; // following the one acting: stay on a phone that acted this recently
const DOING = { acting: "acting", paused: "paused", taken_over: "taken over", waiting: "needs you", done: "done" };

export function showRun(page, runId, params) {
  const live = new LiveScreen();
  const map = new ExplorationMap(runId, () => live.size);
  const appMaps = new RunMapPanel();
  const state = { detail: null, steering: null, subtasks: new Map(), finished: false, lastPreview: null, act: null,
    follow: true, chosen: null, phones: new Map(), acted: new Map(), previews: new Map() };
  const shown = []; // {seq, at, shownAt}: when each event reached the page (benchmarks read it)
  window.droidretriever = { live, run: { id: runId, shown, state } };
  live.setLabel(h("span", { class: "muted" }, "no phone yet"));

  const title = h("h1", { id: "run-question" }, "…");
  const status = h("span", { id: "run-status" });
  const heard = h("div", { class: "heard", id: "run-heard", hidden: true });
  const links = h("div", { class: "links muted" });
  const checklist = h("ol", { class: "checklist", id: "checklist" }, h("li", { class: "muted" }, "planning…"));
  const planNote = h("p", { class: "muted", id: "plan-note" });
  // A request to act (top up, order, send...): the plan's one line saying the agent does not do it.
  const actNote = h("p", { class: "act-note", id: "plan-act", hidden: true });
  const banner = h("div", { class: "pause-banner", id: "pause-banner", hidden: true });
  const lost = new PhoneLossNotice(); // a phone of the run died: what happened, where it went on
  const controls = h("div", { class: "controls", id: "controls" });
  const phoneList = h("div", { class: "run-phones", id: "run-phones" });
  const typed = h("input", { id: "takeover-text", type: "text", autocomplete: "off", placeholder: "type into the focused field" });
  const takeoverPanel = h("form", { class: "takeover", id: "takeover", hidden: true, onsubmit: async (event) => {
    event.preventDefault();
    if (!typed.value) return;
    const value = typed.value;
    typed.value = "";
    await live.send({ kind: "text", text: value });
  } },
  h("div", { class: "muted" }, "You drive the phone: click to tap, drag to swipe, hold to long-press."),
  h("div", { class: "row" }, typed, h("button", { class: "primary small", type: "submit", id: "takeover-type" }, "type")),
  h("div", { class: "row" },
    h("button", { type: "button", class: "ghost small", id: "key-back", onclick: () => live.send({ kind: "back" }) }, "◁ back"),
    h("button", { type: "button", class: "ghost small", id: "key-home", onclick: () => live.send({ kind: "home" }) }, "○ home")));
  const log = h("ol", { class: "log", id: "event-log" });
  const report = h("section", { class: "card report", id: "report", hidden: true });

  page.append(h("div", { class: "run" },
    h("section", { class: "card head" }, h("div", { class: "row spread" }, title, status), heard, links),
    h("div", { class: "grid" },
      h("section", { class: "card plan" }, h("h2", {}, "Plan"), planNote, actNote, checklist),
      h("section", { class: "card explore" }, h("h2", {}, "Exploration map"), map.node,
        h("details", { class: "events", open: false }, h("summary", {}, "Events"), log)),
      h("section", { class: "card phone" }, h("h2", {}, "Phones"), phoneList, lost.node, banner, live.node, controls, takeoverPanel)),
    appMaps.node, report));

  async function command(action, extra = {}) {
    try {
      state.steering = await api.post(`/runs/${runId}/control`, { action, ...extra });
      if (state.steering.mode === "takeover") state.steering.waiting.forEach(settled);
      renderSteering();
    } catch (error) {
      showError(error);
    }
  }

  function button(label, action, extra, kind = "ghost", id = `do-${action}`) {
    return h("button", { class: `${kind} small`, id: extra && extra.answer ? `do-${extra.answer}` : id, type: "button",
      onclick: () => command(action, extra) }, label);
  }

  // Every phone of the run: the ones it uses now (steering state) and the ones it used (events).
  function notePhones(s) {
    for (const entry of state.phones.values()) if (entry.doing !== "done") entry.doing = "done";
    for (const work of s.work || []) state.phones.set(work.serial, { ...work });
  }

  function notePhoneDone(result) {
    if (!result || !result.device) return;
    const known = state.subtasks.get(result.subtask_id);
    const entry = state.phones.get(result.device);
    if (entry && entry.subtask_id && entry.subtask_id !== result.subtask_id) return; // on to another one
    state.phones.set(result.device, { serial: result.device, doing: "done", subtask_id: result.subtask_id,
      app_label: known ? known.subtask.app_label : "", task: known ? known.subtask.search_term || known.subtask.goal.split("\n")[0] : "" });
  }

  function phoneOfSubtask(sid) {
    for (const entry of state.phones.values()) if (entry.subtask_id === sid && entry.doing !== "done") return entry.serial;
    return null;
  }

  function noteActing(sid) {
    const serial = phoneOfSubtask(sid);
    if (serial) state.acted.set(serial, Date.now());
    return serial;
  }

  // The phone on the screen: the one chosen; else the one this person steers, else the one acting
  // (staying a moment on a phone that just acted, so two busy phones do not flicker).
  function shownPhone(s) {
    const live_ = [...state.phones.values()].filter((p) => p.doing !== "done").map((p) => p.serial);
    if (!state.follow && state.chosen) return state.chosen;
    if (s && s.mode !== "auto" && s.serial && s.actor === me) return s.serial;
    const now = Date.now();
    if (live.serial && live_.includes(live.serial) && now - (state.acted.get(live.serial) || 0) < STICK_MS) return live.serial;
    const recent = live_.filter((serial) => state.acted.has(serial)).sort((a, b) => state.acted.get(b) - state.acted.get(a));
    if (recent.length) return recent[0];
    if (s && s.waiting.length) return s.waiting[0].serial;
    if (live.serial && live_.includes(live.serial)) return live.serial;
    return live_[0] || live.serial || null;
  }

  function renderPhones() {
    const s = state.steering;
    const phone = shownPhone(s);
    if (phone && phone !== live.serial) { live.showPreview(null); live.connect(phone); showPhonePreview(phone); }
    const entries = [...state.phones.values()].sort((a, b) => a.serial.localeCompare(b.serial));
    const follow = h("button", { type: "button", class: "ghost small follow", id: "follow-acting", "aria-pressed": String(state.follow),
      onclick: () => { state.follow = true; state.chosen = null; renderSteering(); } }, state.follow ? "◉ following the one acting" : "○ follow the one acting");
    clear(phoneList, entries.length > 1 ? follow : null, entries.map((p) =>
      h("button", { type: "button", class: `run-phone ${p.serial === live.serial ? "on" : ""} ${p.doing}`,
        dataset: { serial: p.serial, doing: p.doing }, "aria-pressed": String(p.serial === live.serial),
        onclick: () => { state.follow = false; state.chosen = p.serial; renderSteering(); } },
      h("strong", {}, p.app_label || "starting…"), pill(DOING[p.doing] || p.doing, p.doing),
      h("span", { class: "task muted" }, p.task || ""), h("span", { class: "serial muted" }, p.serial))));
    const shown = state.phones.get(live.serial);
    if (live.serial) {
      live.setLabel(h("strong", {}, shown && shown.app_label ? shown.app_label : "phone"),
        shown && shown.task ? h("span", { class: "muted" }, `· ${shown.task}`) : null,
        h("span", { class: "serial muted" }, live.serial), entries.length > 1 ? h("span", { class: "muted small" }, `(${followWords(s)})`) : null);
    }
  }

  // Previews are kept per sub-task (its phone may be learnt a moment later) until its next step.
  function previewDone(sid) {
    const serial = phoneOfSubtask(sid);
    state.previews.delete(sid);
    if (!serial || serial === live.serial) live.showPreview(null);
  }

  function followWords(s) {
    if (!state.follow) return "chosen";
    return s && s.mode !== "auto" && s.serial === live.serial && s.actor === me ? "the phone you steer" : "following the one acting";
  }

  function showPhonePreview(serial) {
    const phone = state.phones.get(serial);
    const shown = phone && phone.doing !== "done" ? state.previews.get(phone.subtask_id) : null;
    if (!shown || state.replaying) { live.showPreview(null); return; }
    const left = shown.preview.window_s - (performance.now() - shown.at) / 1000;
    live.showPreview({ ...shown.preview, window_s: Math.max(0, left) },
      () => command("pause", { serial, note: "cancelled the planned action" }));
  }

  function renderStatus() {
    if (state.finished) return;
    const s = state.steering;
    const value = s ? s.status : state.detail ? state.detail.manifest.status : "pending";
    const waiting = s && value === "paused" && s.mode === "auto" && s.waiting.length;
    clear(status, waiting ? pill("waiting for a person", "paused") : pill(runStatus(value)));
  }

  // The steering controls act on one phone: the one steered while a person steers, else the one shown.
  function renderControls(s, target) {
    const mine = s.mode === "auto" || s.actor === me;
    const extra = { serial: target };
    const buttons = [];
    if (!mine) buttons.push(h("span", { class: "muted" }, `${s.actor} steers this run`));
    else if (s.mode === "auto" && s.phones.includes(target)) {
      buttons.push(button("❚❚ Pause", "pause", extra), button("Take over", "take_over", extra, "ghost", "do-take-over"),
        button("Save this screen", "save_screen", extra));
    } else if (s.mode === "paused") {
      buttons.push(button("Take over", "take_over", extra, "ghost", "do-take-over"), button("▶ Back to auto", "resume", extra, "primary"),
        button("Save this screen", "save_screen", extra));
    } else if (s.mode === "takeover" && s.source === "loop") {
      buttons.push(button("▶ Back to auto", "resume", extra, "primary"), button("Save this screen", "save_screen", extra));
    } else if (s.mode === "takeover") {
      buttons.push(button("▶ Back to auto (continue)", "resume", extra, "primary"), button("Skip this app", "answer", { answer: "skip", serial: target }));
    }
    buttons.push(h("button", { class: "danger small", id: "do-stop", type: "button",
      onclick: () => confirm("Stop the run and report with what was captured?") && command("stop") }, "■ Stop and report"));
    clear(controls, buttons);
  }

  function renderBanner(s) {
    const waiting = s.waiting.find((w) => w.serial === live.serial) || s.waiting[0];
    const others = s.waiting.filter((w) => w !== waiting);
    banner.hidden = !(waiting || s.mode !== "auto");
    const app = (serial) => { const p = state.phones.get(serial); return p && p.app_label ? `${p.app_label} on ${serial}` : serial; };
    if (waiting && s.mode === "auto") {
      clear(banner, h("strong", {}, `${waiting.app_label} needs you`), pill(waiting.category || "decision", "warn"),
        h("div", {}, waiting.reason, h("span", { class: "muted" }, ` (${waiting.serial})`)), h("div", { class: "row" },
          button("Take over the phone", "take_over", { serial: waiting.serial }, "primary", "do-take-over"),
          button("Continue", "answer", { answer: "continue", serial: waiting.serial }),
          button("Skip this app", "answer", { answer: "skip", serial: waiting.serial })),
        others.length ? h("div", { class: "muted small" }, `also waiting: ${others.map((w) => `${w.app_label} on ${w.serial}`).join(", ")}`) : null);
    } else if (s.mode === "takeover") {
      clear(banner, h("strong", {}, s.actor === me ? `You drive ${app(s.serial)}` : `${s.actor} drives ${app(s.serial)}`),
        s.ready ? null : h("span", { class: "muted" }, " (waiting for the copilot to hand it over…)"),
        s.source === "pause" ? h("div", { class: "muted" }, `${s.app_label} waits for a person; when you are done, continue.`) : null);
    } else if (s.mode === "paused") {
      clear(banner, h("strong", {}, `Paused on ${app(s.serial)}`), h("span", { class: "muted" }, ` by ${s.actor}`));
    }
    banner.className = `pause-banner ${s.mode}`;
  }

  function renderSteering() {
    const s = state.steering;
    if (!s) return;
    notePhones(s);
    renderPhones();
    renderStatus();
    const driving = s.mode === "takeover" && s.actor === me && s.ready && s.serial === live.serial;
    live.setTakeover(driving);
    takeoverPanel.hidden = !driving;
    renderBanner(s);
    if (state.finished) { clear(controls); return; }
    renderControls(s, s.mode !== "auto" && s.serial ? s.serial : live.serial);
  }

  // One request at a time; a call while one is under way asks for one more after it.
  let polling = null;
  let again = false;
  async function refreshSteering() {
    if (state.finished) return;
    if (polling) { again = true; return; }
    polling = api.get(`/runs/${runId}/control?watching=true`);
    try {
      state.steering = await polling;
      renderSteering();
    } catch (error) {
      if (error.status !== 404) console.warn(error);
    } finally {
      polling = null;
      if (again) { again = false; refreshSteering(); }
    }
  }

  function renderDetail() {
    const { manifest, prefect } = state.detail;
    title.textContent = manifest.query.text;
    if (manifest.plan) state.act = manifest.plan.act_request || null;
    const q = manifest.query;
    if (q.heard) {
      heard.hidden = false;
      clear(heard, h("strong", {}, "Heard: "), h("q", {}, q.heard.text), h("span", { class: "engine" }, ` by ${q.heard.engine}`),
        q.heard.low_accuracy ? h("span", { class: "pill warn" }, "offline engine: low accuracy") : null,
        q.heard.text !== q.text ? h("div", { class: "muted" }, `corrected to “${q.text}”`) : null);
    }
    clear(links, `run ${runId}`, prefect ? [" · ", h("a", { href: prefect, target: "_blank", rel: "noopener" }, "Prefect run")] : null);
    if (manifest.plan) setPlan(manifest.plan, manifest.subtasks);
    state.finished = FINISHED.has(manifest.status);
    // The status pill: the manifest's once the run has finished, else what the steering state
    // says now (paused while any phone waits for a person or is steered by one).
    if (state.finished) clear(status, pill(runStatus(manifest.status)));
    state.steering = state.detail.steering;
    renderSteering();
  }

  // A run that answered a request to act ended without doing it: never shown as "completed".
  function runStatus(value) {
    return value === "completed" && state.act ? "not_done" : value;
  }

  function setPlan(plan, statuses = {}) {
    planNote.textContent = `${plan.subtasks.length} sub-task(s) in ${new Set(plan.subtasks.map((s) => s.package)).size} app(s), by ${plan.decomposer}`;
    state.act = plan.act_request || null;
    actNote.hidden = !state.act;
    actNote.textContent = state.act ? state.act.notice : "";
    for (const subtask of plan.subtasks) {
      if (!state.subtasks.has(subtask.id)) state.subtasks.set(subtask.id, { subtask, status: statuses[subtask.id] || "pending", steps: 0 });
    }
    map.setPlan(plan.subtasks);
    renderChecklist();
  }

  function renderChecklist() {
    clear(checklist, [...state.subtasks.values()].map(({ subtask, status: s, steps, note }) =>
      h("li", { class: `item ${s}`, dataset: { subtask: subtask.id, status: s } },
        h("span", { class: "tick", "aria-hidden": "true" }, icon(s)),
        h("div", {}, h("strong", {}, subtask.app_label), subtask.search_term ? ` · “${subtask.search_term}”` : "",
          h("div", { class: "muted" }, subtask.goal.split("\n")[0]),
          h("div", { class: "muted small" }, `${subtask.page_mode.replace("_", " ")} · ${steps} step(s)`, note ? ` · ${note}` : "")))));
  }

  function setStatus(id, value, note) {
    const entry = state.subtasks.get(id);
    if (!entry) return;
    entry.status = value;
    if (note !== undefined) entry.note = note;
    renderChecklist();
  }

  function logLine(event) {
    const line = h("li", { class: `ev ${event.kind}`, dataset: { seq: event.seq } },
      h("time", {}, clock(event.at)), h("b", {}, event.kind.replace("_", " ")),
      event.actor ? h("span", { class: "actor" }, event.actor) : null, " ", (event.message || "").split("\n")[0]);
    log.prepend(line);
    shown.push({ seq: event.seq, kind: event.kind, at: Date.parse(event.at), shownAt: Date.now() });
  }

  async function showReport() {
    report.hidden = false;
    clear(report, h("h2", {}, "Report"),
      h("iframe", { src: `/runs/${runId}/report`, title: "report", id: "report-frame", sandbox: "allow-scripts" }),
      h("div", { class: "citations", id: "citations" }));
    try {
      const data = await api.get(`/runs/${runId}/report.json`);
      const list = report.querySelector("#citations");
      clear(list, h("h3", {}, `Evidence (${data.citations.length} citation${data.citations.length === 1 ? "" : "s"})`),
        data.citations.map((c, i) => h("figure", { class: `cite ${c.grounded ? "ok" : "bad"}` },
          c.crop_key ? h("img", { src: `/runs/${runId}/citations/${i}/crop`, alt: c.quote, loading: "lazy" }) : null,
          h("figcaption", {}, h("b", {}, `[${i + 1}] `), c.quote, c.grounded ? "" : " (could not be verified)"))));
    } catch (error) {
      console.warn(error);
    }
  }

  function onEvent(event) {
    logLine(event);
    if (lost.show(event, state.replaying)) refreshSteering();
    const sid = event.subtask_id;
    switch (event.kind) {
      case "run_started":
        api.get(`/runs/${runId}`).then((detail) => { state.detail = detail; renderDetail(); }).catch(() => {});
        break;
      case "plan_ready":
        if (event.plan) setPlan(event.plan);
        break;
      case "subtask_started":
        setStatus(sid, "running");
        refreshSteering();
        break;
      case "step": {
        const entry = state.subtasks.get(sid);
        if (entry && event.step.policy !== "user") entry.steps += 1;
        map.addStep(event);
        renderChecklist();
        if (event.step.policy !== "user") previewDone(sid);
        if (!state.replaying) { noteActing(sid); renderPhones(); }
        break;
      }
      case "preview":
        map.addPreview(event);
        state.lastPreview = event.preview;
        if (!state.replaying) {
          state.previews.set(sid, { preview: event.preview, at: performance.now() });
          const serial = noteActing(sid);
          renderPhones();
          if (serial === live.serial) showPhonePreview(serial);
        }
        break;
      case "capture_saved":
        map.addCapture(event);
        if (!state.replaying) toast(`capture saved: ${event.capture ? event.capture.title || event.capture.id : ""}`, "ok", { timeout: 3000 });
        break;
      case "needs_user":
        if (sid) setStatus(sid, "needs_user", event.message);
        previewDone(sid);
        refreshSteering();
        break;
      case "resumed":
        if (sid) setStatus(sid, "running", "");
        refreshSteering();
        break;
      case "control":
        refreshSteering();
        break;
      case "subtask_finished":
        if (event.result) setStatus(sid, event.result.status, event.result.reason);
        map.finish(sid);
        previewDone(sid);
        notePhoneDone(event.result);
        renderPhones();
        break;
      case "report_ready":
        showReport();
        break;
      case "log":
        appMaps.add(event);
        break;
      case "error":
        if (!state.replaying) toast(event.message, "error", { timeout: 12000 });
        break;
      case "run_finished":
        state.finished = true;
        clear(status, pill(event.message === "completed" ? runStatus("completed") : event.message === "failed" ? "failed" : "stopped"));
        live.showPreview(null);
        live.setTakeover(false);
        takeoverPanel.hidden = true;
        clear(controls);
        break;
      default:
        break;
    }
  }

  let source = null;
  let timer = null;
  (async () => {
    try {
      me = me || (await api.get("/auth/me")).actor;
      state.detail = await api.get(`/runs/${runId}`);
    } catch (error) {
      showError(error);
      return;
    }
    const wanted = params.get("takeover");
    if (wanted) { state.follow = false; state.chosen = wanted; }
    renderDetail();
    if (state.detail.report) showReport();
    state.replaying = true;
    source = follow(`/runs/${runId}/events`, (event) => {
      state.replaying = Date.now() - Date.parse(event.at) > 5000;
      onEvent(event);
    }, { onEnd: () => { state.finished = true; } });
    timer = setInterval(refreshSteering, 2000);
    refreshSteering(); // says at once that a person watches: planned actions wait the confirm window
    if (wanted && !state.finished) {
      const s = state.steering;
      if (!(s.mode === "takeover" && s.serial === wanted)) await command("take_over", { serial: wanted });
    }
  })();

  return () => {
    if (source) source.close();
    clearInterval(timer);
    live.disconnect();
    delete window.droidretriever;
  };
}
