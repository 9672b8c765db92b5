"""Recall by meaning through the plugin, with the ``[semantic]`` extra installed (ADR 116, 117).

A real ``Host`` loads the plugin from its entry point on the embedded store; nothing is
configured for semantic recall: installing the extra is enough. Vectors come from the store's
background worker, so the tests wait (bounded) until the memory is found by meaning.
"""

from __future__ import annotations

from typing import Any

from hindsight_hooks.hooks import user_message

from .hostkit import Project, injected_block, isolated, local_project, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

FACT = "we run Postgres 16"


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
