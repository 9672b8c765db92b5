"""``hindsight-hooks mcp`` as a real child process, spoken to by the MCP SDK's own client.

Every test spawns the installed console script in a tmp project (HOME and XDG folders in tmp,
no inherited ``HINDSIGHT*``) and talks to it with ``mcp.client.stdio.stdio_client`` and
``ClientSession``, exactly as an agent program would; what was stored is read back from the
real SQLite file, the real queue file, or the real Hindsight server. The end-of-session tests
hold the process themselves (the SDK's transport kills a server 2 s after closing its stdin),
so they can see the exit code and what was left on disk.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.text import TextReceiveStream
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from hindsight_hooks.host_sessions import session_file_for
from hindsight_hooks.hosts.mcp_server import DETAILS_META_KEY, ServerOptions
from hindsight_hooks.plugin.control.tool_params import RecallParams, RetainParams

from .bridge_client import LOCAL_CONFIG, clean_env

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"
T = TypeVar("T")
Body = Callable[[ClientSession], Awaitable[T]]
CALL_TIMEOUT_S = 120  # generous: a loaded 2-core machine runs six suites at once
GITHUB_TOKEN = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
USER_BANK = '[banks.user]\nenabled = true\nbank_id = "me"\n'  # only a user config may name it (ADR-063)


class Project:
    """A tmp project folder and the environment its server and CLI runs get."""

    def __init__(
        self, tmp: Path, config: str | None = LOCAL_CONFIG, user_config: str | None = None, **env: str
    ) -> None:
        self.tmp = tmp
        self.root = tmp / "proj"
        (self.root / ".hindsight").mkdir(parents=True)
        if config is not None:
            (self.root / ".hindsight" / "config.toml").write_text(config, encoding="utf-8")
        if user_config is not None:
            (tmp / "xdg-config" / "hindsight-hooks").mkdir(parents=True)
            (tmp / "xdg-config" / "hindsight-hooks" / "config.toml").write_text(user_config, encoding="utf-8")
        self.env = clean_env(tmp, **env)
        self.stderr = tmp / "server-stderr.txt"

    @property
    def db(self) -> Path:
        return self.tmp / "xdg-data" / "hindsight-hooks" / "memory.db"

    @property
    def queue(self) -> Path:
        return self.root / ".hindsight" / "retain-queue.jsonl"

    def argv(self, *extra: str) -> list[str]:
        assert SCRIPT.exists(), f"console script missing: {SCRIPT} (pip install -e '.[test]')"
        return [str(SCRIPT), "mcp", "--cwd", str(self.root), *extra]

    def units(self) -> list[tuple[str, str]]:
        """``(bank_id, content)`` of every stored memory, read through a read-only connection."""
        if not self.db.exists():
            return []
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True)
        try:
            return [(str(b), str(c)) for b, c in conn.execute("SELECT bank_id, content FROM units ORDER BY rowid")]
        finally:
            conn.close()

    def queued(self) -> list[dict[str, Any]]:
        if not self.queue.exists():
            return []
        return [json.loads(line) for line in self.queue.read_text(encoding="utf-8").splitlines() if line.strip()]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Run ``hindsight-hooks <args>`` from the project folder, as a person in a shell would."""
        return subprocess.run(
            [str(SCRIPT), *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=CALL_TIMEOUT_S,
            check=False,
        )

    def with_client(self, body: Body[T], *extra: str) -> T:
        """Spawn the server through the SDK's stdio client, initialise a session, run ``body``."""

        async def run() -> T:
            params = StdioServerParameters(command=self.argv(*extra)[0], args=self.argv(*extra)[1:], env=self.env)
            with self.stderr.open("a", encoding="utf-8") as errlog, anyio.fail_after(CALL_TIMEOUT_S):
                async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()
                    return await body(session)

        return anyio.run(run)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    """The embedded store, with a user bank named in the user config."""
    return Project(tmp_path, user_config=USER_BANK)


def text_of(result: types.CallToolResult) -> str:
    return "\n".join(part.text for part in result.content if isinstance(part, types.TextContent))


def details_of(result: types.CallToolResult) -> dict[str, Any]:
    assert result.meta is not None
    details = result.meta[DETAILS_META_KEY]
    assert isinstance(details, dict)
    return details


def retain_args(*contents: str) -> dict[str, Any]:
    return {"items": [{"content": c} for c in contents]}


# -- the catalog -----------------------------------------------------------------------------------


def test_list_tools_shows_the_sessions_tools_with_their_pydantic_schemas(project: Project) -> None:
    async def body(session: ClientSession) -> types.ListToolsResult:
        return await session.list_tools()

    tools = {tool.name: tool for tool in project.with_client(body).tools}
    assert set(tools) == {
        "hindsight_retain",
        "hindsight_retain_global",
        "hindsight_recall",
        "hindsight_reflect",
        "memory_edit",
    }
    assert tools["hindsight_retain"].input_schema == RetainParams.model_json_schema(by_alias=False)
    assert tools["hindsight_recall"].input_schema == RecallParams.model_json_schema(by_alias=False)
    assert tools["hindsight_recall"].input_schema["required"] == ["query"]
    assert "self-contained" in (tools["hindsight_retain"].description or "")
    assert "proactively" in (tools["hindsight_recall"].description or "")


def test_without_a_user_bank_or_config_the_embedded_store_offers_four(tmp_path: Path) -> None:
    bare = Project(tmp_path, config=None)  # no config at all: the embedded store under XDG_DATA_HOME

    async def body(session: ClientSession) -> list[str]:
        return sorted(tool.name for tool in (await session.list_tools()).tools)

    assert bare.with_client(body) == ["hindsight_recall", "hindsight_reflect", "hindsight_retain", "memory_edit"]
    assert "tools: hindsight_retain, hindsight_recall" in bare.stderr.read_text(encoding="utf-8")


# -- calls -----------------------------------------------------------------------------------------


def test_retain_then_recall_returns_the_memory_from_the_embedded_store(project: Project) -> None:
    fact = "The Kestrel cache runs on Postgres 16, decided in the storage review."

    async def body(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult]:
        stored = await session.call_tool("hindsight_retain", retain_args(fact))
        found = await session.call_tool("hindsight_recall", {"query": "Kestrel cache Postgres"})
        return stored, found

    stored, found = project.with_client(body)
    assert not stored.is_error and text_of(stored) == "1 memory stored."
    (unit_id,) = details_of(stored)["ids"]
    assert not found.is_error
    assert text_of(found).startswith("Found 1 relevant memory")
    assert f"- {fact} (id: {unit_id})" in text_of(found)
    assert [content for _, content in project.units()] == [fact]


def test_a_bad_argument_is_an_error_result_naming_the_field(project: Project) -> None:
    async def body(session: ClientSession) -> list[types.CallToolResult]:
        return [
            await session.call_tool("hindsight_retain", {"items": []}),
            await session.call_tool("hindsight_retain", {"items": [{"content": "x"}], "bank": "elsewhere"}),
            await session.call_tool("hindsight_recall", {"query": "x", "colour": "red"}),
            await session.call_tool("no_such_tool", {}),
        ]

    empty, bank, extra, unknown = project.with_client(body)
    for result in (empty, bank, extra, unknown):
        assert result.is_error
    assert text_of(empty).startswith("Error: invalid arguments: items:")
    assert text_of(bank).startswith("Error: invalid arguments: bank:")
    assert "colour" in text_of(extra)
    assert text_of(unknown) == "Error: unknown tool: no_such_tool"
    assert details_of(bank)["error"]["kind"] == "invalid_arguments"
    assert project.units() == []


def test_read_only_set_from_the_shell_refuses_retain_and_keeps_recall(project: Project) -> None:
    """``--session-id cli`` (here through the environment) is the session plain shell commands use."""
    project.env["HINDSIGHT_HOOKS_SESSION_ID"] = "cli"

    async def body(session: ClientSession) -> list[types.CallToolResult]:
        results = [await session.call_tool("hindsight_retain", retain_args("Before read-only: builds use uv."))]
        assert project.cli("mode", "read-only").returncode == 0
        results.append(await session.call_tool("hindsight_retain", retain_args("During read-only: never stored.")))
        results.append(await session.call_tool("hindsight_recall", {"query": "builds use uv"}))
        assert project.cli("mode", "normal").returncode == 0
        results.append(await session.call_tool("hindsight_retain", retain_args("After read-only: tests use pytest.")))
        return results

    before, refused, recalled, after = project.with_client(body)
    assert not before.is_error and not after.is_error
    assert refused.is_error
    assert text_of(refused) == "Error: retain refused: session is read-only"  # Host.call_tool's own refusal
    assert details_of(refused)["error"]["kind"] == "disabled"
    assert not recalled.is_error and "Before read-only: builds use uv." in text_of(recalled)
    stored = [content for _, content in project.units()]
    assert stored == ["Before read-only: builds use uv.", "After read-only: tests use pytest."]


def test_a_new_session_is_not_the_shells(project: Project) -> None:
    """Without a session id the server has its own session: the shell's read-only is not its mode."""
    assert project.cli("mode", "read-only").returncode == 0

    async def body(session: ClientSession) -> types.CallToolResult:
        return await session.call_tool("hindsight_retain", retain_args("A separate session may retain."))

    assert not project.with_client(body).is_error
    assert [content for _, content in project.units()] == ["A separate session may retain."]


def test_secrets_in_retained_content_are_redacted_in_the_store(project: Project) -> None:
    async def body(session: ClientSession) -> types.CallToolResult:
        args = {
            "items": [{"content": f"The deploy bot pushes with token {GITHUB_TOKEN} to the mirror."}],
            "tags": [f"token-{GITHUB_TOKEN}"],
        }
        return await session.call_tool("hindsight_retain", args)

    result = project.with_client(body)
    assert not result.is_error, text_of(result)
    (content,) = [content for _, content in project.units()]
    assert content == "The deploy bot pushes with token [REDACTED_GITHUB_TOKEN] to the mirror."
    assert GITHUB_TOKEN not in project.db.read_bytes().decode("latin-1")
    assert GITHUB_TOKEN not in project.stderr.read_text(encoding="utf-8")


# -- the end of the session --------------------------------------------------------------------------


@asynccontextmanager
async def own_transport(process: Process, wire: list[str]) -> Any:
    """Client streams over a process we hold ourselves (so we decide when stdin closes); every
    stdout line is kept in ``wire`` and must parse as a JSON-RPC message."""
    assert process.stdin is not None and process.stdout is not None
    to_client_w, to_client = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    from_client, from_client_r = anyio.create_memory_object_stream[SessionMessage](16)

    async def read() -> None:
        assert process.stdout is not None
        buffer = ""
        async with to_client_w:
            async for chunk in TextReceiveStream(process.stdout):
                *lines, buffer = (buffer + chunk).split("\n")
                for line in lines:
                    wire.append(line)
                    await to_client_w.send(SessionMessage(types.jsonrpc_message_adapter.validate_json(line)))

    async def write() -> None:
        assert process.stdin is not None
        async with from_client_r:
            async for message in from_client_r:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                await process.stdin.send(data.encode())

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(write)
        yield to_client, from_client
        group.cancel_scope.cancel()


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def run_and_end(project: Project, end: str, wire: list[str] | None = None) -> tuple[int, types.CallToolResult]:
    """Retain one memory, then end the server by closing stdin or by SIGTERM; return its exit code."""
    lines: list[str] = [] if wire is None else wire

    async def run() -> tuple[int, types.CallToolResult]:
        with project.stderr.open("a", encoding="utf-8") as errlog, anyio.fail_after(CALL_TIMEOUT_S):
            process = await anyio.open_process(project.argv(), env=project.env, stderr=errlog)
            async with own_transport(process, lines) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("hindsight_retain", retain_args("Queued before the end."))
                if end == "eof":
                    assert process.stdin is not None
                    await process.stdin.aclose()
                else:
                    process.send_signal(signal.SIGTERM)
                code = await process.wait()
            return code, result

    return anyio.run(run)


@pytest.mark.parametrize("end", ["eof", "sigterm"])
def test_the_server_ends_cleanly_and_the_queued_memory_stays_on_disk(tmp_path: Path, end: str) -> None:
    """A dead server: the retain is queued, the end-of-session flush cannot deliver it, the job stays."""
    config = 'backend = "hindsight"\n\n[hindsight]\ntimeout_ms = 1500\n\n[notifications]\nstartup = false\n'
    project = Project(tmp_path, config=config, HINDSIGHT_BASE_URL=closed_port_url())
    code, result = run_and_end(project, end)
    assert code == 0
    assert not result.is_error and text_of(result) == "1 memory queued."
    assert details_of(result)["pending"] is True
    (job,) = project.queued()
    assert [item["content"] for item in job["items"]] == ["Queued before the end."]
    err = project.stderr.read_text(encoding="utf-8")
    assert "the queue stays on disk" in err or "still queued" in err
    if end == "sigterm":
        assert "SIGTERM: ending the session" in err


def test_on_stdin_close_the_embedded_store_holds_the_memory(project: Project) -> None:
    code, result = run_and_end(project, "eof")
    assert code == 0 and text_of(result) == "1 memory stored."
    assert [content for _, content in project.units()] == ["Queued before the end."]
    assert project.queued() == []


def test_stdout_carries_only_mcp_while_notices_go_to_stderr(tmp_path: Path) -> None:
    """Start-up notices on, and a config value that warns: all of it is stderr; stdout is JSON-RPC."""
    config = 'backend = "local"\n\n[recall]\ntop_k = "many"\n'
    project = Project(tmp_path, config=config)
    wire: list[str] = []
    code, result = run_and_end(project, "eof", wire)
    assert code == 0 and not result.is_error
    answers = [json.loads(line) for line in wire]  # every line (the client also lists the tools)
    assert all(a["jsonrpc"] == "2.0" and "result" in a for a in answers), wire
    assert sorted(a["id"] for a in answers) == list(range(1, len(answers) + 1))  # one answer per request
    err = project.stderr.read_text(encoding="utf-8")
    assert "[hindsight]" in err and "top_k" in err
    assert "hindsight-hooks mcp: session mcp-" in err


# -- the session a server speaks for --------------------------------------------------------------------


def test_session_options_prefer_the_file_then_the_flag_then_the_environment(tmp_path: Path) -> None:
    env = {"HINDSIGHT_HOOKS_SESSION_ID": "from-env"}
    given = ServerOptions.resolve(cwd=tmp_path, session_file=Path("t.jsonl"), session_id="flag", env=env)
    assert given.session_file == tmp_path / "t.jsonl"
    flag = ServerOptions.resolve(cwd=tmp_path, session_id="flag", env=env)
    assert flag.session_file == session_file_for(tmp_path, "flag") == tmp_path / ".hindsight/sessions/flag.jsonl"
    assert ServerOptions.resolve(cwd=tmp_path, env=env).session_label == "from-env"
    odd = ServerOptions.resolve(cwd=tmp_path, session_id="../../etc/x y", env={})
    assert odd.session_file.parent == tmp_path / ".hindsight/sessions" and odd.session_label == "..-..-etc-x-y"
    new1, new2 = (ServerOptions.resolve(cwd=tmp_path, env={}) for _ in range(2))
    assert new1.session_label.startswith("mcp-") and new1.session_label != new2.session_label
    assert ServerOptions.resolve(cwd=tmp_path, session_id="..", env={}).session_label.startswith("mcp-")


# -- the real Hindsight server --------------------------------------------------------------------------


@pytest.mark.integration
def test_retain_then_recall_through_mcp_on_the_real_hindsight_server(
    tmp_path: Path, hindsight_url: str, make_bank: Callable[..., str]
) -> None:
    bank = make_bank("hh-mcp")
    config = (
        f'backend = "hindsight"\n\n[banks.project]\nbank_id = "{bank}"\n\n'
        "[mental_models]\nenabled = false\n\n[notifications]\nstartup = false\n"
    )
    project = Project(tmp_path, config=config, HINDSIGHT_BASE_URL=hindsight_url)
    fact = "The Osprey release train ships every second Tuesday."

    async def body(session: ClientSession) -> tuple[types.CallToolResult, types.CallToolResult, list[str]]:
        names = sorted(tool.name for tool in (await session.list_tools()).tools)
        # "async": false waits for the server's extraction, so the recall right after can see it.
        stored = await session.call_tool("hindsight_retain", {**retain_args(fact), "async": False})
        found = await session.call_tool("hindsight_recall", {"query": "Osprey release train"})
        return stored, found, names

    stored, found, names = project.with_client(body)
    assert "memory_edit" not in names and "hindsight_retain" in names
    assert not stored.is_error and details_of(stored)["delivered"] is True
    assert not found.is_error and fact in text_of(found)


@pytest.mark.integration
def test_killed_mid_delivery_the_memory_stays_queued_and_the_next_flush_delivers_it(
    tmp_path: Path, hindsight_url: str, make_bank: Callable[..., str]
) -> None:
    """kill -9 while the retain tool sends its job to a server that accepts and never answers: the
    memory the model retained is on disk, whole, and the next flush (the real server now) delivers
    it at once. The claim and the lock the killed process held stall no one (ADR 178)."""
    bank = make_bank("hh-mcp-kill")
    config = (
        f'backend = "hindsight"\n\n[banks.project]\nbank_id = "{bank}"\n\n[hindsight]\ntimeout_ms = 30000\n\n'
        "[mental_models]\nenabled = false\n\n[notifications]\nstartup = false\n"
    )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(64)  # the kernel completes each connection; nothing ever reads or answers
        project = Project(tmp_path, config=config, HINDSIGHT_BASE_URL=f"http://127.0.0.1:{silent.getsockname()[1]}")

        async def run() -> int:
            with project.stderr.open("a", encoding="utf-8") as errlog, anyio.fail_after(CALL_TIMEOUT_S):
                process = await anyio.open_process(project.argv(), env=project.env, stderr=errlog)
                async with own_transport(process, []) as (read, write), ClientSession(read, write) as session:
                    await session.initialize()

                    async def retain() -> None:
                        with contextlib.suppress(MCPError):  # the server dies before it answers
                            await session.call_tool("hindsight_retain", retain_args("Queued before the kill."))

                    async with anyio.create_task_group() as group:
                        group.start_soon(retain)
                        while not project.queued():  # the tool queues first, then sends
                            await anyio.sleep(0.05)
                        await anyio.sleep(0.3)
                        process.kill()
                        code = await process.wait()
                        group.cancel_scope.cancel()
                return code

        code = anyio.run(run)
    assert code == -signal.SIGKILL
    (job,) = project.queued()
    assert [item["content"] for item in job["items"]] == ["Queued before the kill."]
    assert job.get("claim_token") and job.get("claimed_by")  # killed while sending it
    assert not (project.root / ".hindsight" / "retain-queue.malformed.jsonl").exists()
    project.env["HINDSIGHT_BASE_URL"] = hindsight_url
    flushed = project.cli("flush")
    assert flushed.returncode == 0, flushed.stderr
    assert project.queued() == []
    assert not (project.root / ".hindsight" / "retain-queue.dead.jsonl").exists()


def test_without_the_mcp_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    """A Python where the SDK cannot be imported (as without ``[mcp]``): one line naming the extra."""
    code = "import sys; sys.modules['mcp'] = None; from hindsight_hooks.cli import main; sys.exit(main(['mcp']))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        env=clean_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=CALL_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == "hindsight-hooks mcp needs the MCP SDK: pip install 'hindsight-hooks[mcp]'"
