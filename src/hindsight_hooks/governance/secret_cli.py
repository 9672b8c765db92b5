"""Passwords given to common command-line tools: ``mysql -p<pw>``, ``sshpass -p <pw>``, ``curl -u a:<pw>``.

A single-letter flag means "password" only for a given tool (``-p`` is a port for ``ssh`` and
``docker run``, a password for ``mysql`` and ``sshpass``), so the rule is a table: a tool (with
its subcommand where the flag depends on it, ``az login``), the flags that take its password,
and how the value is written (ADR-061):

- ``glued``  — the value touches the flag: ``mysql -p<pw>``, ``7z -p<pw>``; ``mysql -p``
  followed by a space *prompts*, and the next word is a database name, not a password.
- ``spaced`` — a space (or, for a one-letter flag, nothing) before the value: ``sshpass -p <pw>``.
- ``user?``  — ``user?password`` where only the part after the separator ``?`` is secret:
  ``curl -u a:<pw>`` (``user:``), ``smbclient -U a%<pw>`` (``user%``), ``lftp -u a,<pw>``.

Flags are found first (a ``-`` at a word start is cheap to find); a flag counts only when one
of its tools appears earlier in the same command (no line break, ``|``, ``;``, ``&&`` between).
Long flags that can only mean a password (``-storepass``, ``-passin pass:<pw>``, ``--pass``)
need no tool; environment variables ``*_PWD``/``*_PASS``/``SSHPASS`` are handled here too, since
their names hold no secret *word* (``PWD=/home/x`` is the working directory and survives).

A value that is an expansion (``$PASS``, ``"$(cat f)"``), a placeholder, another flag, a path or
an indirection (``env:VAR``, ``file:pw.txt``) is kept. Quotes are kept around ``[REDACTED]``.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from .secret_lexicon import REDACTED, cut_before_trailing_name, is_placeholder, unquoted_is_code


class _Tool(NamedTuple):
    name: str  # the tool's name (and subcommand), a regex
    flags: tuple[tuple[str, str], ...]  # (flag, mode), longest flag first


def _tool(name: str, *flags: tuple[str, str]) -> _Tool:
    return _Tool(name, tuple(sorted(flags, key=lambda f: -len(f[0]))))


_TOOLS: tuple[_Tool, ...] = (
    _tool(
        r"mysql(?:dump|admin|import|show|check|pump|sh)?|mariadb(?:-dump|-admin|-import|-show|-check)?",
        ("-p", "glued"),
    ),
    _tool(r"sshpass", ("-p", "spaced")),
    _tool(r"az[ \t]+login", ("-p", "spaced")),
    _tool(
        r"(?:docker|podman|nerdctl|buildah|skopeo|oras|helm[ \t]+registry)[ \t]+login",
        ("-p", "spaced"),
    ),
    _tool(r"redis-cli", ("-a", "spaced"), ("--pass", "spaced")),
    _tool(r"mongo(?:sh|dump|restore|export|import|stat|top|files)?", ("-p", "spaced")),
    _tool(r"sqlcmd|bcp|osql|isql|ipmitool", ("-P", "spaced")),
    _tool(r"ldap(?:search|modify|add|delete|whoami|passwd|compare|modrdn|exop)", ("-w", "spaced")),
    _tool(r"zip|unzip", ("-P", "spaced")),
    _tool(r"7z[ar]?|rar|unrar", ("-p", "glued")),
    _tool(r"rdesktop|ncftp(?:get|put)?", ("-p", "spaced")),
    _tool(r"plink|pscp|psftp|putty", ("-pw", "spaced")),
    _tool(r"snmp(?:walk|get|set|bulkwalk|bulkget|getnext|trap)", ("-A", "spaced"), ("-X", "spaced")),
    _tool(r"x?freerdp|wlfreerdp|sdl-freerdp", ("/p:", "glued")),
    _tool(r"openssl", ("-k", "spaced")),
    _tool(r"keytool", ("-new", "spaced")),
    _tool(r"curl", ("-u", "user:"), ("--user", "user:"), ("-U", "user:"), ("--proxy-user", "user:")),
    _tool(r"smbclient|rpcclient|smbmap|smbget|smbcacls", ("-U", "user%"), ("--user", "user%")),
    _tool(r"lftp", ("-u", "user,")),
)
# Any tool's name at a word start (as ``_word_start`` has it: not after a name character, or
# right after a JSON-escaped break; a path is fine). No group per tool: groups make the engine
# try every name at every character (300 ms/MB of prose with ``--flags``, four times this), so
# the tool is told apart only for a name found (``_tool_index``).
_TOOL_NAME = re.compile(
    r"(?:(?<![A-Za-z0-9_.\-])|(?<=\\[nrt]))(?:"
    + "|".join(f"(?:{tool.name})" for tool in _TOOLS)
    + r")(?![A-Za-z0-9_.\\-])"
)
_TOOL_NAMES = tuple(re.compile(tool.name) for tool in _TOOLS)
_TOOLS_PER_COMMAND = 8
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ESCAPED_BREAKS = ("\\n", "\\r", "\\t")


def _word_start(text: str, i: int) -> bool:
    """Whether a name starts a word at ``i``: not glued to one (a JSON-escaped ``\\n`` is a break)."""
    return i == 0 or text[i - 1] not in _NAME_CHARS or text.startswith(_ESCAPED_BREAKS, i - 2)


# A flag at a word start: ``-x``, ``--xyz``, or freerdp's ``/p:``. Literal first, so the engine
# jumps from one ``-`` to the next; the word-start test looks back from there.
_FLAG_START = re.compile(r"-(?:(?<![^\s\"'\[,(]-)|(?<=\\[nrt]-))[-A-Za-z]|/(?:(?<![^\s\"'\[,(]/)|(?<=\\[nrt]/))p:")
# A command ends at a line break (raw or JSON-escaped) or a shell separator.
_COMMAND_END = re.compile(r"\r|\n|\\n|\|\||&&|[|;`]")
_COMMAND_MAX_CHARS = 512

# Flags that can only take a password, whatever the tool.
_ANY_TOOL_FLAG = re.compile(
    r"-(?:(?<![^\s\"'\[,(]-)|(?<=\\[nrt]-))(?:-(?:pass|pwd|passwd|passphrase)|(?:passin|passout|pass|storepass|keypass|"
    r"srcstorepass|deststorepass|srckeypass|destkeypass|passphrase|password|pwd))(?:[ \t]+|=)(?=\S)"
)
# ``MYSQL_PWD=``, ``DB_PASS=``, ``SSHPASS=``: found by their tail, the name read backwards.
_ENV_NEEDLES = ("_PWD=", "_PASS=", "SSHPASS=")
_ENV_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
# Oracle tools take ``user/password@db`` as their first argument.
_SLASH_LOGIN = re.compile(
    r"(?:sqlplus|sqlldr|rman|expdp|impdp)[ \t]+(?:-[A-Za-z]+[ \t]+)*"
    r"[A-Za-z0-9_$#]{1,64}/(?P<v>[^\s@/\"'\\]{1,256})(?=@|\s|$)"
)
_SLASH_NEEDLES = ("sqlplus", "sqlldr", "rman", "expdp", "impdp")

# A value: single-quoted, double-quoted (raw or JSON-escaped), or a bare shell word.
_SQ = re.compile(r"'([^'\r\n\"\\]{1,512})'")
_DQ = re.compile(r"(\\?)\"([^\"\r\n\\]{1,512})\1\"")
_BARE = re.compile(r"[^\s\"'`\\;|&<>()]{1,512}")
_INDIRECTION = re.compile(r"(?:env|file|fd):|stdin\Z")

Span = tuple[int, int]


def _value_span(text: str, at: int) -> Span | None:
    """The body of the shell word at ``at`` (inside its quotes), or ``None``."""
    if m := _SQ.match(text, at):
        return m.start(1), m.end(1)
    if m := _DQ.match(text, at):
        body = m.group(2)
        if body[0].isspace() or body[0] in ",:;)]}":
            return None  # a bare quote closing a JSON string, not a quoted value
        return m.start(2), m.end(2)
    if m := _BARE.match(text, at):
        return m.start(), m.end()
    return None


def _secret_part(text: str, start: int, end: int, mode: str) -> Span | None:
    """Narrow a value to its secret part; ``None`` when it holds no literal secret."""
    if mode.startswith("user"):
        sep = text.find(mode[-1], start, end)
        if sep < 0:
            return None  # ``curl -u admin``: the tool prompts for the password
        start = sep + 1
    value = text[start:end]
    if value.startswith("pass:"):
        start += 5  # openssl ``-passin pass:<pw>``
        value = value[5:]
    if (
        not value
        or value[0] in "-$~/"
        or value.startswith(("[REDACTED", "./"))
        or is_placeholder(value)
        or _INDIRECTION.match(value)
    ):
        return None  # another flag, an expansion, a path, a template, or ``env:VAR``/``file:x``
    # A bare value that runs into the next ``name:`` (``SSHPASS=Authorization: Basic …``) hands
    # the name back, so the named-value rule still sees that pair.
    end = cut_before_trailing_name(text, start, end)
    return (start, end) if end > start else None


def _flag_value(text: str, at: int, flag: str, mode: str) -> Span | None:
    """The secret part of the value of ``flag`` ending at ``at``, written in ``mode``."""
    one_letter = len(flag) == 2 or flag.endswith(":")
    nxt = text[at : at + 1]
    if mode == "glued":
        if not nxt or nxt.isspace():
            return None  # ``mysql -p`` then a space prompts; the next word is a database
    elif nxt == "=":
        at += 1
    elif nxt in (" ", "\t"):
        while text[at : at + 1] in (" ", "\t"):
            at += 1
    elif not one_letter or not nxt:
        return None  # ``--user-agent``: a longer flag, not ours
    span = _value_span(text, at)
    return _secret_part(text, span[0], span[1], mode) if span is not None else None


def _tool_index(name: str) -> int:
    """Which tool a name found by ``_TOOL_NAME`` is: the first whose pattern matches all of it,
    the alternative the engine took (an earlier one that matched it would have been taken)."""
    return next(i for i, pattern in enumerate(_TOOL_NAMES) if pattern.fullmatch(name))


def _tool_spans(text: str) -> list[Span]:
    """Each flag's value, when a tool of that flag is named earlier in the same command.

    Flags are found first (a literal ``-``, cheap); tool names and command separators are looked
    for only in the 512 characters before a flag, each character at most once, so dense flags
    cost one pass of the name pattern and sparse ones (ordinary text) almost nothing. A flag
    looks back through at most ``_TOOLS_PER_COMMAND`` names, and one inside a taken value is
    skipped.
    """
    tools: list[tuple[int, int, int]] = []
    scanned = last_break = 0
    spans: list[Span] = []
    taken = 0
    for f in _FLAG_START.finditer(text):
        pos = f.start()
        if pos < taken:
            continue
        lo = max(scanned, pos - _COMMAND_MAX_CHARS)
        for m in _TOOL_NAME.finditer(text, lo, pos):
            tools.append((m.start(), m.end(), _tool_index(m.group())))
        for b in _COMMAND_END.finditer(text, lo, pos):
            last_break = b.end()
        scanned = pos
        if not tools or pos - tools[-1][1] > _COMMAND_MAX_CHARS:
            continue
        command_start = max(last_break, pos - _COMMAND_MAX_CHARS)
        for start, _end, index in reversed(tools[-_TOOLS_PER_COMMAND:]):
            if start < command_start:
                break  # the nearest tools belong to an earlier command
            flag = next((fm for fm in _TOOLS[index].flags if text.startswith(fm[0], pos)), None)
            if flag is not None:
                if (part := _flag_value(text, pos + len(flag[0]), *flag)) is not None:
                    spans.append(part)
                    taken = part[1]
                break
    return spans


def _env_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    found = sorted(
        (i, i + len(needle)) for needle in _ENV_NEEDLES if needle in text for i in _occurrences(text, needle)
    )
    taken = 0
    for i, at in found:
        if i < taken:
            continue  # inside the previous value: part of it, not a name
        start = i
        while start > 0 and text[start - 1] in _ENV_NAME_CHARS:
            start -= 1
        name = text[start : at - 1]
        if not (name[:1].isalpha() and _word_start(text, start)):
            continue
        span = _value_span(text, at)
        if span is None:
            continue
        taken = span[1]
        part = _secret_part(text, span[0], span[1], "spaced")
        # A bare value is judged like any value after a secret name: ``FIRST_PASS=1`` is a flag.
        if part is not None and (
            span[0] > at or not unquoted_is_code(text[part[0] : part[1]], name, text[part[1] : part[1] + 4])
        ):
            spans.append(part)
    return spans


def _occurrences(text: str, needle: str) -> list[int]:
    found: list[int] = []
    i = text.find(needle)
    while i >= 0:
        found.append(i)
        i = text.find(needle, i + 1)
    return found


def _any_tool_spans(text: str) -> list[Span]:
    spans: list[Span] = []
    if "pass" in text or "pwd" in text:
        for m in _ANY_TOOL_FLAG.finditer(text):
            span = _value_span(text, m.end())
            if span is not None and (part := _secret_part(text, span[0], span[1], "spaced")) is not None:
                spans.append(part)
    spans.extend(_env_spans(text))
    for needle in _SLASH_NEEDLES:
        i = text.find(needle)
        while i >= 0:
            login = _SLASH_LOGIN.match(text, i) if _word_start(text, i) else None
            if login is not None and (part := _secret_part(text, login.start("v"), login.end("v"), "spaced")):
                spans.append(part)
            i = text.find(needle, i + 1)
    return spans


def redact_cli_passwords(text: str) -> str:
    """Replace every password given on a command line (see the module docstring)."""
    spans = sorted(set(_tool_spans(text) + _any_tool_spans(text)))
    if not spans:
        return text
    out: list[str] = []
    pos = 0
    for start, end in spans:
        if start >= pos:  # the same value found twice (a tool flag that is also a password flag)
            out.append(text[pos:start])
            out.append(REDACTED)
            pos = end
    out.append(text[pos:])
    return "".join(out)
