"""CLI subcommands: every slash command, the memory tools, ``chat`` and ``demo`` (ADR-015).

Slash commands are not listed here: the parser is built from the live command catalog (the
``agent_hooks`` plugins' ``register_commands``), so a command added to the catalog becomes a
subcommand with no change here. ``/hindsight`` is ``status``; ``/hindsight:<suffix>`` is
``<suffix>``. Each one is a thin pass-through: its positional words and the ``--flags`` named
in its usage line are joined back into the command's argument string and run through
``Host.command``, the same path a slash command takes inside a host.

``recall``, ``retain`` and ``reflect`` call the model-facing tools instead, inside a full
one-shot session (``session_start`` … ``shutdown``), so a retain is delivered or left safely
queued exactly as it would be in a host. ``retain on|off`` keeps meaning the
``/hindsight:retain`` command (docs/commands.md); ``--memory`` stores those words as a memory instead.

Output (ADR-072): the result text on stdout, errors and usage on stderr; ``--json`` prints the
structured data. Notices below ``warning`` are not shown (see :mod:`cli_ui`). Exit codes: 0 for
info and warning results, 1 for errors and for a question left unanswered because there was no
terminal and no ``--yes``, 2 for bad arguments (the command's usage warning, like argparse's).
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .cli import cwd_of, register
from .cli_tool_args import advice, text_of
from .cli_ui import CLI_TAG, CliUI, format_result, needs_yes_hint
from .hooks import Command, CommandResult, Host, ToolResult

STATUS_COMMAND = "hindsight"
COMMAND_PREFIX = "hindsight:"

FALLBACK_COMMANDS = (
    "hindsight",
    "hindsight:init",
    "hindsight:session",
    "hindsight:mode",
    "hindsight:next-opt-out",
    "hindsight:retain",
    "hindsight:tag",
    "hindsight:last-recall",
    "hindsight:recall-cleanup",
    "hindsight:queue",
    "hindsight:flush",
    "hindsight:doctor",
    "hindsight:route",
    "hindsight:memories",
    "hindsight:import",
    "hindsight:import-current",
    "hindsight:import-file",
    "hindsight:import-project-sessions",
)
"""Only used when the catalog cannot be loaded, so ``--help`` still lists the commands."""

CLI_SESSION_FILE = Path(".hindsight") / "sessions" / "cli.jsonl"
"""The session the CLI speaks for when ``--session-file`` is not given (under ``--cwd``).

Session state (mode, tags, retain switch) is keyed by the session file, and a per-process
ephemeral session would make ``hindsight-hooks mode read-only`` forget itself on exit. The file
itself is never written; it names a stable session, and its folder is where chat sessions
live, which is what ``import-project-sessions`` discovers."""

TRANSCRIPT_COMMANDS = frozenset({"hindsight:import", "hindsight:import-current", "hindsight:recall-cleanup"})
"""Commands about *the current transcript*: the CLI has none unless ``--session-file`` names one."""

_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
_COMMON_FLAGS = frozenset({"--json", "--cwd", "--session-file", "--host-name", "--yes"})

FLAG_HELP = {
    "--jobs": "also list every queued job (id, bank, source, attempts, next attempt)",
    "--requeue-dead": "move the dead-letter jobs back into the queue for another try",
    "--due": "send only what is due (jobs in backoff wait their turn); still waits for a running flush",
    "--fix": "repair what is safe to repair (damaged files are moved aside, never deleted)",
    "--force": "replace an existing config; the old file is kept as a backup",
    "--prune": "remove the blocks found (never from the active session file; a backup is kept)",
    "--dry-run": "show what would be imported and write nothing",
    "--preview": "the same as --dry-run",
    "--all-leaves": "import every branch of a session, not only the current one",
}
"""Help for the flags the slash commands' usage lines name; a new flag needs a line here."""

COMMAND_FLAG_HELP = {
    ("hindsight:memories", "--dry-run"): "show what would be forgotten and change nothing",
}
"""Where one command's flag means something else than in :data:`FLAG_HELP`."""

ARG_HELP = {
    "hindsight:mode": "normal, read-only (recall but never retain) or ignored (no recall, no retain)",
    "hindsight:tag": "add TAG or remove TAG: a session tag merged into every retain",
    "hindsight:route": "the text to route (a dry run: nothing is stored)",
    "hindsight:recall-cleanup": "the session file to scan (default: the one --session-file names)",
    "hindsight:import-file": "the session file or chat transcript to import",
    "hindsight:memories": "list [key=value...], show ID, edit ID TEXT, forget id|document|session|tag|query VALUE, "
    "export [FILE], import FILE, markdown [FILE]; options: bank=, tag=, document=, session=, since=, until=, "
    "text=, page=, limit=",
}
"""Help for the positional words of the commands that take any (the rest take none)."""


