// The farm: every phone with its state and the app in front, and the pause queue across all runs.
import { api } from "./api.js";
import { onPauses, pauses } from "./alerts.js";
import { clear, duration, h, pill, showError } from "./ui.js";

function short(runId) {
  return runId.length > 14 ? `…${runId.slice(-6)}` : runId;
}

export function showFarm(page) {
  const phones = h("div", { class: "phones", id: "phones" }, h("p", { class: "muted" }, "asking the phones…"));
  const queue = h("ol", { class: "queue", id: "pause-queue" });
  const cards = new Map(); // serial -> {node, image, info}
  page.append(
    h("section", { class: "card" }, h("h1", {}, "Waiting for a person"),
      h("p", { class: "muted" }, "Every pause on the farm, oldest first. Take over opens the run with that phone in your hands."),
      queue),
    h("section", { class: "card" }, h("h1", {}, "Phones"), phones));

  function renderQueue(list) {
    clear(queue, list.length ? list.map((p) => h("li", { class: "pause" },
      h("div", { class: "what" }, h("strong", {}, p.entry.app_label), " ", pill(p.entry.category || "decision", "warn"),
        h("div", {}, p.entry.reason),
        h("div", { class: "muted" }, `“${p.entry.question}” · phone ${p.entry.serial} · waiting ${duration(p.waited_s)}`)),
      h("a", { class: "button primary", href: `#/runs/${p.entry.run_id}?takeover=${encodeURIComponent(p.entry.serial)}` }, "Take over")))
      : h("li", { class: "muted empty" }, "Nothing waits for a person."));
  }

  function card(device) {
    let entry = cards.get(device.serial);
    if (!entry) {
      const image = h("img", { alt: `screen of ${device.serial}` });
      const info = h("div", { class: "info" });
      entry = { node: h("article", { class: "phone", dataset: { serial: device.serial } }, image, info), image, info };
      cards.set(device.serial, entry);
    }
    entry.node.className = `phone ${device.state}`;
    if (device.heartbeat_alive) {
      const next = `/devices/${encodeURIComponent(device.serial)}/screen?width=240&t=${Date.now()}`;
      const loader = new Image();
      loader.onload = () => { entry.image.src = next; }; // swap when loaded: no flicker
      loader.src = next;
    }
    const front = device.current_app ? `in front: ${device.current_app}`
      : device.current_package && !device.current_package.includes("launcher") ? `in front: ${device.current_package}` : "home screen";
    clear(entry.info,
      h("div", { class: "row spread" }, h("strong", {}, device.serial), pill(device.state)),
      h("div", { class: "muted" }, `${device.model} · ${device.width}×${device.height} · ${device.apps} apps`),
      h("div", {}, front),
      device.lease_run ? h("div", {}, "run ", h("a", { href: `#/runs/${device.lease_run}`, title: device.lease_run }, short(device.lease_run))) : null,
      device.takeover_run ? h("div", { class: "warn" }, "a person drives it") : null,
      device.state === "quarantined" || device.state === "offline" ? h("div", { class: "muted" }, device.reason) : null);
    return entry.node;
  }

  async function refresh() {
    try {
      const devices = await api.get("/devices");
      clear(phones, devices.length ? devices.map(card)
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
