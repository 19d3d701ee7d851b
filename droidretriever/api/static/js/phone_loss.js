// What the run page says when one of the run's phones dies (its worker was killed, or the phone
// stopped answering): what happened, and, once the sub-task runs again, on which phone. The
// notice sits above the live screen, so a person who had the phone in hand reads it there.
import { clear, clock, h, toast } from "./ui.js";

const KINDS = new Set(["phone_lost", "subtask_moved"]);

export class PhoneLossNotice {
  constructor() {
    this.lines = h("ol", { class: "lines" });
    this.node = h("div", { class: "phone-lost", id: "phone-lost", role: "status", hidden: true },
      h("strong", {}, "A phone of this run went down"), this.lines);
  }

  // Shows a phone_lost or subtask_moved event (true), ignores any other (false). An event
  // replayed from earlier (replaying) is listed without a toast.
  show(event, replaying) {
    if (!KINDS.has(event.kind)) return false;
    const moved = event.kind === "subtask_moved";
    this.node.hidden = false;
    this.lines.append(h("li", { class: moved ? "moved" : "lost", dataset: { kind: event.kind, seq: event.seq } },
      h("time", {}, clock(event.at)), " ", event.message));
    if (!replaying) toast(event.message, moved ? "ok" : "error", { timeout: 15000 });
    return true;
  }

  reset() {
    clear(this.lines);
    this.node.hidden = true;
  }
}