# -- naming ------------------------------------------------------------------------------------
def cli_name(command_name: str) -> str | None:
    """The subcommand for a catalog command, or ``None`` for commands that are not ours."""
    if command_name == STATUS_COMMAND:
        return "status"
    if command_name.startswith(COMMAND_PREFIX) and len(command_name) > len(COMMAND_PREFIX):
        return command_name[len(COMMAND_PREFIX) :]
    return None


def usage_words(command_name: str, usage: str) -> str:
    """The positional part of a usage line as a metavar (``add|remove TAG``); ``""`` when none."""
    rest = usage.removeprefix(f"/{command_name}")
    rest = re.sub(r"\[[^\]]*--[^\]]*\]", " ", rest)  # the [--flag] groups
    rest = re.sub(r"<([^>]*)>", lambda m: m.group(1).upper(), rest)
    return " ".join(rest.replace("[", " ").replace("]", " ").split())


def usage_flags(usage: str) -> list[str]:
    """The ``--flags`` a command's usage line names, in order (``--dry-run|--preview`` gives both)."""
    return list(dict.fromkeys(_FLAG.findall(usage)))


def load_catalog() -> dict[str, Command]:
    """Our commands as the installed plugins register them; the fallback names on failure."""
    try:
        host = Host(Path.cwd())
        found = {name: cmd for name, cmd in host.commands().items() if cli_name(name) is not None}
    except Exception:
        found = {}
    if found:
        return found
    return {
        name: Command(name, f"/{name}", lambda a, c: CommandResult("unavailable", "error"))
        for name in FALLBACK_COMMANDS
    }


# -- running -------------------------------------------------------------------------------------
def make_ui(ns: argparse.Namespace) -> CliUI:
    interactive = bool(getattr(sys.stdin, "isatty", lambda: False)())
    return CliUI(assume_yes=bool(getattr(ns, "yes", False)), interactive=interactive)


def session_file_for(ns: argparse.Namespace, command_name: str | None) -> Path | None:
    explicit: Path | None = getattr(ns, "session_file", None)
    if explicit is not None:
        return explicit.absolute()
    if command_name in TRANSCRIPT_COMMANDS:
        return None
    return cwd_of(ns) / CLI_SESSION_FILE


def make_host(ns: argparse.Namespace, ui: CliUI, command_name: str | None = None) -> Host:
    return Host(cwd_of(ns), session_file=session_file_for(ns, command_name), host_name=ns.host_name, ui=ui)


def unanswered(ui: CliUI, code: int) -> int:
    """Exit 1 (and say to pass ``--yes``) when the command stopped at a question nobody could answer."""
    hint = needs_yes_hint(ui)
    if hint is None:
        return code
    print(hint, file=sys.stderr)
    return code or 1


def exit_code(result: CommandResult) -> int:
    if result.level == "error":
        return 1
    if result.level == "warning" and isinstance(result.data, dict) and "usage" in result.data:
        return 2
    return 0


def _quiet_broken_pipe(emit: Callable[[], int]) -> int:
    """``hindsight-hooks queue --json | head`` must not end in a traceback."""
    try:
        code = emit()
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        import os

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def emit_command(result: CommandResult, as_json: bool) -> int:
    return _quiet_broken_pipe(lambda: _emit_command(result, as_json))


def emit_tool(result: ToolResult, as_json: bool) -> int:
    return _quiet_broken_pipe(lambda: _emit_tool(result, as_json))


def _emit_command(result: CommandResult, as_json: bool) -> int:
    code = exit_code(result)
    if as_json:
        payload = result.data if result.data is not None else {"text": result.text, "level": result.level}
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        shown = result.text.strip() if code == 2 else format_result(result)  # usage speaks for itself
        print(shown, file=sys.stdout if code == 0 else sys.stderr)
    return code


def _emit_tool(result: ToolResult, as_json: bool) -> int:
    if as_json:
        print(
            json.dumps(
                {"text": result.text, "content": result.content, "details": result.details},
                indent=2,
                ensure_ascii=False,
                default=str,
            )
        )
    elif result.is_error:
        print(result.text, file=sys.stderr)
    else:
        print(result.text)
    return 1 if result.is_error else 0


def run_slash(ns: argparse.Namespace, command_name: str, argv: list[str]) -> int:
    """Run ``/command_name argv…`` in a lazily initialised session (commands need no ``start``)."""
    line = f"/{command_name}" + (f" {shlex.join(argv)}" if argv else "")
    ui = make_ui(ns)
    result = make_host(ns, ui, command_name).command(line)
    if command_name == "hindsight:doctor" and exit_code(result) != 2:
        result = _with_agents(result, cwd_of(ns))
    return unanswered(ui, emit_command(shell_usage(result, command_name), bool(ns.json)))


