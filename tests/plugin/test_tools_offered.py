"""Which tools a host should offer for a session (``Host.session_tools``, ADR-085).

``register_tools`` has no session and returns all five tools (ADR-020); a host that lists tools
per session (the MCP server) asks each tool's ``available(ctx)`` after ``session_start``. The
user-bank tool needs a configured user bank, ``memory_edit`` the embedded store, and memory that
is off offers nothing. Calling a tool that is not offered still gets its clean refusal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

from hindsight_hooks.hooks import Host, HostContext, Tool, ToolResult
from hindsight_hooks.plugin.control.tool_params import RecallParams

from .cmdkit import Kit, hs_kit_fixture, kit_fixture, local_kit_fixture  # noqa: F401  (fixtures)

ALL = {"hindsight_retain", "hindsight_retain_global", "hindsight_recall", "hindsight_reflect", "memory_edit"}


def test_the_embedded_store_with_a_user_bank_offers_all_five(local_kit: Kit) -> None:
    assert set(local_kit.host().session_tools()) == ALL


def test_a_hindsight_server_offers_no_memory_edit(hs_kit: Kit) -> None:
    assert set(hs_kit.host().session_tools()) == ALL - {"memory_edit"}


def test_no_user_bank_means_no_retain_global(kit: Kit) -> None:
    kit.configure(sections={"banks.user": {"enabled": False}})
    host = kit.host()
    offered = set(host.session_tools())
    assert "hindsight_retain_global" not in offered
    assert {"hindsight_retain", "hindsight_recall", "hindsight_reflect"} <= offered
    assert set(host.tools()) == ALL  # registration itself is unchanged (ADR-020)
    refused = host.call_tool("hindsight_retain_global", {"items": [{"content": "x"}]})
    assert refused.is_error and "no user bank is configured" in refused.text


def test_memory_off_offers_nothing(local_kit: Kit) -> None:
    local_kit.configure({"backend": "off"})
    assert local_kit.host().session_tools() == {}


def _tool(name: str, available: Callable[[HostContext], bool]) -> Tool:
    return Tool(name, name, RecallParams, lambda p, c: ToolResult.of_text("ok"), available=available)


class _Plugin:
    """A plugin with its own availability rules, one of which raises."""

    from hindsight_hooks.hooks import hookimpl

    @hookimpl
    def register_tools(self) -> list[object]:
        def boom(ctx: HostContext) -> bool:
            raise RuntimeError("no")

        return [
            Tool("always", "no rule", RecallParams, lambda p, c: ToolResult.of_text("ok")),
            _tool("never", lambda ctx: False),
            _tool("by_host", lambda ctx: ctx.host_name == "mcp"),
            _tool("broken", boom),
            # A foreign plugin's tool object without the attribute at all is always offered (ADR-025).
            SimpleNamespace(name="bare", description="", parameters=RecallParams, execute=None),
        ]


def test_session_tools_follow_each_rule_and_offer_a_tool_whose_rule_raises(tmp_path: Path) -> None:
    mcp = Host(str(tmp_path), host_name="mcp", plugins=[_Plugin()])
    other = Host(str(tmp_path), host_name="pi", plugins=[_Plugin()])
    assert set(mcp.session_tools()) == {"always", "by_host", "broken", "bare"}
    assert set(other.session_tools()) == {"always", "broken", "bare"}
