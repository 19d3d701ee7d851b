// The app maps: #/maps lists the apps explored on the farm; #/maps/<package>?version= draws one.
import { api } from "./api.js";
import { AppMapView } from "./appmap.js";
import { clear, clock, h, pill, showError } from "./ui.js";

function built(iso) {
  return iso ? `${new Date(iso).toLocaleDateString()} ${clock(iso)}` : "";
}

function mapLink(summary) {
  return `#/maps/${encodeURIComponent(summary.package)}?version=${encodeURIComponent(summary.version)}`;
}

function state(summary) {
  return summary.complete ? pill("complete", "ok") : pill("under way", "warn");
}

export function showMaps(page) {
  const body = h("tbody", { id: "maps" });
  page.append(h("section", { class: "card" }, h("h1", {}, "App maps"),
    h("p", { class: "muted" }, "Each app explored once on the farm: its screens, what each button opened, where the walls are. ",
      "`droidretriever map build APP` makes or resumes one."),
    h("table", { class: "maps" }, h("thead", {}, h("tr", {},
      ["app", "package", "version", "screens", "walls", "built", "state", "stopped"].map((name) => h("th", {}, name)))), body)));
  api.get("/maps").then((maps) => {
    clear(body, maps.length ? maps.map((m) => h("tr", { dataset: { package: m.package } },
      h("td", {}, h("a", { href: mapLink(m) }, m.label || m.package)),
      h("td", { class: "muted" }, m.package),
      h("td", {}, m.version || "unknown"),
      h("td", {}, String(m.screens)),
      h("td", {}, m.walls ? h("span", { class: "warn" }, String(m.walls)) : "0"),
      h("td", { class: "muted" }, built(m.built_at)),
      h("td", {}, state(m)),
      h("td", { class: "muted" }, m.stopped)))
      : h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No maps yet: `droidretriever map build` explores the farm's apps.")));
  }).catch(showError);
  return null;
}

export function showAppMap(page, packageName, params) {
  const version = params.get("version");
  const head = h("section", { class: "card" }, h("p", { class: "muted" }, "loading the map…"));
  const holder = h("section", { class: "card map-card" });
  page.append(head, holder);
  const query = version === null ? "" : `?version=${encodeURIComponent(version)}`;
  api.get(`/maps/${encodeURIComponent(packageName)}${query}`).then((appMap) => {
    const view = new AppMapView(appMap);
    const walls = Object.values(appMap.screens).filter((s) => s.wall).length;
    const stats = appMap.stats;
    clear(head,
      h("div", { class: "row spread" }, h("h1", { id: "map-title" }, appMap.label || appMap.package), appMap.complete ? pill("complete", "ok") : pill("under way", "warn")),
      h("div", { class: "muted" }, `${appMap.package} · version ${appMap.version || "unknown"} · built ${built(appMap.built_at)}`,
        appMap.device ? ` on ${appMap.device}` : ""),
      h("div", { id: "map-stats" }, `${Object.keys(appMap.screens).length} screens, ${walls} wall(s), ${stats.actions} actions in ${Math.round(stats.seconds)} s`,
        stats.stopped ? ` (${stats.stopped})` : "", `; probe term: ${appMap.probe || "none"}`),
      h("div", { class: "legend muted small" },
        h("span", { class: "key wall" }, "wall"), h("span", { class: "key search" }, "reached only through search"),
        h("span", { class: "key like" }, "+N like it: a template"), " Click a screen for its texts, lists and elements.",
        h("label", { class: "toggle" }, h("input", { type: "checkbox", id: "back-links",
          onchange: (event) => view.showBackLinks(event.target.checked) }), " links back")),
      h("div", { class: "muted small" }, h("a", { href: "#/maps" }, "← all maps")));
    clear(holder, view.node);
    view.select(appMap.start);
  }).catch((error) => {
    clear(head, h("h1", {}, packageName), h("p", { class: "warn", id: "map-error" }, error.message),
      error.hint ? h("p", { class: "muted" }, error.hint) : null, h("a", { href: "#/maps" }, "← all maps"));
    holder.hidden = true;
  });
  return null;
}

// The run page's panel: for each app whose navigation followed a map ("app map try N:" LOG
// events), that map with the try's targets outlined and the screens it followed numbered.
export class RunMapPanel {
  constructor() {
    this.tabs = h("div", { class: "tabs", role: "tablist" });
    this.line = h("p", { class: "muted small", id: "run-map-line" });
    this.tries = h("div", { class: "chips" });
    this.body = h("div", { class: "run-map-body" });
    this.node = h("section", { class: "card run-map", id: "run-map", hidden: true },
      h("h2", {}, "App map"), this.tabs, this.tries, this.line,
      h("div", { class: "legend muted small" }, h("span", { class: "key target" }, "target"),
        h("span", { class: "key followed" }, "1 2 3: the screens the try went through, in order"),
        h("span", { class: "key wall" }, "wall"), h("span", { class: "key search" }, "reached only through search")),
      this.body);
    this.apps = new Map(); // package -> {tab, trails: [{attempt, line, trail}], view, chosen}
    this.current = null;
  }

  // "app map try 2: targets 'Orders'; followed 'Home' > 'Me'\n{json}": true when it was one.
  add(event) {
    const message = event.message || "";
    const found = /^app map try (\d+): ?([^\n]*)\n([\s\S]+)$/.exec(message);
    if (!found) return false;
    let trail;
    try {
      trail = JSON.parse(found[3]);
    } catch (error) {
      console.warn("an app map event without its trail", error);
      return true;
    }
    if (!trail || typeof trail.package !== "string") return true;
    this.node.hidden = false;
    let app = this.apps.get(trail.package);
    if (!app) {
      app = { tab: h("button", { class: "tab", role: "tab", type: "button", onclick: () => this._show(trail.package) }, trail.package),
        trails: [], view: null, chosen: null, loading: null, version: trail.version };
      this.apps.set(trail.package, app);
      this.tabs.append(app.tab);
    }
    app.trails.push({ attempt: Number(found[1]), line: found[2], trail, subtask: event.subtask_id });
    app.chosen = app.trails.length - 1;
    if (!this.current || this.current === trail.package) this._show(trail.package);
    return true;
  }

  async _show(packageName) {
    this.current = packageName;
    const app = this.apps.get(packageName);
    for (const [name, other] of this.apps) other.tab.classList.toggle("active", name === packageName);
    const chosen = app.trails[app.chosen];
    clear(this.tries, app.trails.length > 1 ? app.trails.map((t, i) => h("button", { type: "button",
      class: `chip ${i === app.chosen ? "on" : ""}`, onclick: () => { app.chosen = i; this._show(packageName); } }, `try ${t.attempt}`)) : null);
    this.line.textContent = `try ${chosen.attempt}: ${chosen.line}`;
    if (!app.view && !app.loading) {
      const query = `?version=${encodeURIComponent(chosen.trail.version)}`;
      app.loading = api.get(`/maps/${encodeURIComponent(packageName)}${query}`).then((appMap) => {
        app.view = new AppMapView(appMap, { thumbWidth: 180 });
        if (appMap.label) app.tab.textContent = appMap.label;
      }).catch((error) => { app.error = error; });
    }
    await app.loading;
    if (this.current !== packageName) return;
    if (app.error) {
      clear(this.body, h("p", { class: "warn" }, `${app.error.message}${app.error.hint ? ` — ${app.error.hint}` : ""}`));
      return;
    }
    clear(this.body, app.view.node);
    app.view.showTrail(app.trails[app.chosen].trail);
  }
}
