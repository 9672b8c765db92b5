"""A question about what was done yesterday is answered session by session (ADR 221).

Through the ``Host`` harness on the embedded store (a real SQLite file): three sessions yesterday,
each a request and a dozen messages of work. Before, "what did we do yesterday?" showed the last
session's last messages only.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

TASKS = ("Migrate the billing cron to the new scheduler.", "Fix the flaky login test on CI.",
         "Write the release notes for 2.4.")  # fmt: skip


def _yesterday(hour: int) -> int:
    """Milliseconds at ``hour`` yesterday, on this machine's clock."""
    day = datetime.now().replace(hour=hour, minute=0, second=0, microsecond=0) - timedelta(days=1)
    return int(day.timestamp() * 1000)


def test_yesterdays_sessions_each_give_their_request(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    for n, task in enumerate(TASKS):
        start = _yesterday(9 + 3 * n)
        talk = [user(task, 100 * n, timestamp=start)]
        for k in range(6):
            talk += [
                assistant(
                    f"Step {k}: edited module{k}.py, checks pass.", 100 * n + 2 * k + 1, timestamp=start + 60_000 * k
                ),
                user(f"next {k}", 100 * n + 2 * k + 2, timestamp=start + 60_000 * k + 30_000),
            ]
        with local_project.host(f"session-{n}") as host:
            host.agent_end(talk)
    assert wait_until(lambda: local_project.unit_count("release notes") == 1)
    with local_project.host("today") as host:
        block = block_text(host.context([user("what did we do yesterday?", 999)]))
    items = re.findall(r"^\d+\. (?:user|assistant): (.*) \([^()]*\)$", block, re.M)  # the date left off
    assert items[:3] == [TASKS[2], TASKS[1], TASKS[0]], block