def _with_agents(result: CommandResult, cwd: Path) -> CommandResult:
    """``doctor`` from a shell (also ``/hindsight:doctor`` inside Claude Code and Gemini CLI) adds
    what of ours each agent program has installed, and whether its hooks run (the plugin cannot:
    it never imports ``hosts/``)."""
    from .hosts.doctor_agents import with_agent_section

    text, data, level = with_agent_section(result.text, result.data, result.level, cwd)
    if isinstance(data, dict) and result.text.lstrip().startswith("{"):  # --json: the text is the data
        text = json.dumps(data, indent=2)
    return CommandResult(text, level, data)  # type: ignore[arg-type]


def shell_usage(result: CommandResult, command_name: str) -> CommandResult:
    """A usage warning spelled as the person typed it: ``usage: hindsight-hooks mode ...``."""
    if exit_code(result) != 2:
        return result
    sub = cli_name(command_name) or command_name
    text = re.sub(rf"(?m)^usage: /{re.escape(command_name)}(?=\s|$)", f"usage: hindsight-hooks {sub}", result.text)
    return CommandResult(text, result.level, result.data)


def run_tool(ns: argparse.Namespace, tool: str, arguments: dict[str, Any]) -> int:
    """Call a tool inside a full one-shot session: start, call, shutdown (flush within its bound).

    Arguments are checked first (:func:`advice`): a bad one is a usage error (exit 2) that says
    what to type, before any session starts.
    """
    why = advice(tool, arguments)
    if why is not None:
        print(f"{CLI_TAG}{why}", file=sys.stderr)
        return 2
    ui = make_ui(ns)
    with make_host(ns, ui) as host:
        result = host.call_tool(tool, arguments)
    return unanswered(ui, emit_tool(result, bool(ns.json)))


# -- slash-command pass-throughs -------------------------------------------------------------------
def _dest(flag: str) -> str:
    return "flag_" + flag.lstrip("-").replace("-", "_")


def _pass_through(
    command: Command,
) -> tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]:
    flags = usage_flags(command.usage)
    words = usage_words(command.name, command.usage)

    def add_args(parser: argparse.ArgumentParser) -> None:
        if words:
            parser.add_argument(
                "args",
                nargs="*",
                metavar=words,
                help=ARG_HELP.get(command.name, f"see the slash command below ({words})"),
            )
        for flag in flags:
            if flag not in _COMMON_FLAGS:
                help_text = COMMAND_FLAG_HELP.get((command.name, flag)) or FLAG_HELP.get(
                    flag, f"see the slash command below ({flag})"
                )
                parser.add_argument(flag, dest=_dest(flag), action="store_true", help=help_text)
        if command.usage:
            parser.epilog = f"slash command: {command.usage}"

    def run(ns: argparse.Namespace) -> int:
        argv = list(getattr(ns, "args", []))
        argv += [f for f in flags if f not in _COMMON_FLAGS and getattr(ns, _dest(f), False)]
        if ns.json and "--json" in flags:
            argv.append("--json")
        return run_slash(ns, command.name, argv)

    return add_args, run


def register_slash_commands(catalog: dict[str, Command]) -> list[str]:
    """One subcommand per catalog command; returns the names registered (``retain`` is special)."""
    names = []
    for name in sorted(catalog):
        sub = cli_name(name)
        if sub is None or sub == "retain":
            continue
        add_args, run = _pass_through(catalog[name])
        try:
            register(sub, f"/{name}: {catalog[name].description}", add_args, run)
        except ValueError:  # a name the CLI already uses (config, chat, …) keeps its meaning
            continue
        names.append(sub)
    return names


# -- tools ---------------------------------------------------------------------------------------
def _words(ns: argparse.Namespace) -> str:
    return " ".join(ns.words).strip()


_BUDGET_HELP = "how hard to search: low, mid or high (default: the config's tools.recall_budget)"


def _add_recall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="+", metavar="QUERY", help="what to search for, in plain words")
    parser.add_argument(
        "--bank", choices=["all", "project", "user"], default="all", help="which bank to search (default: all)"
    )
    parser.add_argument("--budget", choices=["low", "mid", "high"], default=None, help=_BUDGET_HELP)
    parser.add_argument(
        "--max-tokens",
        type=int,
        default=None,
        metavar="N",
        help="return at most about N tokens of memories (default: the config's tools.recall_max_tokens)",
    )
    parser.add_argument(
        "--tag", action="append", default=None, metavar="TAG", help="only memories with this tag (repeatable)"
    )
    parser.add_argument(
        "--tags-match",
        choices=["any", "all", "any_strict", "all_strict", "exact"],
        default=None,
        help="how several --tag values must match (strict: untagged memories do not count)",
    )


