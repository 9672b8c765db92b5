"""Recall by meaning through the plugin, with the ``[semantic]`` extra installed (ADR 116, 117).

A real ``Host`` loads the plugin from its entry point on the embedded store; nothing is
configured for semantic recall: installing the extra is enough. Vectors come from the store's
background worker, so the tests wait (bounded) until the memory is found by meaning.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from hindsight_hooks.hooks import user_message

from .hostkit import Project, injected_block, isolated, local_project, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

FACT = "we run Postgres 16"
SCRIPT = Path(sys.executable).parent / "hindsight-hooks"


def _cli(project: Project, *argv: str) -> None:
    """``hindsight-hooks ARGV`` in the project, a process of its own (the isolated HOME and XDG folders)."""
    proc = subprocess.run([str(SCRIPT), *argv], cwd=project.root, env=dict(os.environ), capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 0, proc.stderr


def _retain(host: Any, text: str) -> None:
    result = host.call_tool("hindsight_retain", {"items": [{"content": text}], "async": False})
    assert not result.is_error, result


def test_database_recalls_postgres_and_reflect_answers_with_it(local_project: Project) -> None:
    with local_project.host() as host:
        _retain(host, FACT)
        _retain(host, "I like pizza on fridays")

        def found() -> bool:
            result = host.call_tool("hindsight_recall", {"query": "database"})
            return FACT in result.text

        assert wait_until(found, timeout_s=120, step_s=0.2)
        recalled = host.call_tool("hindsight_recall", {"query": "database"}).text
        assert "pizza" not in recalled
        reflected = host.call_tool("hindsight_reflect", {"query": "what database do we use?"}).text
        assert FACT in reflected.split("## Top Facts")[1].split("\n")[1]


def test_the_context_hook_injects_the_memory_found_by_meaning(local_project: Project) -> None:
    with local_project.host() as host:
        _retain(host, FACT)
        assert wait_until(
            lambda: FACT in host.call_tool("hindsight_recall", {"query": "database"}).text, timeout_s=120, step_s=0.2
        )
    with local_project.host("s2") as host:  # a new session: the block is built from the store
        block = None
        for n in range(200):  # the new process-side matrix loads on the worker after the first recall
            block = injected_block(host.context([user_message(f"which database engine should I tune? ({n})")]))
            if block is not None and FACT in str(block["content"]):
                break
            wait_until(lambda: False, timeout_s=0.2)
        assert block is not None and FACT in str(block["content"])


def test_semantic_off_keeps_recall_by_words(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    with local_project.host() as host:
        _retain(host, FACT)
        assert "Postgres" in host.call_tool("hindsight_recall", {"query": "postgres"}).text
        assert FACT not in host.call_tool("hindsight_recall", {"query": "database"}).text
    assert local_project._query("SELECT count(*) FROM unit_vectors") == [(0,)]


QUESTION = "what database do we use?"  # no word of FACT: found by meaning or not at all


def _first_turn_block(host: Any) -> str:
    block = injected_block(host.context([user_message(QUESTION)]))
    return "" if block is None else str(block["content"])


def test_a_new_session_in_the_same_process_is_searched_by_meaning_from_its_first_turn(
    local_project: Project,
) -> None:
    """The hook helper, a framework's agent, Pi's bridge: one process serves session after session,
    each with a backend of its own; the vectors an earlier session read serve the next (ADR 175)."""
    with local_project.host() as host:
        _retain(host, FACT)
        assert wait_until(lambda: FACT in host.call_tool("hindsight_recall", {"query": "database"}).text, 120, 0.2)
    with local_project.host("s2") as host:
        assert FACT in _first_turn_block(host)


def test_a_session_in_a_long_lived_host_loads_its_vectors_before_its_first_turn(local_project: Project) -> None:
    """The vectors were written by other processes (the command line here); this process has never
    read them. A host that is not short-lived has them read at session start, in the background."""
    from hindsight_hooks.backends.factory import shared_semantic

    _cli(local_project, "retain", FACT)
    _cli(local_project, "embed")
    assert local_project.units_without_vector() == 0
    with local_project.host("s2") as host:
        embedder = shared_semantic()
        assert embedder is not None and wait_until(lambda: embedder.ready, 120, 0.1)
        time.sleep(1.0)  # the bank's vectors are read on the worker right after the model loads
        assert FACT in _first_turn_block(host)


_DELIVER = """
import json, sys
from pathlib import Path
from hindsight_hooks.hosts.worker import deliver
problems = deliver(Path(sys.argv[1]), "agent", None)
recall = "hindsight_hooks.plugin.recall.recall_policy" in sys.modules
print(json.dumps({"problems": problems, "numpy": "numpy" in sys.modules, "recall": recall}))
"""


def test_the_detached_delivery_worker_never_loads_the_model(local_project: Project) -> None:
    """It runs no turn (start, flush, shut down, exit), so nothing is loaded for one: a session
    start loads the model only where a first turn can follow (ADR 175)."""
    _cli(local_project, "retain", FACT)
    out = subprocess.run([sys.executable, "-c", _DELIVER, str(local_project.root)], cwd=local_project.root,
                         env=dict(os.environ), capture_output=True, text=True, timeout=120, check=True)  # fmt: skip
    # Neither the model nor the recall module: the session start names its banks without it.
    assert json.loads(out.stdout) == {"problems": [], "numpy": False, "recall": False}
