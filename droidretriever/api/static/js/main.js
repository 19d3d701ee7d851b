// The dashboard's router: #/ask, #/runs, #/runs/<id>, #/farm, #/maps, #/maps/<package>, #/subscriptions.
import { api } from "./api.js";
import { startAlerts } from "./alerts.js";
import { showAsk } from "./ask.js";
import { showFarm } from "./farm.js";
import { showRuns } from "./history.js";
import { showAppMap, showMaps } from "./maps.js";
import { showRun } from "./run.js";
import { showSubscriptions } from "./subscriptions.js";

let leave = null; // what the current page does when another one opens (close streams, timers)

function route() {
  const hash = location.hash || "#/ask";
  const [path, query] = hash.slice(1).split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean);
  const page = document.getElementById("page");
  if (leave) leave();
  leave = null;
  page.replaceChildren();
  const name = parts[0] || "ask";
  document.querySelectorAll("nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === name));
  if (name === "runs" && parts[1]) leave = showRun(page, decodeURIComponent(parts[1]), params);
  else if (name === "runs") leave = showRuns(page, params);
  else if (name === "farm") leave = showFarm(page);
  else if (name === "maps" && parts[1]) leave = showAppMap(page, decodeURIComponent(parts[1]), params);
  else if (name === "maps") leave = showMaps(page);
  else if (name === "subscriptions") leave = showSubscriptions(page);
  else leave = showAsk(page);
  page.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
document.getElementById("logout").addEventListener("click", async () => {
  await api.post("/auth/logout");
  location.assign("/login");
});
startAlerts();
route();
