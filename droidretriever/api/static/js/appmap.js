// An app map drawn as a graph: a column per depth from the app's first page, each screen as its
// thumbnail and title, an arrow for each screen an element opened (labelled with the element).
// Red frame: a wall (login, payment, risk); dashed: reached only through the app's search;
// "+N like it": a template (one product page stands for its siblings). Click a screen for its
// texts, lists and elements. A run's trail outlines its targets and numbers the screens followed.
// Everything in a map is an app's screen text: it goes into the page as text, never as markup.
import { clear, h, svg } from "./ui.js";

const NODE_W = 112;
const THUMB_H = 180;
const NODE_H = THUMB_H + 44;
const GAP_X = 160;
const GAP_Y = 24;
const PAD = 18;
let instances = 0; // arrowhead ids must be unique in the page

export function shorten(text, length = 22) {
  const flat = String(text || "").replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

export function screenTitle(screen) {
  return screen ? screen.title || `${screen.kind} ${screen.id.slice(0, 6)}` : "?";
}

function byPath(a, b) {
  const n = Math.min(a.path.length, b.path.length);
  for (let i = 0; i < n; i += 1) if (a.path[i] !== b.path[i]) return a.path[i] - b.path[i];
  return a.path.length - b.path.length || screenTitle(a).localeCompare(screenTitle(b));
}

// Columns by depth; within one, screens in the order of their path from the start (children
// stay near their parent), the start first.
export function layout(appMap) {
  const screens = Object.values(appMap.screens);
  const columns = [];
  for (const screen of screens) (columns[screen.depth] ||= []).push(screen);
  const at = new Map();
  let rows = 0;
  columns.forEach((column, depth) => {
    if (!column) return;
    column.sort((a, b) => (a.id === appMap.start ? -1 : b.id === appMap.start ? 1 : byPath(a, b)));
    column.forEach((screen, row) => at.set(screen.id, { x: PAD + depth * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y) }));
    rows = Math.max(rows, column.length);
  });
  return { at, width: 2 * PAD + columns.length * NODE_W + Math.max(0, columns.length - 1) * GAP_X,
    height: 2 * PAD + rows * NODE_H + Math.max(0, rows - 1) * GAP_Y };
}

// One edge per (screen, screen it opened): several elements to one screen share it ("+N").
export function transitions(appMap) {
  const edges = new Map();
  for (const screen of Object.values(appMap.screens)) {
    screen.elements.forEach((element, index) => {
      const target = appMap.screens[element.leads_to];
      if (element.effect !== "opens" || !target || target.id === screen.id) return;
      const key = `${screen.id}>${target.id}`;
      if (!edges.has(key)) edges.set(key, { from: screen, to: target, elements: [], forward: target.depth > screen.depth });
      edges.get(key).elements.push({ element, index });
    });
  }
  return [...edges.values()];
}

function anchor(element) {
  return element.label || element.resource_id || element.class_name || "(unlabelled)";
}

export function effectText(element, appMap) {
  const note = element.note ? `“${shorten(element.note, 120)}”` : "";
  switch (element.effect) {
    case "opens": return appMap.screens[element.leads_to] ? `opens ${screenTitle(appMap.screens[element.leads_to])}` : "opens a screen not on the map";
    case "same": return note ? `shows ${note}` : "nothing changed";
    case "dialog": return note ? `shows ${note} (a dialog)` : "a dialog";
    case "leaves": return "leaves the app";
    case "refused": return `refused: ${element.note || "the risk gate said no"}`;
    case "switch": return "switch: not tried (a setting is the person's)";
    default: return "untried";
  }
}

export class AppMapView {
  constructor(appMap, { thumbWidth = 224 } = {}) {
    this.map = appMap;
    this.id = `appmap-${(instances += 1)}`;
    this.thumbWidth = thumbWidth;
    this.nodes = new Map(); // screen id -> figure
    this.edges = []; // {edge, path, label}
    this.canvas = h("div", { class: "appmap-canvas" });
    this.scroller = h("div", { class: "appmap-scroll" }, this.canvas);
    this.detail = h("aside", { class: "appmap-detail", hidden: true });
    this.node = h("div", { class: "appmap" }, this.scroller, this.detail);
    this._draw();
  }

  screenshot(screenId, width) {
    const base = `/maps/${encodeURIComponent(this.map.package)}/screens/${encodeURIComponent(screenId)}`;
    const query = new URLSearchParams({ version: this.map.version });
    if (width) query.set("width", String(width));
    return `${base}?${query}`;
  }

