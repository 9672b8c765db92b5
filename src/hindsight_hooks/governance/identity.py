"""Who we are and where memory may go: repo root, bank ids, session ids, tags and scope filters.

Everything here is a pure function of paths, config and the host name (docs/identity-and-scope.md), so
two processes in the same repository always agree on the bank, the repo tag and the filters:
that agreement is what keeps project memory inside its project. The only I/O is one bounded
``git rev-parse`` per cwd per process (memoised) and reading directory entries for the
``.git`` fallback.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from ..backends.base import BankSpec

if TYPE_CHECKING:
    from ..config_model import BankConfig, Config
    from ..hooks.context import HostContext

GIT_TIMEOUT_S = 1.0

# -- hashing and slugs --------------------------------------------------------------------------


def hash_n(s: str, n: int) -> str:
    """The first ``n`` hex characters of sha256(utf8(s)) — the spec's ``hashN``."""
    return hashlib.sha256(s.encode("utf-8")).hexdigest()[:n]


_SLUG_RUNS = re.compile(r"[^a-z0-9]+")


def slug(s: str) -> str:
    """Lower-case, runs outside ``[a-z0-9]`` → ``-``, trim ``-``, keep 48 chars; empty → ``repo``.

    The cut happens after the trim, exactly as docs/identity-and-scope.md#repo-root orders it, so ids stay
    byte-identical to
    other implementations of the same rule (a cut may leave a trailing ``-``).
    """
    out = _SLUG_RUNS.sub("-", s.lower()).strip("-")[:48]
    return out or "repo"


_HOST_BAD = re.compile(r"[^a-z0-9._-]")


def host_slug(host_name: str) -> str:
    """``<host>``: the host name lower-cased, chars outside ``[a-z0-9._-]`` → ``-``; empty → ``agent``.

    Idempotent, so callers may pass either a raw host name or an already-slugged one.
    """
    out = _HOST_BAD.sub("-", (host_name or "").lower())
    return out or "agent"


# -- repo root ------------------------------------------------------------------------------------

_root_memo: dict[str, Path] = {}
_root_lock = threading.Lock()

# Variables that would make git answer about some other repository than the one at ``cwd``
# (a host running inside a git hook exports them). The root must depend on cwd alone.
_GIT_ENV_DROP = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_PREFIX",
    "GIT_CEILING_DIRECTORIES",
)


def _git_root(cwd: Path) -> Path | None:
    """The root git reports for ``cwd``, or ``None`` when git is missing, slow or says no."""
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROP}
    env["GIT_OPTIONAL_LOCKS"] = "0"
    env["LC_ALL"] = "C"
    try:
        proc = subprocess.run(
            [
                "git",
                "-C",
                str(cwd),
                "rev-parse",
                "--path-format=absolute",
                "--git-common-dir",
                "--git-dir",
                "--show-toplevel",
            ],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT_S,
            env=env,
            check=False,
        )
    except (OSError, subprocess.SubprocessError, ValueError):
        return None
    if proc.returncode != 0:
        return None
    lines = [ln for ln in proc.stdout.decode("utf-8", "surrogateescape").splitlines() if ln.strip()]
    if len(lines) < 3:
        return None
    common, git_dir, toplevel = lines[0], lines[1], lines[2]
    if os.path.realpath(common) != os.path.realpath(git_dir):
        # A linked worktree: its git dir lives under the main repo's common dir.
        return Path(common).parent
    return Path(toplevel)


def _walk_for_dotgit(cwd: Path) -> Path | None:
    """The first folder at or above ``cwd`` holding a ``.git`` entry (file or folder)."""
    current = cwd
    while True:
        if os.path.lexists(current / ".git"):
            return current
        parent = current.parent
        if parent == current:
            return None
        current = parent


def find_repo_root(cwd: Path) -> Path:
    """The repository root of ``cwd`` (docs/identity-and-scope.md#repo-root), computed once per cwd per process.

    Linked worktrees resolve to the main worktree and subfolders to their toplevel, so every
    checkout of one repository shares one bank; a submodule is its own repository.
    """
    real = Path(os.path.realpath(cwd))
    key = str(real)
    with _root_lock:
        hit = _root_memo.get(key)
    if hit is not None:
        return hit
    root = _git_root(real) or _walk_for_dotgit(real) or real
    resolved = Path(os.path.realpath(root))
    with _root_lock:
        _root_memo.setdefault(key, resolved)
        return _root_memo[key]


def clear_repo_root_cache() -> None:
    """Forget memoised roots (for long-lived processes whose folders changed shape)."""
    with _root_lock:
        _root_memo.clear()


