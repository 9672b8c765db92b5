"""The memory page's server over plain HTTP: who gets in, what a POST needs, what the page shows.

The page runs in process on a kit project; requests are made with ``http.client`` so each test
sets the Host, Origin, Cookie and CSRF values itself. What was forgotten is read back from the
store (``kit.texts``), never from the page's own answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from hindsight_hooks.webui.actions import CONFIRM, PageUI

from ..plugin.cmdkit import Kit, kit_fixture, local_kit_fixture  # noqa: F401  (fixtures)
from ..plugin.test_memories_forget_proof import wait_texts
from .conftest import Page, path_of

OTTER = "The otter deploy <script>alert('x')</script> runs on Fridays."
PARSER = "Tabs are banned in the parser module."


def seed(kit: Kit, *texts: str) -> None:
    host = kit.host(answers=[])
    for text in texts:
        stored = host.call_tool("hindsight_retain", {"items": [{"content": text}], "async": False})
        assert not stored.is_error, stored.text


def test_the_server_listens_on_loopback_at_a_random_port(local_kit: Kit, serve: Callable[..., Page]) -> None:
    first, second = serve(local_kit), serve(local_kit)
    assert first.server.server_address[0] == "127.0.0.1" and first.server.port > 0
    assert first.server.port != second.server.port
    assert first.server.url.startswith(f"http://127.0.0.1:{first.server.port}/?token=")
    assert first.server.token != second.server.token and first.server.cookie_name != second.server.cookie_name


def test_a_request_without_the_token_is_refused(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, PARSER)
    page = serve(local_kit)
    for path in ("/", "/queue", "/doctor", "/memory?id=x", "/forget?by=query&value=Tabs"):
        refused = page.get(path, signed_in=False)
        assert refused.status == 403 and "Tabs" not in refused.body and "needs its token" in refused.body
    wrong = page.get("/", signed_in=False, headers={"Cookie": f"{page.server.cookie_name}=guess"})
    assert wrong.status == 403
    other_port = page.get("/", signed_in=False, headers={"Cookie": f"hh_ui_1={page.server.token}"})
    assert other_port.status == 403
    bad_token = page.get("/?token=guess", signed_in=False)
    assert bad_token.status == 403 and "set-cookie" not in bad_token.headers


def test_the_token_link_sets_a_strict_cookie_and_drops_the_token(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, PARSER)
    page = serve(local_kit)
    first = page.get(f"/?token={page.server.token}&text=Tabs", signed_in=False)
    assert first.status == 303
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{page.cookie}; ") and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert path_of(first.headers["location"]) == "/?text=Tabs" and page.server.token not in first.headers["location"]
    listed = page.get("/?text=Tabs", headers={"Cookie": cookie.split(";")[0]})
    assert listed.status == 200 and PARSER in listed.body
    assert "script-src" not in listed.headers["content-security-policy"]
    assert listed.headers["content-security-policy"].startswith("default-src 'none'")
    assert listed.headers["cache-control"] == "no-store" and listed.headers["referrer-policy"] == "same-origin"


def test_another_host_name_is_refused_even_with_the_cookie(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, PARSER)
    page = serve(local_kit)
    port = page.server.port
    for host in (f"rebind.example:{port}", "127.0.0.1", f"127.0.0.1:{port + 1}", f"localhost.evil:{port}"):
        refused = page.get("/", headers={"Host": host})
        assert refused.status == 403 and PARSER not in refused.body, host
    assert page.get("/", headers={"Host": f"localhost:{port}"}).status == 200


def test_memory_text_is_escaped_never_markup(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, OTTER)
    page = serve(local_kit)
    listed = page.get("/")
    assert "<script>" not in listed.body and "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in listed.body
    memory_id = local_kit.units(local_kit.project_bank)[0]["id"]
    shown = page.get(f"/memory?bank={local_kit.project_bank}&id={memory_id}")
    assert shown.status == 200 and "<script>" not in shown.body and "&lt;script&gt;" in shown.body
    searched = page.get("/?text=%22%3E%3Cscript%3E")  # the search box echoes "><script>
    assert '"><script>' not in searched.body and "&quot;&gt;&lt;script&gt;" in searched.body


def test_forget_needs_the_confirmation_post_with_its_csrf_token(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, OTTER, PARSER)
    page = serve(local_kit)
    bank = local_kit.project_bank
    step = page.get(f"/forget?bank={bank}&by=query&value=otter")
    assert step.status == 200 and "would forget 1 memories" in step.body and "Yes, forget 1" in step.body
    assert sorted(local_kit.texts(bank)) == sorted([OTTER, PARSER])  # showing the step changed nothing
    form = {"csrf": step.csrf(), "bank": bank, "by": "query", "value": "otter"}
    refusals = [
        page.request("POST", "/forget", form={**form, "csrf": "stale"}),
        page.request("POST", "/forget", form={k: v for k, v in form.items() if k != "csrf"}),
        page.request("POST", "/forget", form=form, headers={"Origin": "http://rebind.example"}),
        page.request("POST", "/forget", form=form, headers={"Origin": "null"}),
        page.request("POST", "/forget", form=form, headers={"Sec-Fetch-Site": "cross-site"}),
        page.request("POST", "/forget", form=form, signed_in=False),
        page.request("POST", "/forget", form=form, headers={"Host": f"rebind.example:{page.server.port}"}),
    ]
    assert [r.status for r in refusals] == [403] * len(refusals)
    assert sorted(local_kit.texts(bank)) == sorted([OTTER, PARSER])
    done = page.request(
        "POST",
        "/forget",
        form=form,
        headers={"Origin": page.base, "Sec-Fetch-Site": "same-origin"},
    )
    assert done.status == 200 and "forgot 1 memories" in done.body
    assert local_kit.texts(bank) == [PARSER]


def test_the_page_answers_no_question_it_was_not_armed_for() -> None:
    ui = PageUI()
    assert ui.select("Forget 3 memories?", [CONFIRM, "Cancel"]) is None
    ui.arm(CONFIRM)
    assert ui.select("Import?", ["Yes", "No"]) is None  # armed for a forget, not for this
    assert ui.select("Forget 3 memories?", [CONFIRM, "Cancel"]) is None  # one answer, used up
    ui.arm(CONFIRM)
    assert ui.select("Forget 3 memories?", [CONFIRM, "Cancel"]) == CONFIRM


def test_list_pages_newest_first_and_search_narrows(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, *(f"Fact number {n} about the heron pipeline." for n in range(5)), PARSER)
    page = serve(local_kit)
    first = page.get("/?limit=2")
    assert "id=total>6<" in first.body and first.body.count("class=memory") == 2
    assert "older →" in first.body and "Fact number 0" not in first.body
    assert first.body.index(PARSER) < first.body.index("Fact number 4")  # newest first
    last = page.get("/?limit=2&page=3")
    assert last.body.count("class=memory") == 2 and "older →" not in last.body and "← newer" in last.body
    found = page.get("/?text=parser")
    assert "id=total>1<" in found.body and PARSER in found.body and "heron" not in found.body
    bad = page.get("/?since=yesterday")
    assert "since must be a date" in bad.body


def test_queue_and_doctor_show_what_the_commands_say(local_kit: Kit, serve: Callable[..., Page]) -> None:
    seed(local_kit, PARSER)
    page = serve(local_kit)
    queue = page.host.command("/hindsight:queue")
    shown = page.get("/queue")
    assert shown.status == 200 and queue.text.strip().replace("<", "&lt;") in shown.body.replace("&#x27;", "'")
    doctor = page.host.command("/hindsight:doctor --json")
    assert doctor.data is not None
    report = page.get("/doctor")
    assert report.status == 200
    for check in doctor.data["checks"]:
        assert f"<td>{check['name']}</td>" in report.body


def test_the_page_stops_when_idle(local_kit: Kit, serve: Callable[..., Page]) -> None:
    page = serve(local_kit, idle_s=0.5)
    assert page.get("/").status == 200
    page.thread.join(10)
    assert not page.thread.is_alive() and page.outcome == ["idle"]


def test_list_search_and_forget_a_document_on_each_backend(kit: Kit, serve: Callable[..., Page]) -> None:
    seed(kit, PARSER)
    before = wait_texts(kit, True, "parser")
    assert any("parser" in t for t in before)
    page = serve(kit)
    listed = page.get("/?text=parser")
    assert listed.status == 200 and "class=memory" in listed.body, listed.body[-600:]
    memory_id = next(str(u["id"]) for u in kit.units(kit.project_bank) if "parser" in str(u["text"]))
    shown = page.get(f"/memory?bank={kit.project_bank}&id={memory_id}")
    document = next(str(u["document_id"]) for u in kit.units(kit.project_bank) if str(u["id"]) == memory_id)
    assert shown.status == 200 and "Forget its whole document" in shown.body
    step = page.get(f"/forget?bank={kit.project_bank}&by=document&value={document}")
    assert "Yes, forget" in step.body
    form = {"csrf": step.csrf(), "bank": kit.project_bank, "by": "document", "value": document}
    done = page.request("POST", "/forget", form=form, headers={"Origin": page.base})
    assert done.status == 200 and "forgot" in done.body, done.body[-600:]
    deadline = time.monotonic() + 60
    while any("parser" in t for t in kit.texts(kit.project_bank)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not any("parser" in t for t in kit.texts(kit.project_bank))
