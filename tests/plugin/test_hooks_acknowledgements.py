"""An agent's acknowledgement takes no place of its own in the block (ADR 215).

Through the ``Host`` harness on the embedded store (a real SQLite file): a year of sessions in which
the user states things and the agent says each one back. Before, every statement came with its
"Noted: ..." twin, and the block of eight held half as many things as it had room for.
"""

from __future__ import annotations

import re

from .hostkit import Project, assistant, block_text, isolated, local_project, user, wait_until

__all__ = ["isolated", "local_project"]  # fixtures, re-exported for pytest

SAID = (
    ("Deploys go to Fly.io through the GitHub Actions workflow deploy.yml.", "Noted: Fly.io via deploy.yml."),
    ("Reminder: the package manager here is pnpm, not npm.", "Right, pnpm not npm."),
    ("The database is Postgres 16 on Neon.", "Okay, Postgres 16 on Neon."),
    ("Again, pnpm is our package manager, use pnpm install.", "Understood, pnpm install."),
    ("Our staging deploy needs the FLY_STAGING app name set.", "Noted the FLY_STAGING app name."),
    ("Please always use pnpm, never npm or yarn, in this repo.", "Will do: pnpm only."),
    ("pnpm is the package manager we use for the frontend workspace.", "Yes, pnpm for the workspace."),
    ("Preview deploys go to a fly app per pull request.", "Preview apps per PR, with --ha=false to save costs."),
)


def test_the_block_holds_the_users_statements_not_their_acknowledgements(local_project: Project) -> None:
    local_project.configure({"local": {"semantic": "off"}}, replace=False)
    for n, (statement, reply) in enumerate(SAID):
        with local_project.host(f"session-{n}") as host:
            host.agent_end([user(statement, 10 * n), assistant(reply, 10 * n)])
    assert wait_until(lambda: local_project.unit_count("--ha=false") == 1)
    with local_project.host("today") as host:
        block = block_text(host.context([user("How do we deploy, and which package manager do we use?", 999)]))
    items = re.findall(r"^\d+\. (user|assistant): (.*) \([^()]*\)$", block, re.M)  # the date left off
    assert ("user", SAID[0][0]) in items
    shown = " ".join(text for _, text in items)
    assert "FLY_STAGING" in shown and "pnpm" in shown
    # every reply that only said its prompt back gave its place to the prompt ...
    assert not [text for role, text in items if role == "assistant" and "--ha=false" not in text]
    # ... and the one that says something of its own is still there
    assert any("--ha=false" in text for role, text in items if role == "assistant")
