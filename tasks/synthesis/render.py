"""``report.md`` and a self-contained ``report.html`` from a :class:`Report`.

Citations are matched to ``Report.citations`` by position: the i-th citation
ref in ``Report.markdown`` (reading order, a group counting each of its refs)
is ``Report.citations[i]``; :func:`tasks.synthesis.report.build_report` keeps
that invariant.

The HTML page is one file: CSS and the small script are inline and capture
images are embedded as ``data:`` URIs, so it opens offline, from a download, a
mail attachment or a presigned S3 URL, where paths relative to it would not
resolve. Each citation is a link to ``#hl-<i>``: a rectangle positioned in
percent of its capture, so it stays on the text at any zoom. CSS ``:target``
shows it and the browser scrolls it into view, so this works without
JavaScript; the script only centres it and makes it blink. The Markdown is
untrusted (a model wrote it): raw HTML in it is escaped, not rendered. Control,
bidi and zero-width characters (from the question or a screen) are written
visibly (``\x1b``) in both files, so a report never drives a terminal that
``cat``s it nor reads differently from what it stores.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Mapping, Sequence

from markdown_it import MarkdownIt

from core.models import AppStatus, Capture, Citation, Report, SubTaskStatus, TokenLedger
from core.text import escape_controls
from tasks.synthesis.citations import CitationMark, replace_citations

__all__ = [
    "footer_lines", "intervention_lines", "render_report_html", "render_report_markdown",
    "render_report_terminal", "slow_sentences",
]

_STATUS = {
    SubTaskStatus.COMPLETED: ("completed", "ok"),
    SubTaskStatus.NEEDS_USER: ("needs person", "warn"),
    SubTaskStatus.FAILED: ("failed", "bad"),
    SubTaskStatus.BUDGET_EXHAUSTED: ("failed: out of steps", "bad"),
    SubTaskStatus.STOPPED: ("stopped", "warn"),
    SubTaskStatus.PENDING: ("not started", "warn"),
    SubTaskStatus.RUNNING: ("stopped early", "warn"),
    SubTaskStatus.NOT_DONE: ("not done", "warn"),  # a request to act: the agent does not act
}
# Private-use characters: cannot be typed by a model in practice, survive Markdown untouched.
_OPEN, _CLOSE = "\ue000", "\ue001"

_CSS = """
:root{--hl:#e53935;--ok:#2e7d32;--warn:#b26a00;--bad:#c62828;font-family:system-ui,"Noto Sans CJK SC",sans-serif}
body{margin:0;color:#1d1d1f;background:#fafafa}
header{padding:16px 24px;border-bottom:1px solid #ddd;background:#fff}
header h1{font-size:1.2rem;margin:0 0 8px}
.apps{display:flex;flex-wrap:wrap;gap:8px;margin:0;padding:0;list-style:none}
.apps li{padding:4px 10px;border-radius:12px;font-size:.85rem;border:1px solid currentColor}
.apps .ok{color:var(--ok)}.apps .warn{color:var(--warn)}.apps .bad{color:var(--bad)}
.meta{color:#666;font-size:.8rem;margin-top:6px}
main{display:grid;grid-template-columns:minmax(0,1fr) 440px;gap:0;height:calc(100vh - 110px)}
article{overflow:auto;padding:8px 24px}
article table{border-collapse:collapse}article td,article th{border:1px solid #ccc;padding:4px 8px}
blockquote{margin:8px 0;padding:8px 12px;background:#fff8e1;border-left:4px solid #ffb300}
a.cite{font-size:.75em;vertical-align:super;text-decoration:none;color:#1565c0;margin-left:2px}
a.cite.unverified{color:var(--bad)}
aside{overflow:auto;border-left:1px solid #ddd;background:#f0f0f0;padding:8px}
figure{margin:0 0 16px}figcaption{font-size:.8rem;color:#444;margin:4px 0}
.frame{position:relative;width:100%}.frame img{display:block;width:100%;height:auto}
.hl{position:absolute;visibility:hidden;box-sizing:border-box;border:3px solid var(--hl);
    background:rgba(229,57,53,.18);border-radius:3px}
.hl:target,.hl.active{visibility:visible}
.hl.blink{animation:blink .4s ease-in-out 3}
@keyframes blink{50%{background:rgba(229,57,53,.55)}}
#unverified li:target{background:#ffebee}
footer.models{margin-top:24px;padding-top:8px;border-top:1px solid #ddd;color:#444;font-size:.85rem}
.partial{margin:8px 0 0;padding:6px 10px;background:#fff3e0;border-left:4px solid var(--warn);color:#5d4037}
section.people{margin-top:24px;padding-top:8px;border-top:1px solid #ddd}
section.people li{font-size:.9rem;margin:2px 0}
"""

_JS = """
(function(){
  function show(id){
    var el=document.getElementById(id); if(!el) return;
    document.querySelectorAll('.hl.active').forEach(function(h){h.classList.remove('active','blink');});
    if(el.classList.contains('hl')){el.classList.add('active');void el.offsetWidth;el.classList.add('blink');}
    el.scrollIntoView({block:'center',inline:'nearest'});
  }
  document.addEventListener('click',function(ev){
    var a=ev.target.closest('a.cite'); if(!a) return;
    ev.preventDefault(); var id=a.getAttribute('href').slice(1);
    history.replaceState(null,'','#'+id); show(id);
  });
  if(location.hash) show(location.hash.slice(1));
})();
"""


def _status_items(apps: Sequence[AppStatus]) -> str:
    items = []
    for app in apps:
        word, css = _STATUS.get(app.status, (app.status.value, "warn"))
        reason = f": {app.reason}" if app.reason and app.status is not SubTaskStatus.COMPLETED else ""
        items.append(f'<li class="{css}" title="{html.escape(app.package)}">'
                     f"{html.escape(app.app_label)}: {word}{html.escape(reason)}</li>")
    return "".join(items)


def _citation_link(index: int, citation: Citation) -> str:
    label = f"[{index + 1}]"
    quote = html.escape(citation.quote, quote=True)
    if citation.grounded:
        return (f'<a class="cite" id="ref-{index}" href="#hl-{index}" data-cite="{index}" '
                f'title="{quote}">{label}</a>')
    return (f'<a class="cite unverified" id="ref-{index}" href="#unv-{index}" data-cite="{index}" '
            f'title="unverified: {quote}">{label}?</a>')


def _number_marks(markdown: str) -> str:
    counter = iter(range(1 << 30))

    def placeholder(mark: CitationMark) -> str:
        return "".join(f"{_OPEN}{next(counter)}{_CLOSE}" for _ in mark.refs)

    return replace_citations(markdown.replace(_OPEN, "").replace(_CLOSE, ""), placeholder)


def _substitute(body: str, citations: Sequence[Citation]) -> str:
    pieces = body.split(_OPEN)
    out = [pieces[0]]
    for piece in pieces[1:]:
        number, _, rest = piece.partition(_CLOSE)
        index = int(number)
        if index < len(citations):
            out.append(_citation_link(index, citations[index]))
        out.append(rest)
    return "".join(out)


def _pct(value: int, total: int) -> str:
    return f"{100.0 * value / total:.4f}%"


def _figure(capture: Capture, image: bytes | None, citations: Sequence[Citation]) -> str:
    boxes = []
    for index, citation in enumerate(citations):
        if citation.capture_id != capture.id or not citation.grounded or citation.box is None:
            continue
        box = citation.box
        boxes.append(
            f'<a class="hl" id="hl-{index}" href="#ref-{index}" data-box="{box.to_uiautomator()}" '
            f'title="{html.escape(citation.quote, quote=True)}" style="left:{_pct(box.left, capture.width)};'
            f"top:{_pct(box.top, capture.height)};width:{_pct(box.width, capture.width)};"
            f'height:{_pct(box.height, capture.height)}"></a>')
    if image is None:
        picture = '<p class="missing">image not available</p>'
    else:
        data = base64.b64encode(image).decode("ascii")
        picture = (f'<img alt="capture {html.escape(capture.id)}" width="{capture.width}" '
                   f'height="{capture.height}" src="data:image/png;base64,{data}">')
    caption = html.escape(capture.title or capture.package)
    return (f'<figure id="cap-{html.escape(capture.id)}" data-width="{capture.width}" '
            f'data-height="{capture.height}"><figcaption>{caption} · {html.escape(capture.id)}'
            f'</figcaption><div class="frame">{picture}{"".join(boxes)}</div></figure>')


def _unverified_list(citations: Sequence[Citation], known: set[str]) -> str:
    rows = []
    for index, citation in enumerate(citations):
        if citation.grounded:
            continue
        why = ("no text on that capture matches it" if citation.capture_id in known
               else "no capture with that id in this run")
        rows.append(f'<li id="unv-{index}">[{index + 1}] {html.escape(citation.capture_id)}: '
                    f"“{html.escape(citation.quote)}”: {why} (best score {citation.score:.2f})</li>")
    if not rows:
        return ""
    return f'<section id="unverified"><h3>Unverified citations</h3><ul>{"".join(rows)}</ul></section>'


def render_report_html(report: Report, captures: Sequence[Capture],
                       images: Mapping[str, bytes]) -> str:
    """The whole page; ``images`` maps capture id -> PNG bytes (missing ones are shown as such)."""
    renderer = MarkdownIt("commonmark", {"html": False}).enable("table")
    body = _substitute(renderer.render(_number_marks(report.markdown)), report.citations)
    figures = "".join(_figure(c, images.get(c.id), report.citations) for c in captures)
    unverified = _unverified_list(report.citations, {c.id for c in captures})
    grounded = sum(1 for c in report.citations if c.grounded)
    title = html.escape(report.query.text)
    footer = "\n".join(footer_lines(report))
    models = f'<footer class="models"><h3>Models</h3>{renderer.render(footer)}</footer>' if footer else ""
    people = _people_section(report)
    partial = (f'<p class="partial" id="partial"><strong>Partial report:</strong> '
               f"{html.escape(report.partial)}</p>" if report.partial else "")
    return escape_controls(
        f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{title}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{title}</h1><ul class=\"apps\">{_status_items(report.apps)}</ul>"
        f'<div class="meta">run {html.escape(report.run_id)} · synthesizer: '
        f"{html.escape(report.synthesizer)} · {grounded} of {len(report.citations)} citations "
        f"grounded · {report.created_at:%Y-%m-%d %H:%M} UTC</div>{partial}</header>"
        f"<main><article>{body}{people}{models}</article><aside>{figures}{unverified}</aside></main>"
        f"<script>{_JS}</script></body></html>")


def render_report_markdown(report: Report) -> str:
    """``report.md``: per-app status, the report as written, an evidence list, the models' footer."""
    lines = [f"_Run {report.run_id} · synthesizer: {report.synthesizer}_", ""]
    if report.partial:
        lines += [f"> **Partial report:** {report.partial}", ""]
    for app in report.apps:
        word, _ = _STATUS.get(app.status, (app.status.value, ""))
        reason = ("" if not app.reason or app.status is SubTaskStatus.COMPLETED
                  else f": {app.reason}" if app.status is SubTaskStatus.NOT_DONE else f" ({app.reason})")
        lines.append(f"- **{app.app_label}**: {word}{reason}")
    lines += ["", report.markdown.rstrip(), "", "---", "", "## Evidence", ""]
    lines += _evidence_lines(report.citations)
    people = intervention_lines(report)
    if people:
        lines += ["", "## People stepped in", "", *people]
    footer = footer_lines(report)
    if footer:
        lines += ["", "## Models", "", *footer]
    return escape_controls("\n".join(lines).rstrip() + "\n")


def intervention_lines(report: Report) -> list[str]:
    """One line per thing a person did: time, phone (and app), who, what (never typed text)."""
    lines = []
    for act in report.interventions:
        where = act.serial or "no phone"
        if act.app_label:
            where += f" ({act.app_label})"
        lines.append(f"- {act.at:%H:%M:%S} UTC · {where} · {act.actor}: {act.what}")
    return lines


def _people_section(report: Report) -> str:
    if not report.interventions:
        return ""
    items = "".join(f"<li>{html.escape(line.removeprefix('- '))}</li>"
                    for line in intervention_lines(report))
    return f'<section class="people" id="people"><h3>People stepped in</h3><ul>{items}</ul></section>'


def footer_lines(report: Report) -> list[str]:
    """The models' footer: each role's calls and tokens, fallbacks to the rules, warnings."""
    lines = [f"- **Warning:** {w}." for w in report.warnings]
    lines += [f"- **Fallback:** {tally.sentence()}." for tally in report.fallbacks]
    lines += [f"- **Slow server:** {sentence}." for sentence in slow_sentences(report.tokens)]
    for role, usage in report.tokens.roles.items():
        failed = f" ({usage.failed} failed)" if usage.failed else ""
        image = f" ({usage.image:,} of them image)" if usage.image else ""
        lines.append(f"- {role}: {usage.calls} call{'s' if usage.calls != 1 else ''}{failed}, "
                     f"{usage.prompt:,} prompt tokens{image}, {usage.completion:,} completion tokens")
    total = report.tokens.total
    if len(report.tokens.roles) > 1:
        lines.append(f"- all roles: {total.calls} calls, {total.total:,} tokens")
    return lines


def slow_sentences(tokens: TokenLedger) -> list[str]:
    """One sentence per role whose requests were slow (``llm.<role>.slow_call_s``)."""
    return [f"{usage.slow} of the {role}'s {usage.calls} requests took longer than its slow_call_s beyond "
            "their tokens' time at its tokens_per_s; check the model server's load"
            for role, usage in tokens.roles.items() if usage.slow]


def render_report_terminal(report: Report) -> str:
    """The report for a terminal: citations become ``[n]`` marks (``[n?]`` unverified),
    and their evidence is listed once below, so tables stay readable at 80 columns."""
    pieces = _number_marks(report.markdown).split(_OPEN)
    out = [pieces[0]]
    for piece in pieces[1:]:
        number, _, rest = piece.partition(_CLOSE)
        index = int(number)
        grounded = index < len(report.citations) and report.citations[index].grounded
        out.append(f"[{index + 1}{'' if grounded else '?'}]{rest}")
    evidence = "\n".join(_evidence_lines(report.citations))
    footer = footer_lines(report)
    models = "\n\n**Models**\n\n" + "\n".join(footer) if footer else ""
    # A request to act: what was not done comes first, before anything the pages said.
    not_done = "".join(f"> **{app.app_label}: not done:** {app.reason}\n\n" for app in report.apps
                       if app.status is SubTaskStatus.NOT_DONE)
    if report.partial:
        not_done = f"> **Partial report:** {report.partial}\n\n{not_done}"
    people = intervention_lines(report)
    if people:
        models = "\n\n**People stepped in**\n\n" + "\n".join(people) + models
    return (f"{not_done}{''.join(out).rstrip()}\n\n---\n\n**Evidence** (open report.html to see it highlighted)"
            f"\n\n{evidence}{models}\n")


def _evidence_lines(citations: Sequence[Citation]) -> list[str]:
    lines = []
    for index, citation in enumerate(citations, start=1):
        if citation.grounded and citation.box is not None:
            crop = f", crop `{citation.crop_key}`" if citation.crop_key else ""
            lines.append(f"{index}. `{citation.capture_id}` “{citation.quote}”: grounded "
                         f"(score {citation.score:.2f}) at {citation.box.to_uiautomator()}{crop}")
        else:
            lines.append(f"{index}. `{citation.capture_id}` “{citation.quote}”: **unverified** "
                         f"(best score {citation.score:.2f})")
    return lines
