"""The page's HTML: every value escaped, one small inline style sheet, no script (ADR 155).

Memory text is whatever was said in a session, so it is treated as hostile: every value goes
through :func:`esc` (``html.escape`` with quotes) or :func:`link` (``urlencode``) and nothing
is ever put in a script, a style or an event attribute. The page has no JavaScript at all; the
Content-Security-Policy the server sends (``STYLE_HASH``) allows this style sheet and nothing
else, so even a mistake here could not run a script.
"""

from __future__ import annotations

import base64
import hashlib
import html
from typing import Any
from urllib.parse import urlencode

from ..timefmt import local_minute
from .actions import Answer

STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
header{background:#263238;color:#fff;padding:.6em 1.2em;display:flex;gap:1.2em;align-items:center}
header a{color:#cfe8fc;text-decoration:none}header b{margin-right:1em}
main{padding:1em 1.2em;max-width:72em}
table{border-collapse:collapse;width:100%;background:#fff}
td,th{border-bottom:1px solid #ddd;padding:.35em .5em;text-align:left;vertical-align:top}
th{background:#eceff1}td.t{white-space:pre-wrap;word-break:break-word}
form.f{display:flex;flex-wrap:wrap;gap:.5em;margin:.5em 0 1em}
form.f label{display:flex;flex-direction:column;font-size:.85em}
input,select,button{font:inherit;padding:.25em .4em}
button.danger{background:#b71c1c;color:#fff;border:0;padding:.4em .9em;cursor:pointer}
.msg{padding:.6em .8em;margin:.6em 0;border-left:4px solid #1565c0;background:#e3f2fd;white-space:pre-wrap}
.warning{border-color:#ef6c00;background:#fff3e0}.error{border-color:#b71c1c;background:#ffebee}
.ok{color:#2e7d32}.warn{color:#ef6c00}.fail{color:#b71c1c}
pre{background:#fff;padding:.8em;border:1px solid #ddd;white-space:pre-wrap;word-break:break-word}
dl{display:grid;grid-template-columns:10em 1fr;gap:.3em 1em}dt{font-weight:600}
dd{margin:0;white-space:pre-wrap;word-break:break-word}
.muted{color:#666}
""".strip()

STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode("utf-8")).digest()).decode("ascii")
"""The Content-Security-Policy source that allows exactly :data:`STYLE`."""

BANKS = ("project", "user")


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def attr(value: object) -> str:
    """An attribute value, escaped and quoted (``class={attr(x)}``): never left bare."""
    return f'"{esc(value)}"'


def link(path: str, **params: object) -> str:
    """A quoted ``href`` value: ``path?k=v`` with the empty parameters left out."""
    query = urlencode({k: str(v) for k, v in params.items() if v not in (None, "")})
    return attr(f"{path}?{query}" if query else path)


def page(title: str, body: str) -> str:
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{esc(title)} · hindsight-hooks</title><style>{STYLE}</style></head><body>"
        "<header><b>hindsight-hooks</b><a href=/>Memories</a><a href=/queue>Queue</a>"
        f"<a href=/doctor>Doctor</a></header><main><h1>{esc(title)}</h1>{body}</main></body></html>"
    )


def message(answer: Answer) -> str:
    """A command's own words, in a box coloured by its level."""
    return f'<div class="msg {esc(answer.level)}" role=status>{esc(answer.text.strip())}</div>'


def error_page(status: int, why: str) -> str:
    return page(f"{status}", f'<div class="msg error">{esc(why)}</div>')


# -- memories --------------------------------------------------------------------------------------
def _when(rec: dict[str, Any]) -> str:
    return local_minute(rec.get("occurred_at") or rec.get("created_at") or "")  # the user's clock (ADR 216)


def _short(text: str, size: int = 220) -> str:
    one = " ".join(text.split())
    return one if len(one) <= size else one[: size - 1] + "…"


def _filters(query: dict[str, list[str]]) -> str:
    def value(key: str) -> str:
        got = query.get(key) or [""]
        return esc(got[-1])

    bank = (query.get("bank") or ["project"])[-1]
    options = "".join(f"<option value={b}{' selected' if b == bank else ''}>{b}</option>" for b in BANKS)
    if bank not in BANKS:
        options += f"<option value={attr(bank)} selected>{esc(bank)}</option>"
    fields = "".join(
        f'<label>{label}<input name={key} value="{value(key)}"{extra}></label>'
        for key, label, extra in (
            ("text", "Search text", " type=search autofocus"),
            ("tag", "Tag", ""),
            ("document", "Document", ""),
            ("session", "Session", ""),
            ("since", "Since (YYYY-MM-DD)", ""),
            ("until", "Until", ""),
            ("limit", "Per page", " size=4"),
        )
    )
    return (
        f"<form class=f method=get action=/ role=search><label>Bank<select name=bank>{options}</select></label>"
        f"{fields}<button type=submit>Search</button><a href=/>clear</a></form>"
    )


def memories_page(query: dict[str, list[str]], answer: Answer) -> str:
    body = _filters(query)
    data = answer.data
    if "memories" not in data:
        return page("Memories", body + message(answer))
    bank = str(data.get("bank_id", ""))
    records: list[dict[str, Any]] = list(data.get("memories") or [])
    total, number = data.get("total"), int(data.get("page") or 1)
    filtered = any((query.get(k) or [""])[-1] for k in ("text", "tag", "document", "session", "since", "until"))
    body += (
        f"<p id=summary>Bank <code>{esc(bank)}</code>: "
        f"<b id=total>{esc(total if total is not None else '?')}</b> memories"
        f"{' match' if filtered else ''}"
        f"; page {number}. Newest first.</p>"
    )
    if not records:
        return page("Memories", body + "<p class=muted id=empty>No memories here.</p>")
    rows = []
    for rec in records:
        flags = (" <span class=muted>(invalidated)</span>" if not rec.get("valid", True) else "") + (
            " <span class=muted>(edited)</span>" if rec.get("edited_at") else ""
        )
        href = link("/memory", bank=bank, id=rec.get("id"))
        rows.append(
            f"<tr class=memory><td><a href={href}>{esc(str(rec.get('id'))[:12])}</a></td>"
            f"<td>{esc(_when(rec))}</td><td class=t>{esc(_short(str(rec.get('text', ''))))}{flags}</td>"
            f"<td>{esc(', '.join(rec.get('tags') or []))}</td></tr>"
        )
    body += (
        "<table id=memories><thead><tr><th>id</th><th>when</th><th>memory</th><th>tags</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    body += _pager(query, number, data.get("next_page"))
    return page("Memories", body)


def _pager(query: dict[str, list[str]], number: int, next_page: object) -> str:
    keep = {k: (v[-1] if v else "") for k, v in query.items() if k != "page"}
    parts = []
    if number > 1:
        parts.append(f"<a rel=prev href={link('/', **keep, page=number - 1)}>← newer</a>")
    if next_page:
        parts.append(f"<a rel=next href={link('/', **keep, page=next_page)}>older →</a>")
    return f"<p class=pager>{' · '.join(parts)}</p>" if parts else ""


def memory_page(bank: str, answer: Answer) -> str:
    rec = answer.data.get("memory")
    if not isinstance(rec, dict):
        return page("Memory", message(answer) + "<p><a href=/>back to the list</a></p>")
    rows = [
        ("id", rec.get("id")),
        ("bank", bank),
        ("text", rec.get("text")),
        ("tags", ", ".join(rec.get("tags") or []) or "none"),
        ("document", rec.get("document_id") or "-"),
        ("position", rec.get("position") if rec.get("position") is not None else "-"),
        ("session", rec.get("session_id") or "-"),
        ("session file", rec.get("session_file") or "-"),
        ("when", rec.get("occurred_at") or rec.get("created_at") or "-"),
        ("stored", rec.get("created_at") or "-"),
        ("type / source", f"{rec.get('type') or '-'} / {rec.get('source') or '-'}"),
        ("valid", "yes" if rec.get("valid", True) else "no (invalidated)"),
    ]
    if rec.get("context"):
        rows.append(("context", rec.get("context")))
    body = "<dl id=memory>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in rows) + "</dl>"
    history = answer.data.get("history") or []
    if history:
        body += (
            "<h2>Edits</h2><table><tr><th>when</th><th>was</th></tr>"
            + "".join(
                f"<tr><td>{esc(h.get('edited_at'))}</td><td class=t>{esc(h.get('previous'))}</td></tr>" for h in history
            )
            + "</table>"
        )
    body += "<h2>Forget</h2><p>"
    body += f"<a id=forget href={link('/forget', bank=bank, by='id', value=rec.get('id'))}>Forget this memory…</a>"
    if rec.get("document_id"):
        href = link("/forget", bank=bank, by="document", value=rec.get("document_id"))
        body += f" · <a id=forget-document href={href}>Forget its whole document…</a>"
    body += "</p><p><a href=/>back to the list</a></p>"
    return page("Memory", body)


def confirm_page(bank: str, by: str, value: str, answer: Answer, csrf: str) -> str:
    """The confirmation step: what would go (the dry run), and a POST that does it."""
    data = answer.data
    if "memories" not in data or not isinstance(data.get("memories"), int):
        return page("Forget", message(answer) + "<p><a href=/>back to the list</a></p>")
    count, queued = int(data["memories"]), int(data.get("queued_items") or 0)
    body = message(Answer(answer.text, "warning"))
    if count == 0 and queued == 0 and not data.get("documents"):
        return page("Forget", body + "<p>Nothing to forget. <a href=/>back to the list</a></p>")
    body += (
        "<form method=post action=/forget id=confirm-form>"
        f'<input type=hidden name=csrf value="{esc(csrf)}">'
        f'<input type=hidden name=bank value="{esc(bank)}"><input type=hidden name=by value="{esc(by)}">'
        f'<input type=hidden name=value value="{esc(value)}">'
        f"<p>Forget {count} memories and {queued} queued item(s) from bank <code>{esc(bank)}</code>? "
        "This cannot be undone; a tombstone keeps them from coming back.</p>"
        f"<button class=danger type=submit id=confirm>Yes, forget {count}</button> "
        "<a href=/ id=cancel>Cancel</a></form>"
    )
    return page("Forget?", body)


def forgot_page(answer: Answer) -> str:
    return page("Forget", message(answer) + "<p><a href=/ id=back>back to the list</a></p>")


# -- queue and doctor --------------------------------------------------------------------------------
def queue_page(answer: Answer) -> str:
    return page("Queue", f"<pre id=queue>{esc(answer.text.strip())}</pre>")


def doctor_page(answer: Answer) -> str:
    checks = answer.data.get("checks")
    if not isinstance(checks, list):
        return page("Doctor", message(answer))
    status = str(answer.data.get("status", ""))
    rows = "".join(
        f"<tr class=check><td class={attr(c.get('status'))}>{esc(c.get('status'))}</td><td>{esc(c.get('name'))}</td>"
        f"<td class=t>{esc(c.get('detail'))}</td>"
        f"<td class=t>{esc(c.get('fix') if c.get('status') != 'ok' else '')}</td></tr>"
        for c in checks
        if isinstance(c, dict)
    )
    return page(
        "Doctor",
        f"<p>Overall: <b class={attr(status)} id=status>{esc(status or '?')}</b> "
        "(the same checks as <code>hindsight-hooks doctor --json</code>; fixes are left to "
        "<code>hindsight-hooks doctor --fix</code>)</p>"
        f"<table id=checks><tr><th>status</th><th>check</th><th>detail</th><th>fix</th></tr>{rows}</table>",
    )
