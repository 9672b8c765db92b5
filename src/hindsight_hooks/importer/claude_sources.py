"""Where Claude Code keeps a project's sessions, and which of them belong to this project.

Claude Code writes each session to ``<config>/projects/<slug>/<session id>.jsonl``, where
``<config>`` is ``$CLAUDE_CONFIG_DIR`` or ``$HOME/.claude`` and ``<slug>`` is the session's
folder with every character outside ``[a-zA-Z0-9]`` replaced by ``-`` (counted in UTF-16 code
units, as JavaScript does). A slug longer than 200 characters is cut to 200 and followed by
``-`` and a base-36 hash of the folder; since Claude Code itself also accepts any folder with
that 200-character prefix (its hash changed between builds), we do too. This was read off
Claude Code 2.1.197 and checked against what the real program wrote (ADR-110).

A slug is lossy (``/a/b-c`` and ``/a/b/c`` share one), so the folder only says where to look:
a file is taken when the ``cwd`` its own lines record belongs to this project (the same rule
as Pi sessions, :func:`~.sources.check_cwd_belongs`). We look in the folders of the project's
cwd and root and of the root's subfolders (a session started in ``repo/api`` is this
project's too); files found through a subfolder prefix that turn out to be another folder's
(``/x/widget-api`` beside ``/x/widget``) are not ours to report and are passed over silently.
Only the ``.jsonl`` files directly in a folder are sessions: Claude Code keeps subagent
transcripts and memory notes in subfolders.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .formats import CLAUDE_CODE, is_claude_line
from .jsonl_lines import numbered_objects
from .sources import HostDiscovery, ImportRefused, check_cwd_belongs

SLUG_MAX = 200
PEEK_LINES = 200
"""How many lines discovery reads to find a session's ``cwd`` (it is on every conversation line)."""


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR/projects``, else ``$HOME/.claude/projects``."""
    config = env.get("CLAUDE_CONFIG_DIR")
    if not config:
        home = env.get("HOME") or str(Path.home())
        config = os.path.join(home, ".claude")
    return Path(config) / "projects"


def _utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]


def _js_hash36(text: str) -> str:
    """``Math.abs(h).toString(36)`` of the 32-bit ``h = 31*h + unit`` over UTF-16 code units."""
    h = 0
    for unit in _utf16_units(text):
        h = (h * 31 + unit) & 0xFFFFFFFF
    value = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rem = divmod(value, 36)
        out = digits[rem] + out
        if value == 0:
            return out


def project_slug(folder: str) -> str:
    """Claude Code's folder name for sessions recorded in ``folder``."""
    slug = "".join(chr(u) if chr(u).isascii() and chr(u).isalnum() else "-" for u in _utf16_units(folder))
    if len(slug) <= SLUG_MAX:
        return slug
    return f"{slug[:SLUG_MAX]}-{_js_hash36(folder)}"


def _candidate_folders(base: Path, cwd: Path, root: Path) -> list[tuple[Path, bool]]:
    """``(folder, exact)`` pairs: the slug folders of cwd and root (exact), then prefix matches."""
    places = []
    for place in (str(cwd), os.path.realpath(cwd), str(root), os.path.realpath(root)):
        if place not in places:
            places.append(place)
    exact = [project_slug(p) for p in places]
    prefixes = [f"{project_slug(str(root))[:SLUG_MAX]}-", f"{project_slug(os.path.realpath(root))[:SLUG_MAX]}-"]
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    out: list[tuple[Path, bool]] = []
    for name in names:
        if not (base / name).is_dir():
            continue
        if name in exact:
            out.append((base / name, True))
        elif any(name.startswith(p) for p in prefixes):
            out.append((base / name, False))
    return out


def session_cwd(path: Path) -> str | None:
    """The ``cwd`` of the first conversation line that records one (read up to :data:`PEEK_LINES`)."""
    for count, (_, obj, _nl) in enumerate(numbered_objects(path)):
        if obj is not None and is_claude_line(obj) and isinstance(obj.get("cwd"), str) and obj["cwd"]:
            return str(obj["cwd"])
        if count + 1 >= PEEK_LINES:
            break
    return None


def discover_claude(env: Mapping[str, str], cwd: Path, root: Path) -> HostDiscovery:
    """The Claude Code sessions recorded in this project (sorted by folder, then name)."""
    found = HostDiscovery(kind=CLAUDE_CODE, base=projects_dir(env))
    for folder, exact in _candidate_folders(found.base, cwd, root):
        found.folders.append(folder)
        try:
            names = sorted(os.listdir(folder))
        except OSError as exc:
            found.refused.append((folder, f"cannot list it ({type(exc).__name__})"))
            continue
        for name in names:
            path = folder / name
            if not name.endswith(".jsonl") or not path.is_file():
                continue
            _consider(found, path, cwd, root, exact=exact)
    return found


def _consider(found: HostDiscovery, path: Path, cwd: Path, root: Path, *, exact: bool) -> None:
    try:
        if path.stat().st_size == 0:
            found.refused.append((path, "empty file"))
            return
        recorded = session_cwd(path)
    except OSError as exc:
        found.refused.append((path, f"unreadable ({type(exc).__name__})"))
        return
    try:
        check_cwd_belongs(path, recorded, cwd, root, explicit=False)
    except ImportRefused as exc:
        if exact:
            found.refused.append((path, str(exc)))
        return
    found.accepted.append(path)
