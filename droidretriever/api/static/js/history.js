// Past runs, newest first, a page at a time; each opens its run page with the report.
import { api } from "./api.js";
import { clear, clock, h, pill, showError } from "./ui.js";

export function showRuns(page, params) {
  const number = Math.max(1, Number(params.get("page")) || 1);
  const body = h("tbody", {});
  const pager = h("div", { class: "row end" });
  page.append(h("section", { class: "card" }, h("h1", {}, "Runs"),
    h("table", { class: "runs" }, h("thead", {}, h("tr", {},
      h("th", {}, "question"), h("th", {}, "status"), h("th", {}, "Prefect"), h("th", {}, "started"))), body),
    pager));
  api.get(`/runs?page=${number}&per_page=20`).then((result) => {
    clear(body, result.runs.length ? result.runs.map((run) => h("tr", {},
      h("td", {}, h("a", { href: `#/runs/${run.run_id}` }, run.question)),
      h("td", {}, run.status ? pill(run.status) : ""),
      h("td", { class: "muted" }, run.prefect_state),
      h("td", { class: "muted" }, run.started_at ? `${new Date(run.started_at).toLocaleDateString()} ${clock(run.started_at)}` : "")))
      : h("tr", {}, h("td", { colspan: 4, class: "muted" }, "No runs yet: ask a question.")));
    clear(pager,
      number > 1 ? h("a", { class: "button ghost", href: `#/runs?page=${number - 1}` }, "← newer") : null,
      result.has_more ? h("a", { class: "button ghost", href: `#/runs?page=${number + 1}` }, "older →") : null);
  }).catch(showError);
  return null;
}
