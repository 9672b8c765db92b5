"""An import killed with SIGKILL after its first delivery resumes where it stopped (docs/import.md "Checkpoint").

The import runs in a real child process whose UI stalls on the first progress notice (which
the runner sends right after recording that delivery); the parent kills it with SIGKILL at
that point — a deterministic cut between two deliveries — then imports again.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from .conftest import Project, install

CHILD = textwrap.dedent(
    """
    import sys, time
    from hindsight_hooks.hooks import Host, RecordingUI
    from hindsight_hooks.plugin.core import HindsightPlugin

    class StallingUI(RecordingUI):
        def notify(self, text, level="info"):
            super().notify(text, level)
            if text.startswith("import: 1/"):
                print("DELIVERED-ONE", flush=True)
                time.sleep(300)

    root, session = sys.argv[1], sys.argv[2]
    ui = StallingUI(answers=["Import"])
    host = Host(root, session_file=session, plugins=[HindsightPlugin()], ui=ui, host_name="pi")
    host.start()
    print("RESULT", host.command("/hindsight:import").text, flush=True)
    """
)


def test_killed_import_resumes_without_duplicates(project: Project, open_backend: Callable[[], Any]) -> None:
    project.config("[import]\nturns_per_document = 1\n")
    session = install("decisions.jsonl", project.sessions, cwd=project.root)
    script = project.tmp / "child_import.py"
    script.write_text(CHILD)
    proc = subprocess.Popen(
        [sys.executable, str(script), str(project.root), str(session)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        seen = []
        for line in proc.stdout:
            seen.append(line)
            if line.startswith("DELIVERED-ONE"):
                break
        assert seen and seen[-1].startswith("DELIVERED-ONE"), (seen, proc.stderr.read() if proc.stderr else "")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
        if proc.stdout:
            proc.stdout.close()
        if proc.stderr:
            proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL

    # What the killed run left on disk: one delivered, two queued, nothing lost or doubled.
    checkpoint = json.loads(project.checkpoint.read_text())
    statuses = sorted(d["status"] for d in checkpoint["documents"].values())
    assert statuses == ["completed", "queued", "queued"]
    manifest = json.loads(project.manifest.read_text())
    assert len(manifest["imports"]) == 1
    jobs = project.queued_jobs()
    assert len(jobs) == 2 and all(j["source"] == "import" for j in jobs)
    queued_docs = {j["items"][0]["document_id"] for j in jobs}
    completed = next(k for k, d in checkpoint["documents"].items() if d["status"] == "completed")
    assert completed not in queued_docs
    bank = jobs[0]["bank_id"]
    assert {u.document_id for u in open_backend().list_units(bank, 1000, 0)} == {completed}

    # Resume: the delivered one is skipped, the queued ones are delivered, none is queued twice.
    host, ui = project.host(session, answers=["Import"])
    with host:
        result = host.command("/hindsight:import")
    assert len(ui.questions) == 1
    assert result.level == "info", result.text
    assert result.data is not None
    assert result.data["counts"] == {"completed": 2, "queued": 0, "skipped": 1, "failed": 0}
    skipped = [d for d in result.data["documents"] if d["status"] == "skipped"]
    assert [(d["document_id"], d["skip_reason"]) for d in skipped] == [(completed, "already-imported")]
    assert project.queued_jobs() == []
    units = open_backend().list_units(bank, 1000, 0)
    assert {u.document_id for u in units} == {completed, *queued_docs}
    assert len(json.loads(project.manifest.read_text())["imports"]) == 3
    final = json.loads(project.checkpoint.read_text())["documents"]
    assert {k: d["status"] for k, d in final.items()} == {
        completed: "skipped",
        **{doc: "completed" for doc in queued_docs},
    }
    assert final[completed]["skip_reason"] == "already-imported"

    # And a clean second run changes nothing.
    before = sorted((u.document_id, u.text) for u in units)
    host, _ = project.host(session)
    with host:
        again = host.command("/hindsight:import --yes")
    assert "nothing new to import" in again.text
    assert sorted((u.document_id, u.text) for u in open_backend().list_units(bank, 1000, 0)) == before
