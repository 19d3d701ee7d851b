// Subscriptions: a question on a schedule; list, next run, last change; pause, resume, delete; create.
import { api } from "./api.js";
import { clear, clock, h, pill, showError, toast } from "./ui.js";

export function showSubscriptions(page) {
  const list = h("tbody", {});
  const text = h("input", { id: "sub-question", placeholder: "Big Mac price on Ele.me", required: true, maxlength: 2000 });
  const when = h("select", { id: "sub-when" },
    h("option", { value: "every:3600" }, "every hour"), h("option", { value: "every:21600" }, "every 6 hours"),
    h("option", { value: "cron:0 8 * * *" }, "every day at 08:00"), h("option", { value: "every:60" }, "every minute (testing)"));
  page.append(
    h("section", { class: "card" }, h("h1", {}, "Subscriptions"),
      h("p", { class: "muted" }, "A question asked on a schedule; you hear only when the answer changes."),
      h("table", {}, h("thead", {}, h("tr", {}, ["question", "schedule", "next run", "last change", ""].map((t) => h("th", {}, t)))), list)),
    h("section", { class: "card" }, h("h2", {}, "New subscription"),
      h("form", { class: "row", onsubmit: async (event) => {
        event.preventDefault();
        const [kind, value] = when.value.split(/:(.*)/s);
        try {
          await api.post("/subscriptions", kind === "every" ? { text: text.value, every_s: Number(value) } : { text: text.value, cron: value });
          text.value = "";
          toast("subscribed", "ok");
          refresh();
        } catch (error) { showError(error); }
      } }, text, when, h("button", { class: "primary", type: "submit" }, "Subscribe"))));

  async function act(path, method = "post") {
    try { await (method === "del" ? api.del(path) : api.post(path)); refresh(); } catch (error) { showError(error); }
  }

  async function refresh() {
    try {
      const subs = await api.get("/subscriptions");
      clear(list, subs.length ? subs.map((s) => h("tr", {},
        h("td", {}, s.question, s.paused ? [" ", pill("paused", "warn")] : null),
        h("td", { class: "muted" }, s.schedule),
        h("td", { class: "muted" }, s.paused ? "paused" : s.next_run ? `${clock(s.next_run)} (${s.next_state})` : "-"),
        h("td", {}, s.last_change || h("span", { class: "muted" }, "no run yet"),
          s.last_run ? [" ", h("a", { href: `#/runs/${s.last_run}` }, "report")] : null),
        h("td", { class: "actions" },
          s.paused ? h("button", { class: "ghost", onclick: () => act(`/subscriptions/${s.id}/resume`) }, "resume")
            : h("button", { class: "ghost", onclick: () => act(`/subscriptions/${s.id}/pause`) }, "pause"),
          h("button", { class: "ghost danger", onclick: () => confirm(`Delete “${s.question}” and its reports?`) && act(`/subscriptions/${s.id}`, "del") }, "delete"))))
        : h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No subscriptions.")));
    } catch (error) { showError(error); }
  }
  refresh();
  return null;
}
