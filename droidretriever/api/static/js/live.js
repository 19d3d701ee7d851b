// A phone's live screen: frames over a WebSocket drawn on a canvas, labelled with the phone's app,
// the planned action's box over it with a countdown banner placed where it never covers the box,
// and, in takeover, clicks that tap, drags that swipe, a press that long-presses.
import { api } from "./api.js";
import { h, showError, toast } from "./ui.js";

const TAP_SLOP_PX = 10; // a pointer that moved less than this (on screen) is a tap, not a swipe
const LONG_PRESS_MS = 550;

export class LiveScreen {
  constructor() {
    this.canvas = h("canvas", { class: "screen", width: 540, height: 1170, "aria-label": "live screen" });
    this.box = h("div", { class: "preview-box", hidden: true });
    this.finger = h("div", { class: "fingertip", hidden: true });
    this.banner = h("div", { class: "screen-banner", hidden: true });
    this.stats = h("div", { class: "live-stats muted", id: "live-stats" }, "no phone");
    this.label = h("div", { class: "screen-label", id: "live-phone" });
    this.frame = h("div", { class: "screen-frame" }, this.canvas, this.box, this.finger, this.banner);
    this.node = h("div", { class: "live" }, this.label, this.frame, this.stats);
    this.serial = null;
    this.size = { width: 1080, height: 2340 };
    this.metrics = { frames: [], taps: [], posts: [], lastFrame: null };
    this.pending = []; // inputs sent and not yet seen in a frame: {inputs, sentAt}
    this.takeover = false;
    this.header = null;
    this._bindPointer();
  }

