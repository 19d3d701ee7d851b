// A new pause anywhere on the farm: a browser notification, a chime made in the page, a badge.
import { api, follow } from "./api.js";
import { toast } from "./ui.js";

let audio = null;
const listeners = new Set();
const open = new Map(); // flow run id -> the toast of a pause still waiting
export const pauses = { list: [] };

// A two-note chime synthesised with WebAudio: no sound file, nothing fetched.
export function chime() {
  try {
    audio = audio || new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const now = audio.currentTime;
    [[880, 0], [1175, 0.16]].forEach(([frequency, delay]) => {
      const tone = audio.createOscillator();
      const level = audio.createGain();
      tone.type = "sine";
      tone.frequency.value = frequency;
      level.gain.setValueAtTime(0.0001, now + delay);
      level.gain.exponentialRampToValueAtTime(0.25, now + delay + 0.02);
      level.gain.exponentialRampToValueAtTime(0.0001, now + delay + 0.45);
      tone.connect(level).connect(audio.destination);
      tone.start(now + delay);
      tone.stop(now + delay + 0.5);
    });
  } catch (error) {
    console.warn("no sound:", error);
  }
}

// Browsers let a page ask for notifications and sound only after a click.
export async function enableAlerts() {
  audio = audio || new AudioContext();
  await audio.resume();
  if ("Notification" in window && Notification.permission === "default") {
    await Notification.requestPermission();
  }
  renderToggle();
}

function notify(entry) {
  const title = `${entry.app_label} needs you`;
  const body = `${entry.reason}\n${entry.question || entry.run_id} · phone ${entry.serial}`;
  if ("Notification" in window && Notification.permission === "granted") {
    const note = new Notification(title, { body, tag: entry.flow_run_id });
    note.onclick = () => { window.focus(); location.hash = `#/runs/${entry.run_id}`; };
  }
  chime();
  open.set(entry.flow_run_id, toast(`${title}: ${entry.reason}`, "warn", {
    timeout: 60000,
    action: { label: "take over", run: () => { location.hash = `#/runs/${entry.run_id}?takeover=${entry.serial}`; } },
  }));
}

// A pause someone answered or is answering: its toast has said what it had to say.
export function settled(entry) {
  const note = open.get(entry.flow_run_id);
  if (note) note.remove();
  open.delete(entry.flow_run_id);
}

function renderBadge() {
  const badge = document.getElementById("pause-badge");
  badge.textContent = pauses.list.length ? String(pauses.list.length) : "";
  badge.hidden = pauses.list.length === 0;
}

function renderToggle() {
  const button = document.getElementById("alerts");
  const on = "Notification" in window && Notification.permission === "granted" && audio && audio.state === "running";
  button.textContent = on ? "◉ alerts on" : "○ enable alerts";
  button.classList.toggle("on", Boolean(on));
}

export function onPauses(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

async function refresh() {
  try {
    pauses.list = await api.get("/pauses");
  } catch (error) {
    console.warn(error);
  }
  renderBadge();
  listeners.forEach((listener) => listener(pauses.list));
}

export function startAlerts() {
  document.getElementById("alerts").addEventListener("click", enableAlerts);
  renderToggle();
  refresh();
  follow("/pauses/events", () => {}, {
    events: {
      opened: (event) => { notify(event.entry); refresh(); },
      closed: (event) => { settled(event.entry); refresh(); },
    },
    onState: (state) => {
      document.getElementById("link-state").className = `dot ${state}`;
      document.getElementById("link-state").title = `live updates: ${state}`;
    },
  });
  setInterval(refresh, 15000); // waited times move on; entries of dead processes drop out
}
