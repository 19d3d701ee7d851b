// The farm: every phone with its state and the app in front, and the pause queue across all runs.
// A phone that is down (its worker stopped beating, or the phone stopped answering) shows as
// down with the reason instead of a screen, and the queue offers no take over on it.
import { api } from "./api.js";
import { onPauses, pauses } from "./alerts.js";
import { clear, duration, h, pill, showError } from "./ui.js";

const CARD_FPS = 2; // a card's live screen: a few frames a second, only while the card is on screen

// A card's screen, live: frames from the phone's live view while the card is visible and the
// phone's worker is alive (a dead phone's last frame stays).
function liveCard(serial, image, card) {
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
  seen.observe(card); // the card, not the image: a down phone's image is hidden, and a hidden one never intersects
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
  const cards = new Map(); // serial -> {node, image, down, info}
  const down = new Map(); // serial -> why it is down, from the last look at the phones

  function isDown(device) {
    return !device.heartbeat_alive || device.state === "offline" || device.state === "quarantined";
  }
  page.append(
    h("section", { class: "card" }, h("h1", {}, "Waiting for a person"),
      h("p", { class: "muted" }, "Every pause on the farm, oldest first. Take over opens the run with that phone in your hands."),
      queue),
    h("section", { class: "card" }, h("h1", {}, "Phones"), phones));

  function renderQueue(list) {
    // The server leaves pauses on down phones out; a phone seen down since is left out here too.
    const open = list.filter((p) => !down.has(p.entry.serial));
    clear(queue, open.length ? open.map((p) => h("li", { class: "pause", dataset: { serial: p.entry.serial } },
      h("div", { class: "what" }, h("strong", {}, p.entry.app_label), " ", pill(p.entry.category || "decision", "warn"),
        h("div", {}, p.entry.reason),
        h("div", { class: "muted" }, `“${p.entry.question}” · phone ${p.entry.serial} · waiting ${duration(p.waited_s)}`)),
      h("a", { class: "button primary", href: `#/runs/${p.entry.run_id}?takeover=${encodeURIComponent(p.entry.serial)}` }, "Take over")))
      : h("li", { class: "muted empty" }, "Nothing waits for a person."));
  }

  function card(device) {
    let entry = cards.get(device.serial);
    if (!entry) {
      const image = h("img", { alt: `screen of ${device.serial}`, hidden: true });
      const gone = h("div", { class: "down-label", hidden: true });
      const info = h("div", { class: "info" });
      image.addEventListener("load", () => { image.hidden = !gone.hidden; }); // the first live frame shows it
      const node = h("article", { class: "phone", dataset: { serial: device.serial } }, image, gone, info);
      entry = { node, image, down: gone, info, live: liveCard(device.serial, image, node) };
      cards.set(device.serial, entry);
    }
    const isdown = isDown(device);
    entry.node.className = `phone ${device.state}${isdown ? " down" : ""}`;
    entry.image.hidden = isdown || !entry.image.src;
    entry.down.hidden = !isdown;
    if (isdown) clear(entry.down, h("strong", {}, "phone down"), h("div", {}, device.reason || "its worker does not answer"));
    entry.live.setAlive(!isdown && device.heartbeat_alive);
    const front = device.current_app ? `in front: ${device.current_app}`
      : device.current_package && !device.current_package.includes("launcher") ? `in front: ${device.current_package}` : "home screen";
    clear(entry.info,
      h("div", { class: "row spread" }, h("strong", {}, device.serial), pill(device.state)),
      h("div", { class: "muted" }, `${device.model} · ${device.width}×${device.height} · ${device.apps} apps`),
      isdown ? null : h("div", {}, front),
      device.lease_run ? h("div", {}, "run ", h("a", { href: `#/runs/${device.lease_run}`, title: device.lease_run }, short(device.lease_run))) : null,
      device.takeover_run ? h("div", { class: "warn" }, "a person drives it") : null,
      isdown ? h("div", { class: "muted" }, "the farm restarts its worker; its sub-tasks go to other phones with the app") : null);
    return entry.node;
  }

  async function refresh() {
    try {
      const devices = await api.get("/devices");
      down.clear();
      devices.filter(isDown).forEach((device) => down.set(device.serial, device.reason));
      renderQueue(pauses.list);
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
