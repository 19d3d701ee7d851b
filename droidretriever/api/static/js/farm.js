// The farm: every phone with its state and the app in front, and the pause queue across all runs.
import { api } from "./api.js";
import { onPauses, pauses } from "./alerts.js";
import { clear, duration, h, pill, showError } from "./ui.js";

const CARD_FPS = 2; // a card's live screen: a few frames a second, only while the card is on screen

// A card's screen, live: frames from the phone's live view while the card is visible and the
// phone's worker is alive (a dead phone's last frame stays).
function liveCard(serial, image) {
  let socket = null;
  let url = null;
  let visible = false;
  let alive = true;
  const open = () => {
    if (socket || !visible || !alive) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${scheme}://${location.host}/devices/${encodeURIComponent(serial)}/live?fps=${CARD_FPS}`);
    socket.binaryType = "blob";
    socket.onmessage = (message) => {
      if (typeof message.data === "string") return; // the frame's header: a card needs none
      if (url) URL.revokeObjectURL(url);
      url = URL.createObjectURL(message.data);
      image.src = url;
    };
    socket.onclose = () => { socket = null; };
  };
  const close = () => { if (socket) { socket.onclose = null; socket.close(); socket = null; } };
  const seen = new IntersectionObserver((entries) => {
    visible = entries.some((e) => e.isIntersecting);
    if (visible) open(); else close();
  });
  seen.observe(image);
  return {
    setAlive(now) { alive = now; if (alive) open(); else close(); },
    stop() { seen.disconnect(); close(); },
  };
}

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
      entry = { node: h("article", { class: "phone", dataset: { serial: device.serial } }, image, info), image, info,
        live: liveCard(device.serial, image) };
      cards.set(device.serial, entry);
    }
    entry.node.className = `phone ${device.state}`;
    entry.live.setAlive(device.heartbeat_alive);
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
  return () => { clearInterval(timer); stop(); for (const entry of cards.values()) entry.live.stop(); };
}
