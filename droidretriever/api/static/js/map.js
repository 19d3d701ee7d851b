// The exploration map: a tab per app and search term, each a strip of the screens in order.
// Orange: a person intervened; blue: the current screen; green: a capture was saved there.
// A fingertip marks where the step tapped.
import { clear, h } from "./ui.js";

function screenName(key) {
  return key ? key.split("/").pop() : null;
}

function describe(step, message) {
  if (step.policy === "user") return message || "a person";
  const action = step.action;
  if (!action) return step.evaluation ? step.evaluation.page_type : "look";
  return action.kind.replace("_", " ");
}

export class ExplorationMap {
  constructor(runId, deviceSize) {
    this.runId = runId;
    this.deviceSize = deviceSize; // () => {width, height} of the phone's screen
    this.tabs = h("div", { class: "tabs", role: "tablist" });
    this.strips = h("div", { class: "strips" });
    this.node = h("div", { class: "map" }, this.tabs, this.strips);
    this.lanes = new Map(); // subtask id -> {tab, strip, shots: [], pendingCapture, steps}
    this.previews = new Map(); // "subtask:step" -> preview
    this.chosen = null; // the tab a person picked (else the one that moved last)
    this.current = null;
    this.lightbox = h("dialog", { class: "lightbox", onclick: () => this.lightbox.close() });
    this.node.append(this.lightbox);
  }

  setPlan(subtasks) {
    for (const subtask of subtasks) this._lane(subtask.id, subtask);
  }

  _lane(id, subtask) {
    let lane = this.lanes.get(id);
    if (lane) return lane;
    const label = subtask ? `${subtask.app_label} · ${subtask.search_term || "no search"}` : id;
    const tab = h("button", { class: "tab", role: "tab", dataset: { subtask: id },
      onclick: () => { this.chosen = id; this._show(id); } }, label, h("span", { class: "count" }, ""));
    const strip = h("div", { class: "strip", role: "tabpanel", dataset: { subtask: id }, hidden: true },
      h("p", { class: "muted empty" }, "no screen yet"));
    lane = { tab, strip, shots: [], pendingCapture: false };
    this.lanes.set(id, lane);
    this.tabs.append(tab);
    this.strips.append(strip);
    if (!this.current) this._show(id);
    return lane;
  }

  _show(id) {
    for (const [key, lane] of this.lanes) {
      lane.tab.classList.toggle("active", key === id);
      lane.tab.setAttribute("aria-selected", key === id ? "true" : "false");
      lane.strip.hidden = key !== id;
    }
  }

  addPreview(event) {
    this.previews.set(`${event.subtask_id}:${event.preview.step}`, event.preview);
  }

  addStep(event) {
    const step = event.step;
    const lane = this._lane(event.subtask_id);
    const name = screenName(step.screen_key);
    if (!name) return;
    if (!lane.shots.length) clear(lane.strip);
    const point = this._tapPoint(event.subtask_id, step);
    const size = this.deviceSize();
    const image = h("img", { src: `/runs/${this.runId}/screens/${event.subtask_id}/${name}?width=180`,
      alt: `step ${step.step}`, loading: "lazy" });
    const shot = h("figure", { class: "shot", dataset: { step: step.step, kind: step.policy === "user" ? "user" : "auto" },
      onclick: () => this._open(event.subtask_id, name) },
    h("div", { class: "thumb" }, image,
      point ? h("span", { class: "tap", style: { left: `${(100 * point.x) / size.width}%`, top: `${(100 * point.y) / size.height}%` } }) : null),
    h("figcaption", {}, h("b", {}, step.policy === "user" ? "person" : `${step.step}`), " ", describe(step, event.message)));
    if (step.intervention || step.policy === "user") shot.classList.add("intervened");
    if (lane.pendingCapture) { shot.classList.add("captured"); lane.pendingCapture = false; }
    lane.shots.push(shot);
    lane.strip.append(shot);
    lane.tab.querySelector(".count").textContent = ` ${lane.shots.length}`;
    this._markCurrent(event.subtask_id);
    if (!this.chosen) this._show(event.subtask_id);
    shot.scrollIntoView({ block: "nearest", inline: "end" });
  }

  addCapture(event) {
    const lane = this._lane(event.subtask_id);
    // The capture is of the screen the next step looks at (the loop records a step after it).
    lane.pendingCapture = true;
    lane.captures = (lane.captures || 0) + 1;
  }

  finish(subtaskId) {
    const lane = this.lanes.get(subtaskId);
    if (lane && lane.pendingCapture && lane.shots.length) {
      lane.shots[lane.shots.length - 1].classList.add("captured");
      lane.pendingCapture = false;
    }
    if (this.current === subtaskId) this._markCurrent(null);
  }

  _markCurrent(subtaskId) {
    this.current = subtaskId;
    this.node.querySelectorAll(".shot.current").forEach((s) => s.classList.remove("current"));
    const lane = subtaskId && this.lanes.get(subtaskId);
    if (lane && lane.shots.length) lane.shots[lane.shots.length - 1].classList.add("current");
  }

  _tapPoint(subtaskId, step) {
    const action = step.action;
    if (!action || !["tap", "long_press", "input"].includes(action.kind)) {
      return action && action.kind === "swipe" ? action.start : null;
    }
    if (action.point) return action.point;
    const preview = this.previews.get(`${subtaskId}:${step.step}`);
    if (preview && preview.box) {
      const b = preview.box;
      return { x: (b.left + b.right) / 2, y: (b.top + b.bottom) / 2 };
    }
    return null;
  }

  _open(subtaskId, name) {
    clear(this.lightbox, h("img", { src: `/runs/${this.runId}/screens/${subtaskId}/${name}`, alt: name }));
    this.lightbox.showModal();
  }
}
