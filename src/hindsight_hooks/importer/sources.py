"""Which session files may be imported here (docs/import.md "Sources" and "Belonging").

Imports write to the *project* bank, so a session recorded in another repository must never
land there: that would leak one project's memory into another's recall. A file belongs when
its header ``cwd`` (after realpath) is this session's cwd or lies inside the repo root.
Discovery is stricter than an explicit file: a header without ``cwd`` cannot be proven to
belong, so discovery skips it, while a person naming the file explicitly vouches for it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import HindsightHooksError
from .pi_session import EmptyFileError, SessionFormatError, SessionHeader, first_json_line, parse_header, sniff


class ImportRefused(HindsightHooksError):
    """The file may not be imported here; the message names the paths involved, never content."""


def header_cwd(header: SessionHeader, session_path: Path) -> str | None:
    """The header's cwd after realpath (relative to the file's folder), or ``None``."""
    if not header.cwd:
        return None
    return os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(session_path)), header.cwd))


def belongs(session_cwd: str, cwd: Path, root: Path) -> bool:
    """``session_cwd`` is ``cwd`` or lies inside ``root`` (all compared after realpath)."""
    real = Path(os.path.realpath(session_cwd))
    if real == Path(os.path.realpath(cwd)):
        return True
    real_root = Path(os.path.realpath(root))
    return real == real_root or real_root in real.parents


def check_belongs(path: Path, header: SessionHeader, cwd: Path, root: Path, *, explicit: bool) -> None:
    """Raise ``ImportRefused`` unless ``path`` belongs to this project."""
    check_cwd_belongs(path, header_cwd(header, path), cwd, root, explicit=explicit, where="its session header")


def check_cwd_belongs(
    path: Path, session_cwd: str | None, cwd: Path, root: Path, *, explicit: bool, where: str = "its lines"
) -> None:
    """Raise ``ImportRefused`` unless a session recorded in ``session_cwd`` belongs to this project.

    ``where`` says where the cwd would have been found, for the refusal of a file without one.
    """
    if session_cwd is None:
        if explicit:
            return
        raise ImportRefused(f"{path} has no cwd in {where}; discovery cannot prove it belongs here")
    session_cwd = os.path.realpath(session_cwd)
    if not belongs(session_cwd, cwd, root):
        raise ImportRefused(
            f"refusing {path}: it was recorded in {session_cwd}, which is outside this project ({root})"
        )


@dataclass
class Discovery:
    """The result of scanning a folder: files to import, and the others with the reason.

    ``missing`` is set when the folder does not exist (yet): a project with no saved sessions,
    which is "nothing found", not an error.
    """

    folder: Path
    accepted: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
    missing: bool = False

    @property
    def candidates(self) -> int:
        """How many ``.jsonl`` files were looked at."""
        return len(self.accepted) + len(self.refused)


def _not_a_session(path: Path) -> str:
    """Why a file without a session header was skipped (names a damaged line, never content)."""
    try:
        kind = sniff(path)
    except EmptyFileError:
        return "empty file"
    except SessionFormatError as exc:
        return str(exc).removeprefix(f"{path}: ")
    except OSError as exc:
        return f"unreadable ({type(exc).__name__})"
    return (
        "not a Pi session file (a chat transcript? import it with import-file)"
        if kind == "chat"
        else "not a Pi session"
    )


def discover(folder: Path, cwd: Path, root: Path) -> Discovery:
    """The ``.jsonl`` files in ``folder`` (not recursive, sorted by name) whose header belongs here.

    A folder that does not exist gives an empty result with ``missing`` set; one that exists but
    cannot be listed (permissions, not a folder) is ``ImportRefused``.
    """
    found = Discovery(folder=Path(folder))
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        found.missing = True
        return found
    except OSError as exc:
        raise ImportRefused(f"cannot list {folder}: {type(exc).__name__}") from None
    for name in names:
        path = Path(folder) / name
        if not name.endswith(".jsonl") or not path.is_file():
            continue
        try:
            header = parse_header(first_json_line(path))
        except (SessionFormatError, OSError) as exc:
            found.refused.append((path, str(exc) if isinstance(exc, SessionFormatError) else type(exc).__name__))
            continue
        if header is None:
            found.refused.append((path, _not_a_session(path)))
            continue
        try:
            check_belongs(path, header, cwd, root, explicit=False)
        except ImportRefused as exc:
            found.refused.append((path, str(exc)))
            continue
        found.accepted.append(path)
    return found


@dataclass
class HostDiscovery:
    """Another agent's sessions of this project (Claude Code, Codex): where we looked, what we took.

    ``folders`` are the folders that exist and were read (empty when the agent keeps nothing
    for this project, which is then not worth a word); ``refused`` are files that claim to be
    this project's but cannot be imported, with the reason.
    """

    kind: str
    base: Path
    folders: list[Path] = field(default_factory=list)
    accepted: list[Path] = field(default_factory=list)
    refused: list[tuple[Path, str]] = field(default_factory=list)
