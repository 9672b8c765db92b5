"""A question about what was decided is answered by the decisions (ADR 220).

Through the ``Host`` harness on the embedded store (a real SQLite file): last week's sessions hold
two decisions among routine requests, and one decision is older. Before, "what did we decide last
week?" showed the week's units newest first, the Monday decision behind the routine.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest


def _last_week(weekday: int, hour: int = 10) -> int:
    """Milliseconds at ``hour`` on a day of last calendar week (0 = Monday), on this machine's clock."""
    today = datetime.now().replace(hour=hour, minute=0, second=0, microsecond=0)
    monday = today - timedelta(days=today.weekday() + 7)
    return int((monday + timedelta(days=weekday)).timestamp() * 1000)


SESSIONS = (
    (_last_week(1), ("Let's go with Postgres for the orders service, not MySQL.", "Noted: Postgres for orders.")),
    (_last_week(2), ("Rename the helper to parse_header.", "Renamed, three call sites updated.")),
    (_last_week(2, 15), ("We decided the API will be versioned in the URL path, /v2/.", "Got it, /v2/ in the path.")),
    (_last_week(3), ("Bump the version in the package metadata.", "Bumped to 2.4.0.")),
    (_last_week(3, 16), ("Fix the flaky login test please.", "Replaced the fixed sleep with a poll.")),
    (_last_week(-14), ("We agreed to use pnpm in the frontend.", "OK.")),
)


def test_last_weeks_decisions_open_the_block(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    for n, (when, (prompt, reply)) in enumerate(SESSIONS):
        with local_project.host(f"session-{n}") as host:
            host.agent_end([user(prompt, 2 * n, timestamp=when), assistant(reply, 2 * n + 1, timestamp=when + 1000)])
    assert wait_until(lambda: local_project.unit_count("pnpm") == 1)
    with local_project.host("today") as host:
        block = block_text(host.context([user("what did we decide last week?", 99)]))
    items = re.findall(r"^\d+\. (?:user|assistant): (.*) \([^()]*\)$", block, re.M)  # the date left off
    assert set(items[:2]) == {SESSIONS[0][1][0], SESSIONS[2][1][0]}, block
    assert SESSIONS[5][1][0] not in items  # agreed three weeks ago, not last week