  connect(serial) {
    if (serial === this.serial && this.socket && this.socket.readyState <= 1) return;
    this.disconnect();
    this.serial = serial;
    if (!serial) { this.stats.textContent = "no phone"; return; }
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const socket = new WebSocket(`${scheme}://${location.host}/devices/${encodeURIComponent(serial)}/live`);
    socket.binaryType = "blob";
    socket.onmessage = (message) => this._receive(message.data);
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.stats.textContent = `${serial}: live view closed (${event.code})`;
      setTimeout(() => { if (this.socket === socket) { this.socket = null; this.connect(serial); } }, 1500);
    };
    this.socket = socket;
    this.stats.textContent = `${serial}: connecting…`;
  }

  // What the person sees above the screen: which phone, with its app and sub-task.
  setLabel(...parts) {
    this.label.replaceChildren(...parts.flat().filter((p) => p !== null && p !== undefined && p !== false));
  }

  disconnect() {
    if (this.socket) { const socket = this.socket; this.socket = null; socket.close(); }
    this.serial = null;
  }

  // Frames are drawn in order, the newest wins: one that comes while another is being decoded
  // waits, and replaces any frame already waiting (dropped, never drawn late).
  async _receive(data) {
    if (typeof data === "string") { this.header = JSON.parse(data); return; }
    const header = this.header;
    this.header = null;
    if (this._drawing) { this._waiting = { data, header }; return; }
    this._drawing = true;
    try {
      for (let next = { data, header }; next; next = this._waiting, this._waiting = null) {
        await this._draw(next.data, next.header);
      }
    } finally {
      this._drawing = false;
    }
  }

  async _draw(data, header) {
    const bitmap = await createImageBitmap(data);
    if (this.canvas.width !== bitmap.width || this.canvas.height !== bitmap.height) {
      this.canvas.width = bitmap.width;
      this.canvas.height = bitmap.height;
    }
    this.canvas.getContext("2d").drawImage(bitmap, 0, 0);
    bitmap.close();
    const now = performance.now();
    if (header) {
      this.size = { width: header.width, height: header.height };
      this.metrics.lastFrame = header;
      this.metrics.lastShown = { inputs: header.inputs, at: now };
      this.metrics.frames.push(now);
      if (this.metrics.frames.length > 300) this.metrics.frames.shift();
      const shown = this.pending.filter((p) => header.inputs >= p.inputs);
      this.pending = this.pending.filter((p) => header.inputs < p.inputs);
      for (const p of shown) this.metrics.taps.push(now - p.sentAt);
    }
    this._renderStats(now);
  }

  fps(now = performance.now()) {
    const recent = this.metrics.frames.filter((t) => now - t <= 2000);
    return recent.length / 2;
  }

  _renderStats(now) {
    const taps = this.metrics.taps;
    const last = taps.length ? ` · tap→frame ${Math.round(taps[taps.length - 1])} ms` : "";
    this.stats.textContent = `${this.serial} · ${this.fps(now).toFixed(1)} frames/s${last}`;
  }

  // The next planned action: its element's box and the instruction, with the confirm window's
  // countdown and a cancel button while it runs.
  showPreview(preview, onCancel) {
    clearInterval(this._countdown);
    if (!preview) { this.box.hidden = true; this.banner.hidden = true; return; }
    if (preview.box) {
      // A target drawn within the screen (an element's bounds may reach under the system bars).
      const clamp = (value, most) => Math.min(Math.max(value, 0), most);
      const left = clamp(preview.box.left, this.size.width), right = clamp(preview.box.right, this.size.width);
      const top = clamp(preview.box.top, this.size.height), bottom = clamp(preview.box.bottom, this.size.height);
      Object.assign(this.box.style, {
        left: `${(100 * left) / this.size.width}%`, top: `${(100 * top) / this.size.height}%`,
        width: `${(100 * (right - left)) / this.size.width}%`, height: `${(100 * (bottom - top)) / this.size.height}%`,
      });
      this.box.hidden = false;
    } else {
      this.box.hidden = true;
    }
    const until = performance.now() + preview.window_s * 1000;
    const text = h("span", { class: "instruction" }, `next: ${preview.instruction}`);
    const timer = h("span", { class: "countdown", id: "preview-countdown" });
    const cancel = preview.window_s > 0 ? h("button", { class: "danger small", id: "cancel-action", type: "button", onclick: onCancel }, "Cancel") : null;
    this.banner.replaceChildren(text, timer, cancel || "");
    this.banner.hidden = false;
    this._placeBanner(preview.box && {
      top: Math.max(0, preview.box.top), bottom: Math.min(this.size.height, preview.box.bottom) });
    const tick = () => {
      const left = Math.max(0, (until - performance.now()) / 1000);
      timer.textContent = preview.window_s > 0 ? ` in ${left.toFixed(1)} s` : "";
      if (left <= 0) { clearInterval(this._countdown); if (cancel) cancel.remove(); }
    };
    tick();
    this._countdown = setInterval(tick, 100);
  }

  // The banner goes where it does not cover the target: the top of the screen when the target is
  // lower down, the bottom when it is higher up, under the screen when the target spans both.
  _placeBanner(box) {
    const margin = 8;
    this.frame.append(this.banner);
    this.banner.classList.remove("top", "bottom", "outside");
    if (!box) { this.banner.classList.add("bottom"); return; }
    const height = this.frame.clientHeight;
    const needed = this.banner.offsetHeight + 2 * margin;
    const boxTop = (box.top / this.size.height) * height;
    const boxBottom = (box.bottom / this.size.height) * height;
    if (boxTop >= needed && boxTop >= height - boxBottom) this.banner.classList.add("top");
    else if (height - boxBottom >= needed) this.banner.classList.add("bottom");
    else { this.banner.classList.add("outside"); this.frame.after(this.banner); }
  }

  setTakeover(on) {
    this.takeover = on;
    this.frame.classList.toggle("takeover", on);
  }

  _point(event) {
    const rect = this.canvas.getBoundingClientRect();
    return {
      x: Math.round(((event.clientX - rect.left) / rect.width) * this.size.width),
      y: Math.round(((event.clientY - rect.top) / rect.height) * this.size.height),
      cx: event.clientX, cy: event.clientY,
    };
  }

  _bindPointer() {
    let down = null;
    this.canvas.addEventListener("pointerdown", (event) => {
      if (!this.takeover) return;
      this.canvas.setPointerCapture(event.pointerId);
      down = { ...this._point(event), at: performance.now() };
    });
    this.canvas.addEventListener("pointerup", (event) => {
      if (!this.takeover || !down) return;
      const up = this._point(event);
      const held = performance.now() - down.at;
      const moved = Math.hypot(up.cx - down.cx, up.cy - down.cy);
      const start = down;
      down = null;
      if (moved < TAP_SLOP_PX) {
        this._ripple(start);
        this.send(held >= LONG_PRESS_MS ? { kind: "long_press", x: start.x, y: start.y, duration_ms: Math.round(held) }
          : { kind: "tap", x: start.x, y: start.y });
      } else {
        this.send({ kind: "swipe", x: start.x, y: start.y, x2: up.x, y2: up.y,
          duration_ms: Math.max(100, Math.min(1500, Math.round(held))) });
      }
    });
  }

  _ripple(point) {
    const rect = this.canvas.getBoundingClientRect();
    const frame = this.frame.getBoundingClientRect();
    Object.assign(this.finger.style, { left: `${point.cx - frame.left}px`, top: `${point.cy - frame.top}px` });
    this.finger.hidden = false;
    this.finger.classList.remove("go");
    void this.finger.offsetWidth; // restart the animation
    this.finger.classList.add("go");
    return rect;
  }

  async send(input) {
    if (!this.serial) return null;
    const sentAt = performance.now();
    try {
      const reply = await api.post(`/devices/${encodeURIComponent(this.serial)}/input`, input);
      this.metrics.posts.push(performance.now() - sentAt);
      const last = this.metrics.lastShown;
      if (last && last.inputs >= reply.inputs) this.metrics.taps.push(last.at - sentAt); // came first
      else this.pending.push({ inputs: reply.inputs, sentAt });
      if (reply.note) toast(reply.note, "info", { timeout: 3000 });
      return reply;
    } catch (error) {
      showError(error);
      return null;
    }
  }
}
