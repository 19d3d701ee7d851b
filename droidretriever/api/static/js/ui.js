// Small DOM helpers: build elements (HTML and SVG; text always as text nodes), format times, show toasts.

export function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else if (key === "style" && typeof value === "object") Object.assign(node.style, value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// The same for SVG elements (their attributes are set as given; children are nodes or text).
export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "dataset") Object.assign(node.dataset, value);
    else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node, ...children) {
  node.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

export function ago(iso) {
  if (!iso) return "";
  const seconds = Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000);
  return duration(seconds) + " ago";
}

export function duration(seconds) {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(seconds / 3600)} h ${Math.round((seconds % 3600) / 60)} min`;
}

export function clock(iso) {
  return iso ? new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }) : "";
}

export function pill(text, kind) {
  return h("span", { class: `pill ${kind || text}` }, text.replaceAll("_", " "));
}

const toasts = () => document.getElementById("toasts");

export function toast(message, kind = "info", { action, timeout = 6000 } = {}) {
  const node = h("div", { class: `toast ${kind}`, role: "status" }, h("span", {}, message));
  if (action) node.append(h("button", { class: "link", onclick: () => { action.run(); node.remove(); } }, action.label));
  node.append(h("button", { class: "close", "aria-label": "dismiss", onclick: () => node.remove() }, "×"));
  toasts().append(node);
  if (timeout) setTimeout(() => node.remove(), timeout);
  return node;
}

export function showError(error) {
  toast(error.hint ? `${error.message} — ${error.hint}` : error.message, "error", { timeout: 9000 });
}

export function icon(status) {
  return { completed: "✓", failed: "✕", budget_exhausted: "✕", needs_user: "!", running: "◐", pending: "○" }[status] || "○";
}
