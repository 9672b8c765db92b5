"""The memory page in a real headless Chromium, served by the real ``hindsight-hooks ui`` process.

Chromium comes from the system (``scripts/install-browser`` installs Debian's ``chromium``);
Playwright drives it. A missing Chromium is a failure that says how to install it, never a skip.
The store is a real SQLite file; what was forgotten is read back from it, not from the page.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from ..chat.conftest import SCRIPT
from ..plugin.cmdkit import Kit, local_kit_fixture  # noqa: F401  (fixtures)
from .test_server import OTTER, PARSER, seed

CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TRAP = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"


def chromium_path() -> str:
    found = os.environ.get("HH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    assert Path(found).exists(), (
        f"Chromium is missing ({found}): the browser tests need it. Run scripts/install-browser "
        "(Debian: apt-get install chromium), or set HH_CHROMIUM to a Chromium executable."
    )
    return found


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    """Headless Chromium with a new, empty profile folder (no sign-in, no sync, no updates)."""
    executable = chromium_path()
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=executable, headless=True, args=CHROMIUM_FLAGS
        )
        try:
            yield context
        finally:
            context.close()


@pytest.fixture
def ui_process(local_kit: Kit) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``hindsight-hooks ui`` on the kit's project, and the link it printed."""
    assert SCRIPT.exists(), f"console script missing: {SCRIPT}"
    proc = subprocess.Popen(
        [str(SCRIPT), "ui", "--cwd", str(local_kit.root), "--session-file", str(local_kit.session_file())],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ),
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), f"no link printed: {url!r} {proc.poll()}"
        yield proc, url
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)


def listening(port: int) -> list[str]:
    """The local addresses (hex, as the kernel lists them) listening on ``port``, IPv4 and IPv6."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, state = fields[1], fields[3]
            if state == "0A" and int(address.rsplit(":", 1)[1], 16) == port:
                found.append(address.rsplit(":", 1)[0])
    return found


def test_list_search_and_forget_with_confirmation_in_chromium(
    local_kit: Kit, ui_process: tuple[subprocess.Popen[str], str], browser: BrowserContext
) -> None:
    seed(local_kit, PARSER, TRAP, OTTER)
    proc, url = ui_process
    port = int(url.split(":")[2].split("/")[0])
    assert listening(port) == ["0100007F"]  # 127.0.0.1 only: not 0.0.0.0, not IPv6
    page: Page = browser.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))

    # Without the token: refused, and nothing of memory shown.
    refused = page.goto(f"http://127.0.0.1:{port}/")
    assert refused is not None and refused.status == 403
    expect(page.locator("body")).to_contain_text("needs its token")
    expect(page.locator("body")).not_to_contain_text("parser")
    problems.clear()  # the refusal's own "403" console line

    # The printed link signs in and lands on the list without the token in the address bar.
    page.goto(url)
    assert page.url == f"http://127.0.0.1:{port}/"
    expect(page.locator("#total")).to_have_text("3")
    expect(page.locator("tr.memory")).to_have_count(3)
    expect(page.locator("tr.memory").first).to_contain_text("The otter deploy")  # newest first
    expect(page.locator("tr.memory", has_text="<script>document.title='pwned'</script>")).to_have_count(1)
    assert page.title() == "Memories · hindsight-hooks"  # the stored markup was shown, not run

    # Search.
    page.fill("input[name=text]", "otter")
    page.click("button[type=submit]")
    expect(page.locator("tr.memory")).to_have_count(1)
    expect(page.locator("#total")).to_have_text("1")

    # Details, then forget: the first step only asks; Cancel keeps the memory.
    page.click("tr.memory a")
    expect(page.locator("#memory")).to_contain_text(OTTER)
    page.click("#forget")
    expect(page.locator("#confirm")).to_have_text("Yes, forget 1")
    expect(page.locator(".msg")).to_contain_text("would forget 1 memories")
    page.click("#cancel")
    expect(page.locator("#total")).to_have_text("3")
    assert OTTER in local_kit.texts(local_kit.project_bank)

    page.fill("input[name=text]", "otter")
    page.click("button[type=submit]")
    page.click("tr.memory a")
    page.click("#forget")
    page.click("#confirm")
    expect(page.locator(".msg")).to_contain_text("forgot 1 memories")
    assert sorted(local_kit.texts(local_kit.project_bank)) == sorted([PARSER, TRAP])
    page.click("#back")
    expect(page.locator("#total")).to_have_text("2")
    expect(page.locator("body")).not_to_contain_text("otter")

    # The queue and the doctor, as the commands report them.
    page.click("header >> text=Queue")
    expect(page.locator("#queue")).to_contain_text("active: 0")
    page.click("header >> text=Doctor")
    expect(page.locator("#checks tr.check").first).to_be_visible()
    assert problems == []  # no script ran and the Content-Security-Policy blocked nothing of ours

    # A browser without the cookie is refused again.
    browser.clear_cookies()
    again = page.goto(f"http://127.0.0.1:{port}/queue")
    assert again is not None and again.status == 403

    proc.send_signal(signal.SIGINT)
    assert proc.wait(15) == 0
    assert proc.stderr is not None and "hindsight-hooks ui: stopped" in proc.stderr.read()


def test_a_missing_chromium_fails_and_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HH_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(AssertionError, match=r"Chromium is missing .*scripts/install-browser"):
        chromium_path()
