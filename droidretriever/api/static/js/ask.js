// Ask a question: typed, or spoken (recorded or a WAV file), with what was heard shown and correctable.
import { api } from "./api.js";
import { WavRecorder } from "./recorder.js";
import { clear, h, showError } from "./ui.js";

export function showAsk(page) {
  let draft = null; // a recording heard by POST /transcripts, waiting for the person's correction
  const question = h("textarea", { id: "question", rows: 3, maxlength: 2000, required: true,
    placeholder: "Is a Big Mac cheaper on Meituan or Ele.me?" });
  const apps = h("div", { class: "chips", id: "apps" });
  const mode = h("select", { id: "mode" },
    h("option", { value: "" }, "page mode: chosen per app"),
    h("option", { value: "focused" }, "focused: one details page"),
    h("option", { value: "list_view" }, "list view: the results list"),
    h("option", { value: "multi_page" }, "multi-page: several results"));
  const limit = h("input", { id: "limit", type: "number", min: 1, max: 20, value: 3, title: "browsing limit per app" });
  const heard = h("div", { class: "heard", id: "heard", hidden: true });
  const recordButton = h("button", { type: "button", class: "ghost", id: "record" }, "● record");
  const file = h("input", { type: "file", accept: "audio/wav,audio/x-wav,.wav", id: "audio-file", hidden: true });
  const submit = h("button", { type: "submit", class: "primary", id: "ask" }, "Ask");
  let recorder = null;

  async function hear(blob) {
    clear(heard, h("span", { class: "muted" }, "listening to the recording…"));
    heard.hidden = false;
    try {
      const result = await api.post("/transcripts", blob, "audio/wav");
      draft = result.draft;
      question.value = result.heard.text;
      clear(heard,
        h("strong", {}, "Heard: "), h("q", { id: "heard-text" }, result.heard.text || "(nothing)"),
        h("span", { class: "engine" }, ` by ${result.heard.engine}`),
        result.heard.low_accuracy ? h("span", { class: "pill warn" }, "offline engine: low accuracy") : null,
        h("div", { class: "muted" }, "Correct the question above if it is wrong, then ask."));
      question.focus();
    } catch (error) {
      heard.hidden = true;
      showError(error);
    }
  }

  recordButton.addEventListener("click", async () => {
    if (recorder) {
      const blob = await recorder.stop();
      recorder = null;
      recordButton.textContent = "● record";
      recordButton.classList.remove("recording");
      await hear(blob);
      return;
    }
    try {
      recorder = new WavRecorder();
      await recorder.start();
      recordButton.textContent = "■ stop";
      recordButton.classList.add("recording");
    } catch (error) {
      recorder = null;
      showError(new Error(`cannot record: ${error.message}`));
    }
  });
  file.addEventListener("change", () => file.files[0] && hear(file.files[0]));

  const form = h("form", { class: "card ask", onsubmit: async (event) => {
    event.preventDefault();
    submit.disabled = true;
    const chosen = [...apps.querySelectorAll("input:checked")].map((c) => c.value);
    try {
      const started = await api.post("/runs", {
        text: question.value.trim(), apps: chosen, mode: mode.value || null,
        limit: Number(limit.value) || 3, draft,
      });
      location.hash = `#/runs/${started.run_id}`;
    } catch (error) {
      showError(error);
      submit.disabled = false;
    }
  } },
  h("h1", {}, "What do you want to find out?"),
  h("p", { class: "muted" }, "The question is split into one sub-task per app; phones of the farm open each app, ",
    "search, and capture the answer pages. The report cites every point with the screenshot it came from."),
  question,
  h("div", { class: "row" }, recordButton, h("button", { type: "button", class: "ghost", onclick: () => file.click() }, "⤒ WAV file"), file),
  heard,
  h("details", { class: "options" }, h("summary", {}, "Options: apps, page mode, browsing limit"),
    h("div", { class: "muted" }, "Only these apps (none ticked: any that fits):"), apps,
    h("div", { class: "row" }, mode, h("label", {}, "browsing limit ", limit))),
  h("div", { class: "row end" }, submit));
  page.append(h("section", { class: "narrow" }, form));

  api.get("/apps").then((list) => {
    clear(apps, list.length ? list.map((app) => h("label", { class: "chip" },
      h("input", { type: "checkbox", value: app.label }), app.label))
      : h("span", { class: "muted" }, "no phone is online: `droidretriever up` starts virtual phones"));
  }).catch(showError);
  question.focus();
  return () => { if (recorder) recorder.stop(); };
}
