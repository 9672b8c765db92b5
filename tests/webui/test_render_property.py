"""Whatever a memory says, the page's HTML holds only the page's own tags and no event attribute.

Every field a command can hand the page (text, tags, ids, context, history, the command's own
message, a doctor check) is filled with arbitrary text, markup-looking text included, and the
rendered page is parsed: any tag or attribute that is not the template's own would mean stored
text became markup.
"""

from __future__ import annotations

from html.parser import HTMLParser

from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_hooks.webui import render
from hindsight_hooks.webui.actions import Answer

OWN_TAGS = {
    "html", "head", "meta", "title", "style", "body", "header", "b", "a", "main", "h1", "h2", "form",
    "label", "select", "option", "input", "button", "p", "code", "table", "thead", "tbody", "tr", "th",
    "td", "span", "div", "dl", "dt", "dd", "pre",
}  # fmt: skip
OWN_ATTRS = {
    "lang", "charset", "name", "content", "href", "class", "method", "action", "role", "value", "type",
    "autofocus", "size", "selected", "id", "rel",
}  # fmt: skip

hostile = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "<script>alert(1)</script>",
            '"><img src=x onerror=alert(1)>',
            "' onmouseover='x",
            "</style><script>x</script>",
            "<!-- -->",
            "javascript:alert(1)",
            "&lt;b&gt;",
        ]
    ),
)


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attrs: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for key, value in attrs:
            self.attrs.add(key)
            if key == "href":
                self.hrefs.append(value or "")


def parsed(html: str) -> Tags:
    tags = Tags()
    tags.feed(html)
    return tags


def assert_only_own_markup(html: str) -> None:
    tags = parsed(html)
    assert tags.tags <= OWN_TAGS, tags.tags - OWN_TAGS
    assert tags.attrs <= OWN_ATTRS, tags.attrs - OWN_ATTRS
    assert all(h.startswith("/") for h in tags.hrefs), tags.hrefs  # links stay on the page's own paths


@settings(max_examples=150)
@given(text=hostile, tag=hostile, memory_id=hostile, bank=hostile, context=hostile, when=hostile, message=hostile)
def test_no_field_becomes_markup(
    text: str, tag: str, memory_id: str, bank: str, context: str, when: str, message: str
) -> None:
    record = {
        "id": memory_id,
        "text": text,
        "tags": [tag],
        "document_id": tag,
        "session_id": text,
        "session_file": context,
        "created_at": when,
        "occurred_at": when,
        "type": tag,
        "source": tag,
        "context": context,
        "valid": False,
        "edited_at": when,
        "position": 1,
    }
    query = {"bank": [bank], "text": [text], "tag": [tag], "page": ["2"]}
    listed = Answer(message, "info", {"bank_id": bank, "page": 2, "total": 3, "next_page": 3, "memories": [record]})
    assert_only_own_markup(render.memories_page(query, listed))
    assert_only_own_markup(render.memories_page(query, Answer(message, "warning", {"usage": message})))
    shown = Answer(message, "info", {"memory": record, "history": [{"edited_at": when, "previous": text}]})
    assert_only_own_markup(render.memory_page(bank, shown))
    plan = Answer(message, "info", {"memories": 2, "queued_items": 1, "documents": [tag]})
    assert_only_own_markup(render.confirm_page(bank, tag, text, plan, csrf=context))
    assert_only_own_markup(render.forgot_page(Answer(message, "error")))
    assert_only_own_markup(render.queue_page(Answer(message, "info")))
    check = {"name": tag, "status": text, "detail": message, "fix": context}
    assert_only_own_markup(render.doctor_page(Answer(message, "warning", {"status": text, "checks": [check]})))
    assert_only_own_markup(render.error_page(403, message))
