"""``hindsight-hooks mcp``: the plugins' model tools served over MCP stdio, through one public Host.

Why an MCP server: Claude Code, Codex and Gemini CLI load no ``agent_hooks`` plugin, but all
three call tools on MCP servers. So this process *is* a host (ADR-085): it builds one public
:class:`~hindsight_hooks.hooks.Host` for one session, offers that session's tools
(``Host.session_tools``: names, descriptions and the pydantic models' JSON schemas) as MCP
tools, and answers each call with ``Host.acall_tool``. Gates, redaction, the durable queue and
the result texts are therefore exactly those of ``Host.call_tool``; nothing here knows what a
tool does.

- Session: ``--session-file`` names a transcript's session; otherwise a session id (flag or
  ``$HINDSIGHT_HOOKS_SESSION_ID``, else a new ``mcp-…`` id) names the never-written file
  ``<cwd>/.hindsight/sessions/<id>.jsonl`` (:func:`~hindsight_hooks.host_sessions.session_file_for`),
  the same scheme as the CLI's own session (``cli``), so ``--session-id cli`` shares the mode,
  tags and retain switch that plain shell commands (``hindsight-hooks mode read-only``) set.
- Results: a tool's content parts become MCP content, a tool error (``ToolResult.is_error``)
  becomes ``isError``, and ``details`` travel in ``_meta`` (for the client, not the model).
- No person is behind an MCP server, so a question (the read-only "Allow?") is answered "no"
  and notices go to stderr. stdout carries MCP messages only: the SDK points fd 1 at stderr
  while serving, and logging goes to stderr.
- End: stdin EOF ends the session with ``Host.shutdown`` (the bounded flush); SIGTERM, SIGINT
  and SIGHUP do the same, then exit at once (the stdin reader may be blocked in a read).
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import sys
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from ..hooks import ConsoleUI, Host, Tool, ToolResult
from ..host_sessions import session_file_for
from .bridge_payloads import jsonable

SESSION_ENV = "HINDSIGHT_HOOKS_SESSION_ID"
DETAILS_META_KEY = "hindsight-hooks/details"
SERVER_NAME = "hindsight"
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def clean_session_id(raw: str | None) -> str | None:
    """A usable id from a flag or the environment: path-safe characters only, else ``None``."""
    if raw is None:
        return None
    cleaned = _UNSAFE.sub("-", raw.strip())
    return None if cleaned.strip(".-") == "" else cleaned


@dataclass(frozen=True)
class ServerOptions:
    """Which session of which project the server speaks for."""

    cwd: Path
    session_file: Path
    session_label: str  # the session id, or the session file's path when one was given
    host_name: str = "mcp"

    @classmethod
    def resolve(
        cls,
        *,
        cwd: Path,
        session_file: Path | None = None,
        session_id: str | None = None,
        host_name: str = "mcp",
        env: Mapping[str, str] | None = None,
    ) -> ServerOptions:
        """``--session-file`` wins, then ``--session-id``, then the environment, then a new id."""
        cwd = cwd.absolute()
        if session_file is not None:
            path = session_file if session_file.is_absolute() else cwd / session_file
            return cls(cwd, path, str(path), host_name)
        environ = os.environ if env is None else env
        sid = clean_session_id(session_id) or clean_session_id(environ.get(SESSION_ENV))
        sid = sid or f"mcp-{uuid.uuid4().hex[:12]}"
        return cls(cwd, session_file_for(cwd, sid), sid, host_name)


# -- the mapping ----------------------------------------------------------------------------------
def mcp_tool(tool: Tool) -> types.Tool:
    """An MCP tool from a host tool: same name, description and argument schema."""
    schema = tool.parameters.model_json_schema(by_alias=False)
    return types.Tool(name=tool.name, description=tool.description, input_schema=schema)


def _content(part: dict[str, Any]) -> types.TextContent | types.ImageContent:
    if part.get("type") == "text":
        return types.TextContent(text=str(part.get("text", "")))
    if part.get("type") == "image" and isinstance(part.get("data"), str):
        return types.ImageContent(data=part["data"], mime_type=str(part.get("mimeType") or "image/png"))
    return types.TextContent(text=json.dumps(part, ensure_ascii=False, default=str))


def call_result(result: ToolResult) -> types.CallToolResult:
    """An MCP result from a host result: content as is, errors flagged, details in ``_meta``."""
    details = jsonable(result.details)
    return types.CallToolResult(
        content=[_content(part) for part in result.content],
        is_error=result.is_error,
        meta={DETAILS_META_KEY: details},
    )


def build_server(host: Host) -> Server[Any]:
    """The MCP server for ``host``'s session: tools/list and tools/call, nothing else."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        offered = await anyio.to_thread.run_sync(host.session_tools)
        return types.ListToolsResult(tools=[mcp_tool(tool) for tool in offered.values()])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            result = await host.acall_tool(params.name, dict(params.arguments or {}))
        except anyio.get_cancelled_exc_class():
            host.abort()  # the client cancelled the call: in-flight recall stops, like Ctrl-C in a host
            raise
        return call_result(result)

    from .. import __version__

    return Server(SERVER_NAME, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


# -- running --------------------------------------------------------------------------------------
async def _stop_on_signal(host: Host) -> None:
    """On a stop signal: end the session (bounded flush), then leave at once."""
    with anyio.open_signal_receiver(*STOP_SIGNALS) as received:
        async for signum in received:
            _log(f"{signal.Signals(signum).name}: ending the session")
            for other in STOP_SIGNALS:  # a second signal must not cut the bounded flush short
                signal.signal(other, signal.SIG_IGN)
            await host.ashutdown()
            sys.stderr.flush()
            os._exit(0)


async def serve(host: Host) -> None:
    """Serve MCP on stdin/stdout until stdin closes (or a stop signal ends the process)."""
    server = build_server(host)
    async with stdio_server() as (read_stream, write_stream), anyio.create_task_group() as group:
        group.start_soon(_stop_on_signal, host)
        await server.run(read_stream, write_stream, server.create_initialization_options())
        group.cancel_scope.cancel()


def _log(text: str) -> None:
    print(f"hindsight-hooks mcp: {text}", file=sys.stderr, flush=True)


@contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Point fd 1 at stderr while plugins run outside the SDK's own claim of it (session start and
    end), so a stray print can never put a non-MCP line on the wire."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def main(options: ServerOptions) -> int:
    """Start the session, serve until stdin closes, end the session; 0 unless serving failed."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="hindsight-hooks mcp: %(message)s")
    host = Host(options.cwd, session_file=options.session_file, host_name=options.host_name, ui=ConsoleUI(sys.stderr))
    with _stdout_to_stderr():
        host.start()
    _log(
        f"session {options.session_label} in {options.cwd}; tools: {', '.join(host.session_tools()) or 'none'}; "
        f"shell commands reach this session with --session-file {options.session_file}"
    )
    code = 0
    try:
        anyio.run(serve, host)
    except Exception as exc:
        _log(f"serving failed: {type(exc).__name__}")
        code = 1
    finally:
        for other in STOP_SIGNALS:
            signal.signal(other, signal.SIG_IGN)
        with _stdout_to_stderr():
            host.shutdown()
    return code
