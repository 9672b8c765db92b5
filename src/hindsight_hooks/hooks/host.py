"""The reference ``Host`` harness: loads plugins and fires the hooks the way a real agent host does.

It is both the contract's executable definition and the test harness: every behaviour test of
the plugin drives it through this class only. Every plugin hook is called on its own and
guarded, so one plugin that raises is reported through ``ui.notify(..., "error")`` and the
host goes on (fail-open), exactly like Pi.
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import orjson
import pluggy
from pydantic import ValidationError

from .catalog import Command, CommandResult, Tool, ToolResult
from .context import UI, HostContext, NullUI
from .deep_copy import deep_copy
from .messages import Message
from .spec import ENTRY_POINT_GROUP, PROJECT_NAME, AgentHookSpecs

_P = ParamSpec("_P")
_T = TypeVar("_T")


def _plugin_label(impl: Any) -> str:
    return str(getattr(impl, "plugin_name", "plugin"))


def _describe_validation_error(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e.get("loc", ())) or "arguments"
        parts.append(f"{loc}: {e.get('msg', 'invalid')}")
    return "invalid arguments: " + "; ".join(parts)


class Host:
    """A minimal agent host. ``plugins=None`` loads the ``agent_hooks`` entry points.

    ``short_lived=True`` says every hook runs in a process of its own (see
    :class:`~hindsight_hooks.hooks.context.HostContext`): plugins then only queue in
    ``agent_end``, and the host delivers with ``start()`` + ``shutdown()`` in a later process.
    """

    def __init__(
        self,
        cwd: Path | str,
        session_file: Path | str | None = None,
        host_name: str = "agent",
        ui: UI | None = None,
        plugins: list[object] | None = None,
        is_subagent: bool = False,
        short_lived: bool = False,
    ) -> None:
        self.ctx = HostContext(
            cwd=Path(cwd),
            session_file=Path(session_file) if session_file is not None else None,
            host_name=host_name,
            ui=ui if ui is not None else NullUI(),
            is_subagent=is_subagent,
            short_lived=short_lived,
        )
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(AgentHookSpecs)
        if plugins is None:
            self.pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
        else:
            for p in plugins:
                self.pm.register(p)
        self._commands: dict[str, Command] | None = None
        self._tools: dict[str, Tool] | None = None
        self._lock = threading.RLock()
        self._end_copies: dict[str, _Copies | None] = {}
        self._reported_once: set[str] = set()

    # -- plumbing ---------------------------------------------------------------------------
    def _report(self, where: str, impl: Any, exc: BaseException) -> None:
        try:
            self.ctx.ui.notify(f"{_plugin_label(impl)}: {where} failed: {type(exc).__name__}", "error")
        except Exception:
            pass

    def _report_once(self, where: str, exc: BaseException) -> None:
        """The host's own failure (not a plugin's), told once per kind: it repeats every turn."""
        key = f"{where}:{type(exc).__name__}"
        if key in self._reported_once:
            return
        self._reported_once.add(key)
        try:
            self.ctx.ui.notify(f"host: {where} failed: {type(exc).__name__}; the plugins were skipped", "error")
        except Exception:
            pass

    def _each(self, hook_name: str, call: Callable[[Callable[..., Any]], Any]) -> list[Any]:
        """Call one hook on every plugin in registration order, isolating failures."""
        results: list[Any] = []
        hook = getattr(self.pm.hook, hook_name)
        for impl in hook.get_hookimpls():
            try:
                results.append(call(impl.function))
            except Exception as exc:
                self._report(hook_name, impl, exc)
        return results

    def _begin_hook(self) -> None:
        self.ctx.signal.clear()

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        self._begin_hook()
        self._each("session_start", lambda f: f(ctx=self.ctx))

    def context(self, messages: list[Message]) -> list[Message]:
        """Return the message list the model should see (plugins' replacements chained).

        Each plugin gets a private copy, and the result is a copy too (the host's own list only
        when it cannot be copied at all). A copy is made only when one is handed out: the first
        plugin gets the copy made up front, and the host's messages are copied again for the
        result only when no plugin replaced them (so a recall that injects costs one copy of the
        transcript, not two).
        """
        self._begin_hook()
        try:
            spare: list[Message] | None = deep_copy(messages)
        except Exception as exc:  # a non-JSON object the host put in that cannot be copied
            self._report_once("copying the transcript for context", exc)
            return messages
        current: list[Message] | None = None  # the latest replacement
        for impl in self.pm.hook.context.get_hookimpls():
            try:
                given = spare if spare is not None else deep_copy(messages if current is None else current)
                spare = None
                replaced = impl.function(messages=given, ctx=self.ctx)
            except Exception as exc:
                self._report("context", impl, exc)
                continue
            if isinstance(replaced, list):
                current = replaced
        if current is not None:
            return current
        return spare if spare is not None else deep_copy(messages)

    def agent_end(self, messages: list[Message]) -> None:
        """Each plugin gets its own deep copy of the transcript, as in ``context``.

        The transcript grows by a few messages per run, so a plugin's copies of the messages of
        its previous run are handed out again when neither the host's messages nor those copies
        have changed since (see :func:`_reuse_copies`): the deep-copy work follows the new
        messages, not the transcript (ADR-051). A plugin's copies are taken out of the cache for
        the duration of its call, so two concurrent runs never share one.
        """
        self._begin_hook()
        for impl in self.pm.hook.agent_end.get_hookimpls():
            label = str(impl.plugin_name)
            try:
                copies, kept = _reuse_copies(messages, self._end_copies.pop(label, None))
            except Exception as exc:  # a non-JSON object the host put in that cannot be copied
                self._report_once("copying the transcript for agent_end", exc)
                return
            try:
                impl.function(messages=copies, ctx=self.ctx)
            except Exception as exc:
                self._report("agent_end", impl, exc)
            self._end_copies[label] = kept

    def shutdown(self) -> None:
        self._begin_hook()
        self._each("shutdown", lambda f: f(ctx=self.ctx))

    def abort(self) -> None:
        """Ask in-flight plugin work (such as recall) to stop; cleared when the next hook starts."""
        self.ctx.signal.set()

    def __enter__(self) -> Host:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # -- commands ---------------------------------------------------------------------------
    def commands(self) -> dict[str, Command]:
        with self._lock:
            if self._commands is None:
                found: dict[str, Command] = {}
                for batch in self._each("register_commands", lambda f: f()):
                    for cmd in batch or []:
                        found.setdefault(cmd.name, cmd)
                self._commands = found
            return self._commands

    def command(self, line: str) -> CommandResult:
        """Run ``/name args``. Unknown commands and handler failures become error results."""
        text = line.strip()
        if text.startswith("/"):
            text = text[1:]
        name, _, args = text.partition(" ")
        cmd = self.commands().get(name)
        if cmd is None:
            return CommandResult(f"unknown command: /{name}", "error")
        self._begin_hook()
        try:
            return cmd.handler(args.strip(), self.ctx)
        except Exception as exc:
            return CommandResult(f"/{name} failed: {type(exc).__name__}", "error")

    def complete(self, line: str) -> list[str]:
        """Complete a partial command line; returns whole candidate lines (with the slash)."""
        text = line.lstrip()
        if text.startswith("/"):
            text = text[1:]
        name, sep, args = text.partition(" ")
        cmds = self.commands()
        if not sep:
            return sorted(f"/{n}" for n in cmds if n.startswith(name))
        cmd = cmds.get(name)
        if cmd is None:
            return []
        try:
            options = cmd.complete(args)
        except Exception:
            return []
        return [f"/{name} {opt}" for opt in options]

    # -- tools ------------------------------------------------------------------------------
    def tools(self) -> dict[str, Tool]:
        with self._lock:
            if self._tools is None:
                found: dict[str, Tool] = {}
                for batch in self._each("register_tools", lambda f: f()):
                    for tool in batch or []:
                        found.setdefault(tool.name, tool)
                self._tools = found
            return self._tools

    def session_tools(self) -> dict[str, Tool]:
        """The tools to offer the model in this session: each tool whose ``available(ctx)`` is
        true or that has no such rule. A rule that raises offers the tool (calling it still
        gets the tool's own refusal), so a plugin bug never hides a working tool."""
        offered: dict[str, Tool] = {}
        for name, tool in self.tools().items():
            rule = getattr(tool, "available", None)
            try:
                keep = rule is None or bool(rule(self.ctx))
            except Exception:
                keep = True
            if keep:
                offered[name] = tool
        return offered

    def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Validate arguments and run a tool; never raises."""
        tool = self.tools().get(name)
        if tool is None:
            return ToolResult.error(f"unknown tool: {name}", kind="unknown_tool")
        try:
            params = tool.parameters.model_validate(arguments)
        except ValidationError as err:
            return ToolResult.error(_describe_validation_error(err), kind="invalid_arguments")
        except Exception as exc:  # a validator that failed outright (e.g. on absurd nesting)
            return ToolResult.error(f"invalid arguments: {type(exc).__name__}", kind="invalid_arguments")
        self._begin_hook()
        try:
            return tool.execute(params, self.ctx)
        except Exception as exc:
            return ToolResult.error(f"{name} failed: {type(exc).__name__}", kind="internal")

    # -- async twins ------------------------------------------------------------------------
    async def astart(self) -> None:
        await _to_thread(self.start)

    async def acontext(self, messages: list[Message]) -> list[Message]:
        return await _to_thread(self.context, messages)

    async def aagent_end(self, messages: list[Message]) -> None:
        await _to_thread(self.agent_end, messages)

    async def ashutdown(self) -> None:
        await _to_thread(self.shutdown)

    async def acall_tool(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        return await _to_thread(self.call_tool, name, arguments)


@dataclass
class _Copies:
    """One plugin's copy of the transcript from its previous ``agent_end``."""

    originals: list[Any]  # the host's message objects it was made from
    copies: list[Any]  # what the plugin got (``deep_copy`` of them)
    snapshot: bytes  # ``orjson.dumps(originals)`` when they were copied


def _reuse_copies(messages: list[Message], previous: _Copies | None) -> tuple[list[Message], _Copies | None]:
    """A deep copy of ``messages`` for one plugin, reusing its previous copy when that is intact.

    Reused only when the previous originals are the very same objects (``is``) at the head of
    ``messages`` — a grown transcript — and (1) their JSON today is byte-identical to when they
    were copied, so the host changed nothing in place (bytes, unlike ``==``, tell ``1`` from
    ``1.0`` and ``True``, and see key order), and (2) the copies still ``==`` them, so the
    plugin changed nothing either (``==``, unlike the bytes, tells NaN from null). Otherwise, and
    for anything orjson cannot encode, the whole transcript is deep-copied as before.

    The JSON of ``messages`` is computed once: a compact array's bytes start with the bytes of
    its head (``[a,b`` of ``[a,b,c]``), so the previous snapshot is a prefix check.
    """
    try:
        snapshot = orjson.dumps(messages)
    except (TypeError, ValueError):
        return deep_copy(messages), None
    n = len(previous.originals) if previous is not None else 0
    if (
        previous is not None
        and 0 < n <= len(messages)
        and all(map(operator.is_, previous.originals, messages))
        and snapshot.startswith(memoryview(previous.snapshot)[:-1])  # a view: no 3 MB slice copy
        and snapshot[len(previous.snapshot) - 1 : len(previous.snapshot)] in (b",", b"]")
        and previous.copies == messages[:n]
    ):
        copies = [*previous.copies, *deep_copy(messages[n:])]
    else:
        copies = deep_copy(messages)
    return copies, _Copies(list(messages), list(copies), snapshot)


async def _to_thread(fn: Callable[_P, _T], *args: _P.args, **kwargs: _P.kwargs) -> _T:
    """``asyncio.to_thread``, imported on first use: asyncio costs ~50 ms at import, and a
    synchronous host should not pay it just for loading the contract."""
    import asyncio

    return await asyncio.to_thread(fn, *args, **kwargs)