def _run_recall(ns: argparse.Namespace) -> int:
    args: dict[str, Any] = {"query": _words(ns), "bank": ns.bank}
    for key, value in (
        ("budget", ns.budget),
        ("max_tokens", ns.max_tokens),
        ("tags", ns.tag),
        ("tags_match", ns.tags_match),
    ):
        if value is not None:
            args[key] = value
    return run_tool(ns, "hindsight_recall", args)


def _add_retain(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "words",
        nargs="+",
        metavar="TEXT",
        help=(
            "the memory to store; - reads it from stdin; on|off switches automatic retain for this session"
            " (/hindsight:retain)"
        ),
    )
    parser.add_argument("--memory", action="store_true", help="store the words as a memory even if they are on/off")
    parser.add_argument(
        "--context", default=None, metavar="TEXT", help="where the memory comes from, e.g. 'design review'"
    )
    parser.add_argument(
        "--bank",
        choices=["project", "user"],
        default="project",
        help="project (default) or user (needs [banks.user] in the config)",
    )
    parser.add_argument("--tag", action="append", default=None, metavar="TAG", help="an extra tag (repeatable)")


def _run_retain(ns: argparse.Namespace) -> int:
    if not ns.memory and len(ns.words) == 1 and ns.words[0] in ("on", "off"):
        return run_slash(ns, "hindsight:retain", [ns.words[0]])
    item: dict[str, Any] = {"content": text_of(ns.words).strip()}
    if ns.context:
        item["context"] = ns.context
    args: dict[str, Any] = {"items": [item], "bank": ns.bank}
    if ns.tag:
        args["tags"] = ns.tag
    return run_tool(ns, "hindsight_retain", args)


def _add_reflect(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("words", nargs="+", metavar="QUESTION", help="the question, in plain words")
    parser.add_argument("--context", default=None, metavar="TEXT", help="background that helps answer the question")
    parser.add_argument(
        "--bank", choices=["project", "user"], default="project", help="which bank to ask (default: project)"
    )
    parser.add_argument("--budget", choices=["low", "mid", "high"], default=None, help=_BUDGET_HELP)


def _run_reflect(ns: argparse.Namespace) -> int:
    args: dict[str, Any] = {"query": _words(ns), "bank": ns.bank}
    if ns.context:
        args["context"] = ns.context
    if ns.budget:
        args["budget"] = ns.budget
    return run_tool(ns, "hindsight_reflect", args)


# -- chat and demo ---------------------------------------------------------------------------------
def _add_chat(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model", default="echo", help="'echo' (offline, the default) or an OpenAI-compatible model name"
    )
    parser.add_argument(
        "--base-url",
        default=None,
        help="OpenAI-compatible API base (default: $OPENAI_BASE_URL, else https://api.openai.com/v1)",
    )
    parser.add_argument(
        "--api-key",
        default=None,
        help="API key (default: $OPENAI_API_KEY; prefer the env var: arguments are visible to other users)",
    )
    parser.add_argument("--max-tool-rounds", type=int, default=8, help="tool-call rounds per run (default 8)")
    parser.set_defaults(host_name="chat")
    host_name = parser._option_string_actions.get("--host-name")
    if host_name is not None:
        host_name.help = "host name used in tags (default: chat)"
    parser.epilog = (
        "--session-file: resumed when it holds a session, created otherwise "
        "(default: a new file under <cwd>/.hindsight/sessions/)"
    )


def _run_chat(ns: argparse.Namespace) -> int:
    from .chat import run_chat

    return run_chat(
        cwd_of(ns),
        session_file=ns.session_file,
        host_name=ns.host_name,
        model_name=ns.model,
        base_url=ns.base_url,
        api_key=ns.api_key,
        max_tool_rounds=ns.max_tool_rounds,
        assume_yes=ns.yes,
    )


def _add_demo(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", type=Path, default=None, help="folder to run the demo in (default: a new temp folder)")


def _run_demo(ns: argparse.Namespace) -> int:
    from .demo import run_demo

    return run_demo(ns.dir)


register("chat", "the reference interactive host (offline echo model by default)", _add_chat, _run_chat)
register("demo", "two sessions on the embedded store: memory retained, then recalled", _add_demo, _run_demo)
register("recall", "search memory (the hindsight_recall tool)", _add_recall, _run_recall)
register(
    "retain", "store a memory (hindsight_retain), or `retain on|off` (/hindsight:retain)", _add_retain, _run_retain
)
register("reflect", "ask memory a question (the hindsight_reflect tool)", _add_reflect, _run_reflect)
register_slash_commands(load_catalog())
