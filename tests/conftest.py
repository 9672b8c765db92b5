"""Suite-wide fixtures. The real Hindsight server is started only when a test asks for it.

``hindsight_url`` is session-scoped: ``HINDSIGHT_TEST_URL`` when set (``scripts/test`` exports
it), else ``scripts/hindsight-test-server start`` (idempotent; the URL is its last stdout
line). A server that cannot be started FAILS the requesting tests: integration tests are
never skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# The user's days are this machine's (ADR 212): the suite reads every date on a UTC clock, so
# it gives the same answers wherever it runs; tests of other zones set ``TZ`` themselves.
os.environ["TZ"] = "UTC"
time.tzset()

ROOT = Path(__file__).resolve().parent.parent
SERVER_SCRIPT = ROOT / "scripts" / "hindsight-test-server"
START_TIMEOUT_S = 600

# Hypothesis profiles. CI must never find a new random counterexample (it would cost a whole
# submission), so under ``CI=true`` every property test runs derandomized: the same examples
# on every run. Random exploration is ``scripts/fuzz``, run by developers before they stop; it
# sets ``HH_FUZZ_SCALE`` to multiply each test's own ``max_examples`` (see
# ``pytest_collection_modifyitems``) and picks a fresh seed per run. Counterexamples it finds
# are pinned as explicit cases in the tests.
settings.register_profile("ci", derandomize=True, database=None, deadline=None, print_blob=True)
settings.register_profile("dev", deadline=None, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI", "").lower() in {"1", "true", "yes"} else "dev")
FUZZ_SCALE = int(os.environ.get("HH_FUZZ_SCALE", "0") or 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``HH_FUZZ_SCALE=N``, run every hypothesis test with N times its own example count."""
    if FUZZ_SCALE <= 1:
        return
    seen: set[int] = set()
    for item in items:
        fn = getattr(item, "obj", None)
        current = getattr(fn, "_hypothesis_internal_use_settings", None)
        if isinstance(current, settings) and id(fn) not in seen:
            seen.add(id(fn))
            scaled = settings(current, max_examples=current.max_examples * FUZZ_SCALE, derandomize=False)
            fn._hypothesis_internal_use_settings = scaled  # type: ignore[union-attr]
        case = getattr(item, "cls", None)
        if case is not None and isinstance(getattr(case, "settings", None), settings) and id(case) not in seen:
            seen.add(id(case))
            case.settings = settings(case.settings, max_examples=case.settings.max_examples * FUZZ_SCALE)


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _start_server() -> str:
    if not SERVER_SCRIPT.exists():
        pytest.fail(f"{SERVER_SCRIPT} is missing: cannot start the Hindsight test server", pytrace=False)
    if os.access(SERVER_SCRIPT, os.X_OK):
        cmd = [str(SERVER_SCRIPT), "start"]
    else:
        cmd = [shutil.which("python3") or sys.executable, str(SERVER_SCRIPT), "start"]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=START_TIMEOUT_S, cwd=ROOT, check=False)
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        pytest.fail(f"hindsight-test-server start timed out after {START_TIMEOUT_S}s:\n{_tail(err)}", pytrace=False)
    lines = [ln.strip() for ln in proc.stdout.splitlines() if ln.strip()]
    if proc.returncode != 0 or not lines or not lines[-1].startswith("http"):
        out = f"{_tail(proc.stderr)}\n{_tail(proc.stdout, 5)}"
        pytest.fail(f"hindsight-test-server start failed (exit {proc.returncode}):\n{out}", pytrace=False)
    return lines[-1].rstrip("/")


@pytest.fixture(scope="session")
def hindsight_url() -> str:
    """Base URL of a real Hindsight 1.1.0 server (mock LLM, fake embeddings) on loopback."""
    url = os.environ.get("HINDSIGHT_TEST_URL", "").strip()
    return url.rstrip("/") if url else _start_server()


@pytest.fixture(scope="session")
def hindsight_backend(hindsight_url: str) -> Iterator[Any]:
    """One ``HindsightBackend`` for the session, like the plugin's one-per-process client."""
    from hindsight_hooks.backends.hindsight import HindsightBackend

    backend = HindsightBackend(hindsight_url, timeout_ms=30000)
    try:
        backend.health(timeout_s=10)
    except Exception as exc:  # the URL came from the env or the script, but nothing answers
        pytest.fail(f"Hindsight test server at {hindsight_url} is not healthy: {exc}", pytrace=False)
    yield backend
    backend.close()


def unique_bank_id(prefix: str = "hh-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_bank(hindsight_backend: Any) -> Iterator[Callable[..., str]]:
    """Factory for a fresh bank per call, deleted after the test.

    Defaults to ``retain_extraction_mode="verbatim"`` and observations off: with the mock LLM,
    ``concise`` stores prompt boilerplate as facts and consolidation invents observations,
    so neither would let a test assert on what it stored (docs/design.md, ADR 010).
    """
    from hindsight_hooks.backends.base import BankSpec

    created: list[str] = []

    def make(prefix: str = "hh-test", **spec: Any) -> str:
        spec.setdefault("retain_extraction_mode", "verbatim")
        spec.setdefault("enable_observations", False)
        bank_id = unique_bank_id(prefix)
        assert hindsight_backend.ensure_bank(bank_id, BankSpec(**spec), timeout_s=30) is True
        created.append(bank_id)
        return bank_id

    yield make
    for bank_id in created:
        try:
            hindsight_backend.delete_bank(bank_id, timeout_s=30)
        except Exception:
            pass  # best effort: a leftover uniquely named bank harms no other test


@pytest.fixture
def user_zone() -> Iterator[Callable[[str], None]]:
    """Set this machine's zone for one test (a POSIX ``TZ`` such as ``EST5``: no tz database
    needed); the suite's UTC clock is back after it (ADR 212)."""

    def set_zone(tz: str) -> None:
        os.environ["TZ"] = tz
        time.tzset()

    try:
        yield set_zone
    finally:
        set_zone("UTC")
