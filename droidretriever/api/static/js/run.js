// One run: plan and checklist, exploration map, live screen with the next action and takeover,
// the intervention buttons, the pause banner, the event log, the app map each app's navigation
// followed (where one did) and, at the end, the cited report.
import { settled } from "./alerts.js";
import { api, follow } from "./api.js";
import { LiveScreen } from "./live.js";
import { ExplorationMap } from "./map.js";
import { RunMapPanel } from "./maps.js";
import { PhoneLossNotice } from "./phone_loss.js";
import { clear, clock, h, icon, pill, showError, toast } from "./ui.js";

let me = null; // this browser's actor name ("browser 3f2a")
const FINISHED = new Set(["completed", "failed", "stopped"]);

export function showRun(page, runId, params) {
  const live = new LiveScreen();
  const map = new ExplorationMap(runId, () => live.size);
  const appMaps = new RunMapPanel();
  const state = { detail: null, steering: null, subtasks: new Map(), finished: false, lastPreview: null, act: null };
  const shown = []; // {seq, at, shownAt}: when each event reached the page (benchmarks read it)
  window.droidretriever = { live, run: { id: runId, shown, state } };

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
  const phoneTabs = h("div", { class: "phone-tabs" });
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
      h("section", { class: "card phone" }, h("h2", {}, "Phone"), phoneTabs, lost.node, banner, live.node, controls, takeoverPanel)),
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

  function chosenPhone(s) {
    if (s.serial) return s.serial;
    if (s.waiting.length) return s.waiting[0].serial;
    if (s.phones.length) return s.phones[0];
    return live.serial;
  }

  function renderSteering() {
    const s = state.steering;
    if (!s) return;
    const mine = s.mode === "auto" || s.actor === me;
    const phone = chosenPhone(s);
    if (phone) live.connect(phone);
    const phones = [...new Set([...s.phones, ...s.waiting.map((w) => w.serial), ...(s.serial ? [s.serial] : [])])];
    clear(phoneTabs, phones.length > 1 ? phones.map((serial) => h("span", { class: `chip ${serial === live.serial ? "on" : ""}` }, serial)) : null);
    const driving = s.mode === "takeover" && s.actor === me && s.ready;
    live.setTakeover(driving);
    takeoverPanel.hidden = !driving;
    const waiting = s.waiting[0];
    banner.hidden = !(waiting || s.mode !== "auto");
    if (waiting && s.mode === "auto") {
      clear(banner, h("strong", {}, `${waiting.app_label} needs you`), pill(waiting.category || "decision", "warn"),
        h("div", {}, waiting.reason), h("div", { class: "row" },
          button("Take over the phone", "take_over", { serial: waiting.serial }, "primary", "do-take-over"),
          button("Continue", "answer", { answer: "continue", serial: waiting.serial }),
          button("Skip this app", "answer", { answer: "skip", serial: waiting.serial })));
    } else if (s.mode === "takeover") {
      clear(banner, h("strong", {}, s.actor === me ? `You drive ${s.serial}` : `${s.actor} drives ${s.serial}`),
        s.ready ? null : h("span", { class: "muted" }, " (waiting for the copilot to hand it over…)"),
        s.source === "pause" ? h("div", { class: "muted" }, `${s.app_label} waits for a person; when you are done, continue.`) : null);
    } else if (s.mode === "paused") {
      clear(banner, h("strong", {}, `Paused on ${s.serial}`), h("span", { class: "muted" }, ` by ${s.actor}`));
    }
    banner.className = `pause-banner ${s.mode}`;
    if (state.finished) { clear(controls); return; }
    const buttons = [];
    if (!mine) buttons.push(h("span", { class: "muted" }, `${s.actor} steers this run`));
    else if (s.mode === "auto" && s.phones.length) {
      buttons.push(button("❚❚ Pause", "pause"), button("Take over", "take_over", null, "ghost", "do-take-over"),
        button("Save this screen", "save_screen"));
    } else if (s.mode === "paused") {
      buttons.push(button("Take over", "take_over", null, "ghost", "do-take-over"), button("▶ Back to auto", "resume", null, "primary"),
        button("Save this screen", "save_screen"));
    } else if (s.mode === "takeover" && s.source === "loop") {
      buttons.push(button("▶ Back to auto", "resume", null, "primary"), button("Save this screen", "save_screen"));
    } else if (s.mode === "takeover") {
      buttons.push(button("▶ Back to auto (continue)", "resume", null, "primary"), button("Skip this app", "answer", { answer: "skip" }));
    }
    buttons.push(h("button", { class: "danger small", id: "do-stop", type: "button",
      onclick: () => confirm("Stop the run and report with what was captured?") && command("stop") }, "■ Stop and report"));
    clear(controls, buttons);
  }

  async function refreshSteering() {
    if (state.finished) return;
    try {
      state.steering = await api.get(`/runs/${runId}/control`);
      renderSteering();
    } catch (error) {
      if (error.status !== 404) console.warn(error);
    }
  }

  function renderDetail() {
    const { manifest, prefect } = state.detail;
    title.textContent = manifest.query.text;
    if (manifest.plan) state.act = manifest.plan.act_request || null;
    clear(status, pill(runStatus(manifest.status)));
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
        if (!state.finished) clear(status, pill("running"));
        refreshSteering();
        break;
      case "step": {
        const entry = state.subtasks.get(sid);
        if (entry && event.step.policy !== "user") entry.steps += 1;
        map.addStep(event);
        renderChecklist();
        if (event.step.policy !== "user") live.showPreview(null);
        break;
      }
      case "preview":
        map.addPreview(event);
        state.lastPreview = event.preview;
        if (!state.replaying) live.showPreview(event.preview, () => command("pause", { note: "cancelled the planned action" }));
        break;
      case "capture_saved":
        map.addCapture(event);
        if (!state.replaying) toast(`capture saved: ${event.capture ? event.capture.title || event.capture.id : ""}`, "ok", { timeout: 3000 });
        break;
      case "needs_user":
        if (sid) setStatus(sid, "needs_user", event.message);
        if (!state.finished) clear(status, pill("paused"));
        live.showPreview(null);
        refreshSteering();
        break;
      case "resumed":
        if (sid) setStatus(sid, "running", "");
        if (!state.finished) clear(status, pill("running"));
        refreshSteering();
        break;
      case "control":
        refreshSteering();
        break;
      case "subtask_finished":
        if (event.result) setStatus(sid, event.result.status, event.result.reason);
        map.finish(sid);
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
    renderDetail();
    state.steering = state.detail.steering;
    renderSteering();
    if (state.detail.report) showReport();
    state.replaying = true;
    source = follow(`/runs/${runId}/events`, (event) => {
      state.replaying = Date.now() - Date.parse(event.at) > 5000;
      onEvent(event);
    }, { onEnd: () => { state.finished = true; } });
    timer = setInterval(refreshSteering, 2000);
    const wanted = params.get("takeover");
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