def repo_key(root: Path) -> str:
    """``slug(basename(root))-hash12(root)``: the repo tag value and the scope of project recall."""
    s = str(root)
    return f"{slug(os.path.basename(s))}-{hash_n(s, 12)}"


# -- banks ----------------------------------------------------------------------------------------


def project_bank_id(cfg_bank: BankConfig, root: Path, cwd: Path) -> str | None:
    """The project bank (docs/identity-and-scope.md#bank-ids); ``None`` when the project bank is disabled.

    ``derive="manual"`` with an empty ``bank_id`` (normalisation should prevent it) falls back to
    the repo derivation rather than to "no bank", so a half-set config never widens scope.
    """
    if not cfg_bank.enabled:
        return None
    if cfg_bank.bank_id:
        return cfg_bank.bank_id
    basis = str(cwd) if cfg_bank.derive == "cwd" else str(root)
    return f"hh-project-{slug(os.path.basename(basis))}-{hash_n(basis, 12)}"


def user_bank_id(cfg: Config) -> str | None:
    """The user bank: configured only, never derived; enabled and non-empty or nothing."""
    user = cfg.banks.user
    return user.bank_id if user.enabled and user.bank_id else None


# -- session and document ids ----------------------------------------------------------------------

_process_uuid: tuple[int, str] | None = None
_uuid_lock = threading.Lock()


def process_uuid() -> str:
    """One uuid4 per process (a forked child draws its own), the salt of ephemeral sids."""
    global _process_uuid
    pid = os.getpid()
    with _uuid_lock:
        if _process_uuid is None or _process_uuid[0] != pid:
            _process_uuid = (pid, str(uuid.uuid4()))
        return _process_uuid[1]


def session_id(session_file: Path | None, cwd: Path) -> str:
    """The 16-hex sid (docs/identity-and-scope.md#session-and-document-ids): a hash of the absolute session file, else
    an ephemeral per-process id.

    An absolute path always starts with ``/``, so no file — not even one named
    ``ephemeral:<cwd>`` — can collide with the ephemeral form.
    """
    if session_file is not None:
        return hash_n(os.path.abspath(str(session_file)), 16)
    return hash_n(f"ephemeral:{os.path.realpath(cwd)}:{process_uuid()}", 16)


def canonical_json(obj: dict[str, Any]) -> str:
    """Canonical JSON: compact separators, keys in the given order, ``None`` values omitted."""
    return json.dumps({k: v for k, v in obj.items() if v is not None}, separators=(",", ":"), ensure_ascii=False)


def live_document_id(sid: str) -> str:
    return f"hh-session:{sid}"


def explicit_document_id(sid: str, bank_id: str, content: str, context: str | None) -> str:
    """``hh-explicit:<sid>:<hash16>``: retaining the same memory twice replaces, never duplicates."""
    body = canonical_json({"bank_id": bank_id, "content": content, "context": context})
    return f"hh-explicit:{sid}:{hash_n(body, 16)}"


_ISID_BAD = re.compile(r"[^A-Za-z0-9._-]")


def import_session_id(header_id: object, session_file: Path) -> str:
    """``isid``: the session header's id (sanitised) if non-empty, else the sid of the file."""
    if isinstance(header_id, str) and header_id:
        return _ISID_BAD.sub("-", header_id)
    return hash_n(os.path.abspath(str(session_file)), 16)


@dataclass(frozen=True)
class CuratedChunk:
    """The parts of a curated import id: the chunking policy and this chunk's place in it."""

    turns: int
    max_bytes: int
    index: int
    start: int
    end: int


def import_document_id(isid: str, leaf_id: str, chunk: CuratedChunk | None = None) -> str:
    """``hh-import:<isid>:leaf:<leaf>`` (+ the curated suffix): re-imports overwrite themselves."""
    base = f"hh-import:{isid}:leaf:{leaf_id}"
    if chunk is None:
        return base
    return (
        f"{base}:turns-{chunk.turns}-bytes-{chunk.max_bytes}:curated-turns-v1"
        f":chunk-{chunk.index}-{chunk.start}-{chunk.end}"
    )


def chat_document_id(path: Path) -> str:
    return f"hh-chat:{hash_n(os.path.abspath(str(path)), 16)}"


# -- tags -------------------------------------------------------------------------------------------


def dedupe(items: list[str]) -> list[str]:
    """Order-preserving de-duplication."""
    seen: set[str] = set()
    out: list[str] = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


