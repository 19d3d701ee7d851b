// The farm: every phone with its state and the app in front, and the pause queue across all runs.
import { api } from "./api.js";
import { onPauses, pauses } from "./alerts.js";
import { clear, duration, h, pill, showError } from "./ui.js";

export function showFarm(page) {
  const phones = h("div", { class: "phones", id: "phones" });
  const queue = h("ol", { class: "queue", id: "pause-queue" });
  page.append(
    h("section", { class: "card" }, h("h1", {}, "Waiting for a person"),
      h("p", { class: "muted" }, "Every pause on the farm, oldest first. Take over opens the run with that phone in your hands."),
      queue),
    h("section", { class: "card" }, h("h1", {}, "Phones"), phones));

  function renderQueue(list) {
    clear(queue, list.length ? list.map((p) => h("li", { class: "pause" },
      h("div", { class: "what" }, h("strong", {}, p.entry.app_label), " ", pill(p.entry.category || "decision", "warn"),
        h("div", {}, p.entry.reason), h("div", { class: "muted" }, `“${p.entry.question}” · phone ${p.entry.serial} · waiting ${duration(p.waited_s)}`)),
      h("a", { class: "button primary", href: `#/runs/${p.entry.run_id}?takeover=${encodeURIComponent(p.entry.serial)}` }, "Take over")))
      : h("li", { class: "muted empty" }, "Nothing waits for a person."));
  }

  async function refresh() {
    try {
      const devices = await api.get("/devices");
      clear(phones, devices.length ? devices.map((d) => h("article", { class: `phone ${d.state}` },
        h("img", { src: `/devices/${encodeURIComponent(d.serial)}/screen?t=${Date.now()}`, alt: `screen of ${d.serial}`, loading: "lazy" }),
        h("div", {}, h("strong", {}, d.serial), " ", pill(d.state)),
        h("div", { class: "muted" }, d.model, ` · ${d.width}×${d.height} · ${d.apps} apps`),
        h("div", {}, d.current_app ? `in front: ${d.current_app}` : h("span", { class: "muted" }, "home screen")),
        d.lease_run ? h("div", {}, "run ", h("a", { href: `#/runs/${d.lease_run}` }, d.lease_run)) : null,
        d.takeover_run ? h("div", { class: "warn" }, "a person drives it") : null,
        d.reason ? h("div", { class: "muted" }, d.reason) : null))
        : h("p", { class: "muted" }, "No phones: `droidretriever up` starts virtual phones."));
    } catch (error) {
      showError(error);
    }
  }

  renderQueue(pauses.list);
  const stop = onPauses(renderQueue);
  refresh();
  const timer = setInterval(refresh, 3000);
  return () => { clearInterval(timer); stop(); };
}
