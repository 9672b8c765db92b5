"""What the tests of the real agent programs (Claude Code, Codex CLI, Gemini CLI) share.

Each of those tests installs our hooks with the README's own line into a tmp HOME, runs the real
program against the scripted model server, and then looks at the project's store. The steps that
do not depend on which program ran live here once: the hook helper's socket folder (and waiting
for the helper to exit), the install, the queue and store checks, and the check that nothing of
an injected block was retained.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ..plugin.hostkit import Project, wait_until
from .model_server import RecordedRequest, iter_texts
from .readme_lines import install_line

SCRIPT = Path(sys.executable).parent / "hindsight-hooks"
DECISION = "We decided to use Postgres 16 for the cache"
QUESTION = "Which database do we use for the cache?"


def free_runtime(folder: Path, timeout_s: float = 15.0) -> None:
    """Remove the helper sockets in ``folder`` (each helper then exits by itself), wait for their
    locks to be free (the helper has exited), and remove the folder."""
    import fcntl

    locks = sorted(folder.glob("*.lock"))
    for sock in folder.glob("*.sock"):
        sock.unlink(missing_ok=True)
    end = time.monotonic() + timeout_s
    for lock in locks:
        fd = os.open(lock, os.O_RDWR)
        try:
            while time.monotonic() < end:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError:
                    time.sleep(0.05)
        finally:
            os.close(fd)
    shutil.rmtree(folder, ignore_errors=True)


def short_runtime_dir() -> Path:
    """A fresh folder for the hook helper's socket; short, as a Unix socket's path must fit in ~107
    bytes and pytest's tmp paths are long."""
    return Path(tempfile.mkdtemp(prefix="hh-rt-", dir="/tmp"))


@pytest.fixture
def runtime() -> Iterator[Path]:
    """The hook helper's socket folder for one test; the helper has exited when the test is over."""
    folder = short_runtime_dir()
    yield folder
    free_runtime(folder)


def install_by_readme(agent: str, project: Project, env: dict[str, str]) -> None:
    """Run the README's install line for ``agent`` exactly as written, our console script on PATH."""
    install = subprocess.run(
        ["bash", "-c", install_line(agent)],
        cwd=project.root,
        env={**env, "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert install.returncode == 0, install.stdout + install.stderr


def drained(project: Project) -> bool:
    """The queue exists and holds no job: everything retained has been delivered."""
    return project.queue_path.exists() and project.queue_jobs() == []


def count(project: Project, text: str) -> int:
    """``project.unit_count``, or 0 while a worker is still creating the store's tables."""
    try:
        return project.unit_count(text)
    except sqlite3.OperationalError:
        return 0


def memory_report(project: Project, text: str) -> str:
    """What a failed wait for ``text`` to be retained found, without a line of transcript: how many
    units hold it, the queue's jobs, the dead letters, the state folder's files and their sizes."""
    files = sorted(
        f"{p.relative_to(project.state)}={p.stat().st_size}" for p in project.state.rglob("*") if p.is_file()
    )
    queued = project.queue_jobs() if project.queue_path.exists() else None
    jobs = [
        f"attempts={job.get('attempts')} next={job.get('next_attempt_at')} error={job.get('last_error')!r}"
        for job in queued or []
    ]
    return (
        f"units holding {text!r}: {count(project, text)}; queue: "
        f"{'absent' if queued is None else f'{len(queued)} job(s) {jobs}'}; "
        f"dead letters: {len(project.dead_jobs())}; state files: {', '.join(files)}"
    )


def await_retained(project: Project, text: str, what: str = "not retained", timeout_s: float = 90) -> None:
    """Wait until ``text`` is in one unit and the queue is drained; on failure say ``what`` and
    what was found."""
    assert wait_until(lambda: count(project, text) == 1 and drained(project), timeout_s), (
        f"{what}: {memory_report(project, text)}"
    )


def session_report(project: Project, session_id: str) -> dict[str, Any]:
    """``hindsight-hooks session --json`` for the agent session ``session_id`` (run from a shell)."""
    proc = subprocess.run(
        [str(SCRIPT), "session", "--json", "--session-file", f".hindsight/sessions/{session_id}.jsonl"],
        cwd=project.root,
        env={k: v for k, v in os.environ.items() if not k.startswith("HINDSIGHT")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert isinstance(report, dict)
    return report


def assert_only_the_turn_was_retained(project: Project, block: str, markers: tuple[str, ...]) -> None:
    """After a session whose prompt was :data:`QUESTION` and whose request carried ``block``: the
    prompt is retained once, no unit holds any of ``markers`` (our tags as the agent saw them) or a
    line of the block, and the recalled decision is not retained again."""
    await_retained(project, QUESTION, "session 2's prompt was not retained")
    time.sleep(1.0)  # a late worker would still be delivering now; then nothing may have changed
    assert drained(project)
    units = [content for _, content in project.units()]
    assert not any(marker in u for u in units for marker in markers)
    block_lines = [ln.strip() for ln in block.splitlines()[1:-1] if ln.strip() and not ln.strip()[0].isdigit()]
    assert block_lines
    for line in block_lines:
        assert not any(line in u for u in units), f"a line of our block was retained: {line!r}"
    assert project.unit_count("Postgres 16") == 1  # the recalled fact was not retained again


def block_in(request: RecordedRequest) -> str:
    """Our block as the model received it, tags unescaped ('' when absent)."""
    for text in iter_texts(request.body):
        start = text.find("<hindsight-memory>")
        if start >= 0:
            end = text.find("</hindsight-memory>", start)
            assert end > start, "the block reached the model cut short"
            return text[start : end + len("</hindsight-memory>")]
    return ""


def said_in_two_turns(
    run: Callable[..., dict[str, Any]], project: Project, first: tuple[str, str], then: tuple[str, str]
) -> None:
    """One session of a host whose ``run`` resumes with ``--resume <session_id>`` (Claude Code,
    Gemini CLI) says ``first`` and then, resumed, ``then``: each a prompt and the words that show
    it was retained, waited for before the next turn."""
    one = run(first[0])
    await_retained(project, first[1], f"{first[1]!r} was not retained")
    run(then[0], "--resume", one["session_id"])
    await_retained(project, then[1], f"{then[1]!r} was not retained")


def assert_answer_follows(items: list[str], question: str, answer: str, block: str) -> None:
    """The block's item that holds ``question`` is followed by the one that holds ``answer`` (ADR 219)."""
    asked = next((n for n, line in enumerate(items) if question in line), None)
    assert asked is not None, block
    assert answer in [*items, ""][asked + 1], block


def item_lines(block: str) -> list[str]:
    """The numbered item lines of a block as the model received it (a continuation line is none)."""
    return [line for line in block.splitlines() if line[:1].isdigit()]
