// Talking to the API: JSON with the session cookie and the CSRF header, errors as one line.

export class ApiError extends Error {
  constructor(status, body) {
    super(body && body.error ? body.error : `HTTP ${status}`);
    this.status = status;
    this.hint = body && body.hint ? body.hint : "";
  }
}

async function call(method, path, body, contentType) {
  const headers = { "x-droidretriever": "1" };
  let payload;
  if (body instanceof Blob || body instanceof ArrayBuffer) {
    headers["content-type"] = contentType || "audio/wav";
    payload = body;
  } else if (body !== undefined) {
    headers["content-type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const response = await fetch(path, { method, headers, body: payload, credentials: "same-origin" });
  if (response.status === 401) {
    window.location.assign("/login");
    throw new ApiError(401, { error: "not logged in" });
  }
  if (response.status === 204) return null;
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

export const api = {
  get: (path) => call("GET", path),
  post: (path, body, type) => call("POST", path, body, type),
  del: (path) => call("DELETE", path),
};

// Server-sent events with reconnection: the browser resends Last-Event-ID by itself.
export function follow(path, onMessage, { onEnd, onState, events = {} } = {}) {
  const source = new EventSource(path, { withCredentials: true });
  source.onmessage = (message) => onMessage(JSON.parse(message.data), message);
  for (const [name, handler] of Object.entries(events)) {
    source.addEventListener(name, (message) => handler(JSON.parse(message.data), message));
  }
  source.addEventListener("end", () => { source.close(); if (onEnd) onEnd(); });
  source.onopen = () => onState && onState("live");
  source.onerror = () => onState && onState(source.readyState === 2 ? "closed" : "reconnecting");
  return source;
}