  _draw() {
    const { at, width, height } = layout(this.map);
    Object.assign(this.canvas.style, { width: `${width}px`, height: `${height}px` });
    const marker = (id, colour) => svg("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 11, markerHeight: 11,
      markerUnits: "userSpaceOnUse", orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }));
    const lines = svg("svg", { class: "appmap-lines", width, height, viewBox: `0 0 ${width} ${height}`, "aria-hidden": "true" },
      svg("defs", {}, marker(`${this.id}-head`, "#64748b"), marker(`${this.id}-walked`, "#2563eb")));
    const incoming = new Map(); // labels into one screen stack upwards
    for (const edge of transitions(this.map)) {
      const from = at.get(edge.from.id);
      const to = at.get(edge.to.id);
      const x1 = from.x + NODE_W;
      const y1 = from.y + THUMB_H / 2;
      const x2 = to.x;
      const y2 = to.y + THUMB_H / 2;
      const bend = edge.forward ? Math.max(40, (x2 - x1) / 2) : 90;
      const path = svg("path", { class: `edge ${edge.forward ? "forward" : "back"}`, fill: "none",
        d: `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2 - 2},${y2}`, "marker-end": `url(#${this.id}-head)`,
        dataset: { from: edge.from.id, to: edge.to.id } });
      const first = anchor(edge.elements[0].element);
      const more = edge.elements.length > 1 ? ` +${edge.elements.length - 1}` : "";
      let label = null;
      if (edge.forward) {
        // Just before the arrowhead: a screen is usually opened from one place, so labels do not pile up.
        const k = incoming.get(edge.to.id) || 0;
        incoming.set(edge.to.id, k + 1);
        label = svg("g", {}, svg("title", {}, edge.elements.map((e) => anchor(e.element)).join(" · ")),
          svg("text", { class: "edge-label", x: x2 - 8, y: y2 - 6 - 14 * k, "text-anchor": "end" }, `${shorten(first, 20)}${more}`));
      }
      lines.append(path);
      this.edges.push({ edge, path, label });
    }
    for (const { label } of this.edges) if (label) lines.append(label); // above every line
    this.canvas.append(lines);
    for (const screen of Object.values(this.map.screens)) {
      const spot = at.get(screen.id);
      const node = this._screenNode(screen);
      Object.assign(node.style, { left: `${spot.x}px`, top: `${spot.y}px`, width: `${NODE_W}px` });
      this.nodes.set(screen.id, node);
      this.canvas.append(node);
    }
  }

  _screenNode(screen) {
    const classes = ["mscreen"];
    if (screen.wall) classes.push("wall");
    if (screen.behind_search) classes.push("search");
    if (screen.id === this.map.start) classes.push("start");
    const title = screenTitle(screen);
    const thumb = h("div", { class: "mthumb", style: { height: `${THUMB_H}px` } },
      h("div", { class: "placeholder" }, title));
    if (screen.screenshot_key) {
      const image = h("img", { alt: title, loading: "lazy", src: this.screenshot(screen.id, this.thumbWidth) });
      image.addEventListener("error", () => image.remove()); // the placeholder stays
      thumb.append(image);
    }
    const marks = [];
    if (screen.id === this.map.start) marks.push(h("span", { class: "mark start" }, "start"));
    if (screen.wall) marks.push(h("span", { class: "mark wall", title: screen.wall_reason }, `wall: ${screen.wall}`));
    if (screen.samples.length) marks.push(h("span", { class: "mark like", title: screen.samples.join(" · ") }, `+${screen.samples.length} like it`));
    else if (screen.template) marks.push(h("span", { class: "mark like" }, "template"));
    if (screen.behind_search) marks.push(h("span", { class: "mark search" }, "via search"));
    return h("figure", { class: classes.join(" "), dataset: { screen: screen.id }, tabindex: "0", role: "button",
      "aria-label": title, onclick: () => this.select(screen.id),
      onkeydown: (event) => { if (event.key === "Enter") this.select(screen.id); } },
    thumb, h("span", { class: "order" }), h("div", { class: "marks" }, marks),
    h("figcaption", { title }, h("b", {}, shorten(title, 26)), h("span", { class: "muted" }, screen.kind.replaceAll("_", " "))));
  }

  select(screenId) {
    const screen = this.map.screens[screenId];
    if (!screen) return;
    this.nodes.forEach((node, id) => node.classList.toggle("selected", id === screenId));
    this.detail.hidden = false;
    const facts = [screen.kind.replaceAll("_", " "), `depth ${screen.depth}`,
      screen.activity ? screen.activity.split(".").pop() : null, `${screen.scroll_pages} page(s) scrolled`].filter(Boolean).join(" · ");
    const texts = screen.texts.slice(0, 60);
    clear(this.detail,
      h("div", { class: "row spread" }, h("h3", {}, screenTitle(screen)),
        h("button", { class: "ghost small", type: "button", "aria-label": "close", onclick: () => this.unselect() }, "×")),
      h("div", { class: "muted small" }, facts),
      screen.wall ? h("p", { class: "wall-note" }, `Wall (${screen.wall}): ${screen.wall_reason || "the explorer stopped here"}. What lies behind it is not on the map.`) : null,
      screen.behind_search ? h("p", { class: "muted small" }, `Reached only through the app's search (the probe term ${this.map.probe ? `“${this.map.probe}”` : ""}).`) : null,
      screen.samples.length ? h("p", { class: "small" }, `+${screen.samples.length} like it: `, screen.samples.join(" · ")) : null,
      screen.screenshot_key ? h("a", { href: this.screenshot(screen.id), target: "_blank", rel: "noopener" },
        h("img", { class: "mshot", src: this.screenshot(screen.id, 360), alt: screenTitle(screen) })) : null,
      h("h4", {}, `Texts (${screen.texts.length})`),
      texts.length ? h("ul", { class: "mtexts" }, texts.map((t) => h("li", {}, t)),
        screen.texts.length > texts.length ? h("li", { class: "muted" }, `… ${screen.texts.length - texts.length} more`) : null)
        : h("p", { class: "muted small" }, "none"),
      screen.lists.length ? [h("h4", {}, `Lists (${screen.lists.length})`), h("ul", { class: "mlists" }, screen.lists.map((list) =>
        h("li", {}, h("b", {}, `${list.items} item(s)`), list.samples.length ? h("ul", {}, list.samples.map((s) => h("li", {}, s))) : null)))] : null,
      h("h4", {}, `Elements (${screen.elements.length})`),
      screen.elements.length ? h("table", { class: "melements" }, h("tbody", {}, screen.elements.map((element) => {
        const target = element.effect === "opens" ? this.map.screens[element.leads_to] : null;
        return h("tr", { class: `effect ${element.effect}`, dataset: { effect: element.effect } },
          h("td", {}, anchor(element), element.search ? h("span", { class: "muted" }, " (search field)") : null,
            element.scrolls ? h("span", { class: "muted" }, ` ↓${element.scrolls}`) : null),
          h("td", {}, target ? h("button", { class: "link", type: "button", onclick: () => this.select(target.id) }, effectText(element, this.map))
            : effectText(element, this.map)));
      }))) : h("p", { class: "muted small" }, "none"));
    const node = this.nodes.get(screenId);
    if (node) node.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  unselect() {
    this.detail.hidden = true;
    this.nodes.forEach((node) => node.classList.remove("selected"));
  }

  showBackLinks(on) {
    this.node.classList.toggle("with-back", on);
  }

  // A run's use of the map: its targets outlined, the screens it followed numbered in order and
  // the arrows between them drawn in blue.
  showTrail(trail) {
    const targets = new Set(trail ? trail.targets : []);
    const followed = trail ? trail.followed : [];
    const order = new Map();
    followed.forEach((id, i) => order.set(id, [...(order.get(id) || []), i + 1]));
    this.nodes.forEach((node, id) => {
      node.classList.toggle("target", targets.has(id));
      node.classList.toggle("followed", order.has(id));
      const badge = node.querySelector(".order");
      badge.textContent = order.has(id) ? order.get(id).join("·") : "";
    });
    const walked = new Set(followed.slice(1).map((id, i) => `${followed[i]}>${id}`));
    for (const { edge, path } of this.edges) {
      const on = walked.has(`${edge.from.id}>${edge.to.id}`);
      path.classList.toggle("walked", on);
      path.setAttribute("marker-end", `url(#${this.id}-${on ? "walked" : "head"})`);
    }
    const first = this.nodes.get(followed[0]) || this.nodes.get([...targets][0]);
    if (first) first.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
}
