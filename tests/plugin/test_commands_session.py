"""Session governance commands through ``Host.command`` (docs/governance.md, docs/commands.md), on both backends.

``/hindsight:session``, ``:mode``, ``:retain``, ``:next-opt-out``, ``:tag``, ``:route`` and the
status report; argument completion; bad arguments (a warning that shows the usage); a corrupt
meta file failing closed; and what each mode does to the ``context`` and ``agent_end`` hooks.
"""

from __future__ import annotations

import json
import stat
from typing import Any

from hindsight_hooks.hooks import Host, assistant_message, user_message
from hindsight_hooks.retain.injected import is_injected

from .cmdkit import Kit, auto_retained, closed_port_url, hs_kit_fixture, kit_fixture, local_kit_fixture, sid_of, ui_of  # noqa: F401  (fixtures)

MODE_USAGE = "usage: /hindsight:mode normal|read-only|ignored"


def meta_of(kit: Kit) -> dict[str, Any]:
    data = json.loads((kit.state / "session-meta" / f"{sid_of(kit)}.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_session_and_mode_report_and_persist(kit: Kit) -> None:
    host = kit.host()
    s = host.command("/hindsight:session")
    assert (s.level, s.text) == (
        "info",
        "mode=normal recall=on retain=on next_retain=normal tags=none\nAutomatic recall/retain follow config.",
    )
    expected = {
        "read-only": "mode=read-only recall=on retain=off\nRecall can read; automatic retain is off.",
        "ignored": "mode=ignored recall=off retain=off\nAutomatic recall and retain are off.",
        "normal": "mode=normal recall=on retain=on\nAutomatic recall/retain follow config.",
    }
    for mode, text in expected.items():
        r = host.command(f"/hindsight:mode {mode}")
        assert (r.level, r.text) == ("info", text)
        assert r.data is not None and r.data["mode"] == mode
        assert meta_of(kit)["mode"] == mode
    path = kit.state / "session-meta" / f"{sid_of(kit)}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    record = meta_of(kit)
    assert record["created_at"] and record["updated_at"] and record["retained"] is True


def test_mode_bad_arguments_are_warnings_with_usage(kit: Kit) -> None:
    host = kit.host()
    host.command("/hindsight:mode read-only")
    for args, why in (
        ("tools-only", "tools-only is reserved"),
        ("bogus", "unknown mode 'bogus'"),
        ("", ""),
        ("normal ignored", ""),
        ('"unclosed', "cannot parse arguments"),
    ):
        r = host.command(f"/hindsight:mode {args}")
        assert r.level == "warning" and r.text.endswith(MODE_USAGE), args
        assert why in r.text
    assert meta_of(kit)["mode"] == "read-only"  # nothing changed


def test_retain_switch_and_next_opt_out(kit: Kit) -> None:
    host = kit.host()
    off = host.command("/hindsight:retain off")
    assert (off.level, off.text) == ("info", "requested=off effective=off mode=normal")
    assert off.data == {"requested": "off", "effective": "off", "mode": "normal"}
    host.command("/hindsight:mode read-only")
    on = host.command("/hindsight:retain on")
    assert on.text == "requested=on effective=off mode=read-only"
    assert host.command("/hindsight:mode normal").text.startswith("mode=normal recall=on retain=on")
    for bad in ("/hindsight:retain", "/hindsight:retain maybe", "/hindsight:retain on off"):
        r = host.command(bad)
        assert r.level == "warning" and r.text == "usage: /hindsight:retain on|off"
    opt = host.command("/hindsight:next-opt-out")
    assert (opt.level, opt.text) == ("info", "the next agent run skips automatic retain (next_retain=off)")
    assert meta_of(kit)["next_retain_mode"] == "off"
    assert "next_retain=off" in host.command("/hindsight:session").text
    extra = host.command("/hindsight:next-opt-out now")
    assert extra.level == "warning" and extra.text == "usage: /hindsight:next-opt-out"


def test_tags_add_remove_and_refusals(kit: Kit) -> None:
    host = kit.host()
    assert host.command("/hindsight:tag add  team-x ").text == "tags: team-x"
    assert host.command('/hindsight:tag add "two words"').text == "tags: team-x, two words"
    refusals = {
        "/hindsight:tag add team-x": "already set",
        "/hindsight:tag add repo:other": "reserved",
        "/hindsight:tag add Session:abc": "reserved",
        f"/hindsight:tag add {'x' * 81}": "at most 80",
        "/hindsight:tag add bad\x01tag": "control",
        "/hindsight:tag remove nope": "is not set",
    }
    for line, why in refusals.items():
        r = host.command(line)
        assert r.level == "warning" and r.text.startswith("tag not changed: ") and why in r.text, line
        assert r.data == {"tags": ["team-x", "two words"]}
    for bad in ("/hindsight:tag", "/hindsight:tag add", "/hindsight:tag rename x"):
        r = host.command(bad)
        assert (r.level, r.text) == ("warning", "usage: /hindsight:tag add|remove <tag>")
    assert host.command("/hindsight:tag remove team-x").text == "tags: two words"
    assert meta_of(kit)["tags"] == ["two words"]
    assert "tags=two words" in host.command("/hindsight:session").text


def test_completion_of_names_and_arguments(local_kit: Kit) -> None:
    host = local_kit.host()
    names = host.complete("/hindsight:")
    for name in (
        "session",
        "mode",
        "next-opt-out",
        "retain",
        "tag",
        "last-recall",
        "recall-cleanup",
        "queue",
        "flush",
        "doctor",
        "route",
        "init",
    ):
        assert f"/hindsight:{name}" in names
    assert host.complete("/hind") == sorted(host.complete("/hind")) and "/hindsight" in host.complete("/hind")
    assert host.complete("/hindsight:mode r") == ["/hindsight:mode read-only"]
    assert host.complete("/hindsight:mode ") == [f"/hindsight:mode {m}" for m in ("normal", "read-only", "ignored")]
    assert host.complete("/hindsight:mode tools") == []  # reserved: never offered
    assert host.complete("/hindsight:retain o") == ["/hindsight:retain on", "/hindsight:retain off"]
    assert host.complete("/hindsight:queue --j") == ["/hindsight:queue --jobs", "/hindsight:queue --json"]
    assert host.complete("/hindsight:queue --jobs --r") == ["/hindsight:queue --jobs --requeue-dead"]
    assert host.complete("/hindsight:queue --json --j") == ["/hindsight:queue --json --jobs"]
    assert host.complete("/hindsight:doctor --fix ") == ["/hindsight:doctor --fix --json"]
    assert host.complete("/hindsight:doctor --") == ["/hindsight:doctor --json", "/hindsight:doctor --fix"]
    assert host.complete("/hindsight:init --f") == ["/hindsight:init --force"]
    assert host.complete("/hindsight:last-recall -") == ["/hindsight:last-recall --json"]
    assert host.complete("/hindsight:recall-cleanup --p") == ["/hindsight:recall-cleanup --prune"]
    assert host.complete("/hindsight:tag r") == ["/hindsight:tag remove"]
    assert host.complete("/hindsight:tag remove ") == []
    host.command("/hindsight:tag add alpha")
    host.command("/hindsight:tag add beta")
    host.command("/hindsight:tag add alps")
    assert host.complete("/hindsight:tag remove al") == ["/hindsight:tag remove alpha", "/hindsight:tag remove alps"]
    assert host.complete("/hindsight:tag remove ") == [f"/hindsight:tag remove {t}" for t in ("alpha", "beta", "alps")]
    assert host.complete("/hindsight:tag add al") == []
    host.command('/hindsight:tag add "two words"')
    assert host.complete("/hindsight:tag remove two") == ["/hindsight:tag remove two words"]
    other = local_kit.host("other")  # another session: its own tags, never this one's
    assert other.complete("/hindsight:tag remove ") == []
    other.command("/hindsight:session")
    assert other.complete("/hindsight:tag remove ") == []
    assert host.complete("/hindsight:tag remove b") == ["/hindsight:tag remove beta"]


def test_route_is_a_dry_run_that_writes_nothing(kit: Kit) -> None:
    host = kit.host()
    r = host.command("/hindsight:route I always prefer tabs in every workflow")
    assert r.level == "info" and r.data is not None
    assert r.data["route"] == "global" and r.data["confidence"] == 0.85 and r.data["writes"] == []
    assert r.data["reason"].startswith("dry-run only: user_retain.mode=explicit-only; suggested=global; signals=")
    assert "dry-run only; no automatic writes in explicit-only mode" in r.data["safety_notes"]
    assert r.text.splitlines()[0] == "route: global (confidence 0.85)" and "writes: none" in r.text
    skip = host.command("/hindsight:route save the temporary screenshot")
    assert skip.data is not None and skip.data["route"] == "skip"
    usage = host.command("/hindsight:route")
    assert (usage.level, usage.text) == ("warning", "usage: /hindsight:route <text>")
    assert kit.jobs() == [] and kit.texts(kit.project_bank) == [] and kit.texts(kit.user_bank) == []


def test_router_mode_is_visible_and_routes_writes(kit: Kit) -> None:
    kit.configure(sections={"user_retain": {"mode": "router"}, "notifications": {"startup": True}})
    host = kit.host()
    (startup,) = [t for t in ui_of(host).texts() if t.startswith("hindsight: backend ")]
    assert "user_retain=router" in startup  # shown at startup, in /hindsight and /hindsight:session
    r = host.command("/hindsight:route I always prefer tabs; fix the bug in the config module")
    assert r.data is not None and r.data["route"] == "both" and r.data["writes"] == ["project", "global"]
    assert r.data["reason"].startswith("router mode: suggested=both; signals=")
    assert {t["bank_id"] for t in r.data["targets"] if t["will_write"]} == {kit.project_bank, kit.user_bank}
    assert "user_retain=router" in host.command("/hindsight:session").text
    assert "user_retain: router" in host.command("/hindsight").text
    assert kit.jobs() == [] and kit.texts(kit.user_bank) == []  # still a dry run


def test_status_report_text_and_data(kit: Kit) -> None:
    kit.configure(sections={"recall": {"budget": "high", "bogus_key": 1}})
    host = kit.host()
    host.command("/hindsight:tag add team-x")
    r = host.command("/hindsight")
    assert r.level == "info" and r.data is not None
    lines = r.text.splitlines()
    assert lines[0].startswith("hindsight-hooks ") and "enabled: yes" in lines[0]
    if kit.backend == "hindsight":
        assert f"backend: hindsight {kit.url} (from env); connection connected" in r.text
        assert r.data["url_source"] == "env"
    else:
        assert f"backend: local {kit.db}" in r.text
    assert f"banks: project={kit.project_bank} (project); user={kit.user_bank} (user)" in r.text
    assert "session: mode=normal recall=on retain=on next_retain=normal tags=team-x" in r.text
    assert "user_retain: explicit-only" in r.text
    assert "queue: active=0 due=0 waiting=0 dead=0 malformed=0 oldest=- next_attempt=-" in r.text
    assert "recall: on budget=high max_tokens=800" in r.text
    assert "config warnings: " in r.text and "recall.bogus_key" in r.text
    assert r.data["banks"] == {"project": kit.project_bank, "user": kit.user_bank}
    assert r.data["session"]["tags"] == ["team-x"] and r.data["queue"]["active"]["valid"] == 0
    assert any("bogus_key" in w for w in r.data["config_warnings"])
    retained = host.call_tool("hindsight_retain", {"items": [{"content": "Status receipt fact."}], "async": False})
    assert not retained.is_error
    after = host.command("/hindsight")
    assert "last delivery: " in after.text and f"bank={kit.project_bank}" in after.text
    assert after.data is not None and after.data["last_receipt"]["outcome"]["items_count"] == 1


def test_status_redacts_credentials_in_the_url(hs_kit: Kit) -> None:
    url = closed_port_url().replace("http://", "http://alice:hunter2secret@")
    hs_kit.configure(sections={"hindsight": {"timeout_ms": 1000}})
    hs_kit.use_url(url)
    host = hs_kit.host()
    r = host.command("/hindsight")
    assert "hunter2secret" not in r.text and "hunter2secret" not in json.dumps(r.data)
    assert "connection offline" in r.text
    assert all("hunter2secret" not in t for _, t in ui_of(host).notices)


def test_disabled_or_broken_config_never_raises(local_kit: Kit) -> None:
    lines = [
        "/hindsight",
        "/hindsight:session",
        "/hindsight:mode normal",
        "/hindsight:next-opt-out",
        "/hindsight:retain on",
        "/hindsight:tag add x",
        "/hindsight:last-recall",
        "/hindsight:queue",
        "/hindsight:flush",
        "/hindsight:doctor",
        "/hindsight:route hello",
        "/hindsight:recall-cleanup",
    ]
    local_kit.configure({"enabled": False})
    off = local_kit.host()
    for line in lines:
        r = off.command(line)
        assert not r.text.startswith(f"{line.split()[0]} failed"), (line, r)
    assert off.command("/hindsight").text.splitlines()[1] == "memory: off (enabled=false or backend=off)"
    assert off.command("/hindsight:mode normal").level == "warning"
    tool = off.call_tool("hindsight_recall", {"query": "q"})
    assert tool.is_error and "disabled" in tool.text
    local_kit.config_path.write_text('backend = "local"\n[recall\nbudget = 1\n', encoding="utf-8")
    broken = local_kit.host("broken")
    assert any("config error" in t for t in ui_of(broken).texts("error"))
    for line in lines:
        r = broken.command(line)
        assert not r.text.startswith(f"{line.split()[0]} failed"), (line, r)
    status = broken.command("/hindsight")
    assert status.level == "error" and "config error" in status.text and "config.toml" in status.text
    doctor = broken.command("/hindsight:doctor")
    assert doctor.level == "error" and doctor.text.startswith("fail config: ")
    assert "fix the TOML syntax at the named line" in doctor.text


# -- fail-closed meta and modes with hooks -------------------------------------------------------------


def _turn(host: Host, question: str, answer: str) -> bool:
    """One agent run: context (returns whether a recall block was injected), then agent_end."""
    msgs = [user_message(question)]
    seen = host.context(msgs)
    injected = any(is_injected(m) for m in seen)
    host.agent_end([*msgs, assistant_message(answer)])
    return injected


def _prepare(kit: Kit) -> Host:
    # The test server's fake embeddings rank a short query only; the long built-in preambles
    # would drown "Kestrel" (measured), so they are blanked here.
    recall = {"types": ["world", "experience"], "project_query_preamble": "", "user_query_preamble": ""}
    kit.configure(sections={"recall": recall})
    seeder = kit.host("seeder")
    stored = seeder.call_tool(
        "hindsight_retain", {"items": [{"content": "Kestrel deploys on Fridays."}], "async": False}
    )
    assert not stored.is_error
    return seeder


def test_corrupt_meta_fails_closed_until_a_setter_repairs_it(kit: Kit) -> None:
    _prepare(kit)
    folder = kit.state / "session-meta"
    folder.mkdir(mode=0o700, exist_ok=True)
    meta = folder / f"{sid_of(kit)}.json"
    meta.write_text("{not json", encoding="utf-8")
    host = kit.host()
    warnings = [t for t in ui_of(host).texts("warning") if meta.name in t]
    assert len(warnings) == 1 and "fail" in warnings[0]
    s = host.command("/hindsight:session")
    assert s.level == "warning"
    assert s.text.startswith("mode=ignored recall=off retain=off next_retain=normal tags=none")
    assert meta.name in s.text and "/hindsight:mode normal" in s.text
    assert host.command("/hindsight").level == "warning"
    assert _turn(host, "When does Kestrel deploy?", "On Fridays.") is False
    assert not auto_retained(kit)
    assert len([t for t in ui_of(host).texts("warning") if meta.name in t]) == 1  # once per session
    repaired = host.command("/hindsight:mode normal")
    assert repaired.text == "mode=normal recall=on retain=on\nAutomatic recall/retain follow config."
    assert meta_of(kit)["mode"] == "normal"
    kept = list(folder.glob(f"{meta.name}.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_text(encoding="utf-8") == "{not json"
    assert _turn(host, "When does Kestrel deploy again?", "Fridays.") is True
    assert auto_retained(kit)


def test_unknown_enum_in_meta_fails_closed(kit: Kit) -> None:
    folder = kit.state / "session-meta"
    folder.mkdir(mode=0o700)
    record = {"retained": True, "recall_mode": "normal", "retain_mode": "normal", "mode": "bogus", "tags": []}
    (folder / f"{sid_of(kit)}.json").write_text(json.dumps(record), encoding="utf-8")
    host = kit.host()
    s = host.command("/hindsight:session")
    assert s.level == "warning" and s.text.startswith("mode=ignored recall=off retain=off")
    assert s.data is not None and s.data["failed_closed"] is True


def test_modes_drive_automatic_recall_and_retain(kit: Kit) -> None:
    _prepare(kit)
    host = kit.host()
    q, a = "When does Kestrel deploy?", "Kestrel deploys on Fridays."
    host.command("/hindsight:mode read-only")
    assert _turn(host, q, a) is True and not auto_retained(kit)
    host.command("/hindsight:mode ignored")
    assert _turn(host, q + " (2)", a) is False and not auto_retained(kit)
    host.command("/hindsight:mode normal")
    host.command("/hindsight:retain off")
    assert _turn(host, q + " (3)", a) is True and not auto_retained(kit)
    host.command("/hindsight:retain on")
    host.command("/hindsight:next-opt-out")
    assert _turn(host, q + " (4)", a) is True and not auto_retained(kit)  # skipped once ...
    assert meta_of(kit)["next_retain_mode"] == "normal"  # ... and consumed
    assert _turn(host, q + " (5)", a) is True and auto_retained(kit)
    assert "Kestrel deploys on Fridays." in kit.texts(kit.project_bank)


def test_free_text_arguments_survive_an_apostrophe(kit: Kit) -> None:
    """Route candidates and tags are prose: a lone quote is text, not a shell syntax error."""
    host = kit.host()
    r = host.command("/hindsight:route I don't like tabs; I always prefer spaces")
    assert r.level == "info" and r.data is not None and r.data["route"] == "global", r.text
    assert host.command("/hindsight:tag add it's-mine").text == "tags: it's-mine"
    assert meta_of(kit)["tags"] == ["it's-mine"]
    # Commands whose arguments are options still reject an unparsable line.
    bad = host.command('/hindsight:queue "--json')
    assert bad.level == "warning" and "cannot parse arguments" in bad.text and bad.text.endswith("[--requeue-dead]")


def test_route_judges_redacted_text_only(local_kit: Kit) -> None:
    host = local_kit.host()
    # The secret's own words never steer the route: raw, "temporary" would be a skip signal.
    r = host.command("/hindsight:route the repo config holds password=temporary")
    assert r.data is not None and r.data["route"] == "project", r.data
    assert "temporary detail" not in r.data["matched_signals"]
    assert "review/redact before retain: secret-like content" in r.data["safety_notes"]
    assert "temporary" not in json.dumps(r.data) and "temporary" not in r.text


def test_commands_without_arguments_refuse_extra_words(kit: Kit) -> None:
    host = kit.host()
    for line, usage in (("/hindsight now", "usage: /hindsight"), ("/hindsight:session x", "usage: /hindsight:session")):
        r = host.command(line)
        assert (r.level, r.text) == ("warning", usage), line


def test_no_handler_raises_even_without_the_hosts_safety_net(kit: Kit) -> None:
    """Each command's own handler turns every failure into a result (the host's catch is a backstop).

    The session meta is a folder (unreadable), the queue file is a folder, the snapshot is not
    JSON: every command still answers with a result, never an exception.
    """
    host = kit.host()
    (kit.state / "session-meta").mkdir(exist_ok=True)
    (kit.state / "session-meta" / f"{sid_of(kit)}.json").mkdir()
    (kit.state / "last-recall.json").write_text("{not json", encoding="utf-8")
    s = host.command("/hindsight:session")
    assert s.level == "warning" and "fails closed" in s.text and "a folder is in its place" in s.text
    commands = host.commands()
    lines = [
        "",
        "--bogus",
        '"unclosed',
        "normal",
        "on",
        "add x",
        "remove x",
        "--json",
        "--jobs --json",
        "--fix",
        "some text",
        "/no/such/file.jsonl",
    ]
    for name, cmd in commands.items():
        if "import" in name or name == "hindsight:init":
            continue
        for args in lines:
            r = cmd.handler(args, host.ctx)
            assert r.level in ("info", "warning", "error") and isinstance(r.text, str) and r.text, (name, args)
    # A setter repaired the record and kept what it could not read, aside.
    assert meta_of(kit)["mode"] == "normal"
    assert [p.name for p in (kit.state / "session-meta").iterdir() if ".corrupt-" in p.name]