def base_tags(host: str, repo_key: str, sid: str, session_tags: list[str] | None = None) -> list[str]:
    """``source:<host>``, ``harness:<host>``, ``repo:<key>``, ``session:<sid>``, then the session tags."""
    h = host_slug(host)
    return dedupe([f"source:{h}", f"harness:{h}", f"repo:{repo_key}", f"session:{sid}", *(session_tags or [])])


# -- identity ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """Everything a hook needs to name this session's memory; resolved once per session_start."""

    cwd: Path
    root: Path
    repo_key: str
    host: str
    sid: str
    project_bank_id: str | None
    user_bank_id: str | None
    session_file: Path | None

    def base_tags(self, session_tags: list[str] | None = None) -> list[str]:
        return base_tags(self.host, self.repo_key, self.sid, session_tags)

    def observation_values(self, bank_id: str) -> dict[str, str]:
        """The docs/identity-and-scope.md#observation-scopes placeholder values for a job that targets ``bank_id``."""
        return {
            "repoKey": self.repo_key,
            "sessionId": self.sid,
            "cwdHash": hash_n(str(self.cwd), 12),
            "projectBankId": self.project_bank_id or "",
            "bankId": bank_id,
            "hostName": self.host,
        }


def resolve_identity(ctx: HostContext, cfg: Config) -> Identity:
    cwd = Path(os.path.realpath(ctx.cwd))
    root = find_repo_root(cwd)
    session_file = Path(ctx.session_file) if ctx.session_file is not None else None
    return Identity(
        cwd=cwd,
        root=root,
        repo_key=repo_key(root),
        host=host_slug(ctx.host_name),
        sid=session_id(session_file, cwd),
        project_bank_id=project_bank_id(cfg.banks.project, root, cwd),
        user_bank_id=user_bank_id(cfg),
        session_file=session_file,
    )


# -- scope filters ----------------------------------------------------------------------------------

TagGroup = dict[str, Any]
SHARED_OBSERVATIONS: TagGroup = {"tags": [], "match": "exact"}


def project_scope_groups(repo_key: str) -> list[TagGroup]:
    """Project recall: strictly the memories tagged with this repo."""
    return [{"tags": [f"repo:{repo_key}"], "match": "any_strict"}]


def user_scope_tags(cfg: Config, host: str) -> list[str]:
    h = host_slug(host)
    return dedupe([t.replace("<host>", h) for t in cfg.scope.user_scope_tags])


def user_scope_groups(cfg: Config, host: str) -> list[TagGroup]:
    """User recall: ``any_strict`` over ``user_scope_tags`` (``<host>`` substituted); ``[]`` = no filter."""
    tags = user_scope_tags(cfg, host)
    if not tags:
        return []
    group: TagGroup = {"tags": tags, "match": "any_strict"}
    if cfg.scope.include_shared_observations:
        return [{"or": [group, dict(SHARED_OBSERVATIONS, tags=[])]}]
    return [group]


def _is_leaf(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("tags"), list) and "match" in group


def compose_tool_groups(
    scope_groups: list[TagGroup] | None,
    tags: list[str] | None,
    tags_match: str | None,
    caller_groups: list[TagGroup] | None,
) -> list[TagGroup]:
    """The filter a tool sends (docs/identity-and-scope.md#scope-filters): scope group(s), the caller's tag leaf, the
    caller's groups.

    With ``tags_match="exact"`` the scope leaf and the caller leaf fold into one exact leaf:
    AND-ing two different exact sets (or ``any_strict`` with ``exact``) could never match. When
    the scope is the ``include_shared_observations`` OR, its untagged branch cannot satisfy an
    exact non-empty caller set either, so the fold keeps only the scoped branch.
    """
    scope = [dict(g) for g in (scope_groups or [])]
    caller_tags = dedupe(list(tags or []))
    out: list[TagGroup]
    if caller_tags and tags_match == "exact":
        folded = False
        out = []
        for g in scope:
            if not folded and _is_leaf(g):
                out.append({"tags": dedupe([*g["tags"], *caller_tags]), "match": "exact"})
                folded = True
            elif not folded and isinstance(g.get("or"), list) and g["or"] and _is_leaf(g["or"][0]):
                out.append({"tags": dedupe([*g["or"][0]["tags"], *caller_tags]), "match": "exact"})
                folded = True
            else:
                out.append(g)
        if not folded:
            out.append({"tags": caller_tags, "match": "exact"})
    else:
        out = scope
        if caller_tags:
            out.append({"tags": caller_tags, "match": tags_match or "any_strict"})
    out.extend(dict(g) for g in (caller_groups or []))
    return out


# -- observation scopes -------------------------------------------------------------------------------

OBSERVATION_PLACEHOLDERS = ("repoKey", "sessionId", "cwdHash", "projectBankId", "bankId", "hostName")
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def validate_observation_scopes(scopes: object) -> list[list[str]]:
    """Check the config shape (docs/configuration.md#normalisation/docs/identity-and-scope.md#observation-scopes); raise
    ``ValueError`` naming what is wrong."""
    if not isinstance(scopes, list) or not scopes:
        raise ValueError("observations.scopes must be a non-empty list of tag lists")
    out: list[list[str]] = []
    for i, group in enumerate(scopes):
        if not isinstance(group, list) or not group:
            raise ValueError(f"observations.scopes[{i}] must be a non-empty list of tags")
        for j, tag in enumerate(group):
            if not isinstance(tag, str) or not tag.strip():
                raise ValueError(f"observations.scopes[{i}][{j}] must be a non-empty string")
            for name in _PLACEHOLDER.findall(tag):
                if name not in OBSERVATION_PLACEHOLDERS:
                    raise ValueError(
                        f"observations.scopes[{i}][{j}] uses unknown placeholder {{{name}}}; "
                        f"known: {', '.join('{' + p + '}' for p in OBSERVATION_PLACEHOLDERS)}"
                    )
        out.append(list(group))
    return out


def expand_observation_scopes(scopes: list[list[str]], values: dict[str, str]) -> list[list[str]]:
    """Substitute placeholders and drop repeated groups (first kept), at job build time.

    The result is stored on each item, so a retried job keeps the policy it was built under.
    """
    validate_observation_scopes(scopes)

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        value = values.get(name)
        if not value:
            raise ValueError(f"observation scope placeholder {{{name}}} has no value")
        return value

    out: list[list[str]] = []
    seen: set[tuple[str, ...]] = set()
    for group in scopes:
        expanded = [_PLACEHOLDER.sub(sub, tag) for tag in group]
        key = tuple(expanded)
        if key not in seen:
            seen.add(key)
            out.append(expanded)
    return out


# -- missions -------------------------------------------------------------------------------------------

BankRole = Literal["project", "user"]

BUILTIN_MISSIONS: dict[BankRole, dict[str, str]] = {
    "project": {
        "reflect": (
            "Help a coding agent recall project-specific architecture, engineering decisions, conventions, "
            "tasks, bugs, fixes, constraints, and continuity."
        ),
        "retain": (
            "Extract durable project memory from raw coding sessions: architecture decisions, constraints, "
            "bugs, fixes, TODOs, repo conventions, and project-local user preferences. Ignore transient "
            "chatter, secrets, and resurfaced recalled memories unless they add a new correction or decision."
        ),
        "observations": (
            "Identify durable project patterns, recurring constraints, architectural preferences, and "
            "contradictions across coding sessions. Focus on stable repo-relevant knowledge, not transient "
            "task state."
        ),
    },
    "user": {
        "reflect": (
            "Help a coding agent recall durable cross-project user preferences, recurring workflows, coding "
            "habits, and stable assistant behavior guidance."
        ),
        "retain": (
            "Extract durable cross-project memory from raw sessions: user preferences, recurring workflows, "
            "coding habits, and stable assistant behavior. Do not retain repo-specific code facts, file "
            "paths, project-local bugs, or transcript dumps unless they generalize across projects."
        ),
        "observations": (
            "Identify durable cross-project user preferences, recurring workflows, coding habits, and stable "
            "assistant behavior patterns. Ignore repo-specific implementation details unless they generalize "
            "across projects."
        ),
    },
}


def bank_spec(cfg: Config, role: BankRole | str) -> BankSpec:
    """What a bank is created with (docs/identity-and-scope.md#missions); used only at creation, never to modify a
    bank."""
    if role == "project":
        bank, builtin = cfg.banks.project, BUILTIN_MISSIONS["project"]
    elif role == "user":
        bank, builtin = cfg.banks.user, BUILTIN_MISSIONS["user"]
    else:
        raise ValueError(f"unknown bank role {role!r}; use 'project' or 'user'")
    return BankSpec(
        retain_mission=bank.retain_mission or builtin["retain"],
        reflect_mission=bank.reflect_mission or builtin["reflect"],
        observations_mission=bank.observations_mission or builtin["observations"],
        retain_extraction_mode=bank.retain_extraction_mode,
        enable_observations=cfg.observations.enabled,
        retain_structured_chunk_size=bank.retain_structured_chunk_size,
    )
