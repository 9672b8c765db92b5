"""The Pi extension type-checks against Pi 0.73.1's published extension API (``tsc --noEmit``).

Pi loads ``extensions/pi/*.ts`` directly (jiti, no build), so a type error would only show when
a person's Pi ran it. This test runs the npm registry's TypeScript (pinned, from the test cache
that ``scripts/install-hosts`` fills) over the extension with ``extensions/pi/tsconfig.json``,
resolving ``@mariozechner/pi-coding-agent``, ``typebox`` and ``@types/node`` from the installed
Pi, exactly the declarations Pi publishes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "extensions" / "pi"


def cached_bin(name: str) -> Path:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "install-hosts"), "--bin", name],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip().splitlines()[-1])


def type_check(tmp: Path, include: list[str], *extra: str) -> subprocess.CompletedProcess[str]:
    """``tsc --noEmit`` with the extension's tsconfig, Pi's packages resolved from the cache."""
    tsc = cached_bin("typescript")
    modules = cached_bin("pi").parent.parent  # <pi home>/node_modules
    assert (modules / "@mariozechner" / "pi-coding-agent" / "dist" / "index.d.ts").is_file()
    config = {
        "extends": str(EXTENSION / "tsconfig.json"),
        "compilerOptions": {
            "baseUrl": str(modules),
            "paths": {"*": [f"{modules}/*", f"{modules}/@types/*"]},
            "typeRoots": [str(modules / "@types")],
        },
        "include": include,
    }
    (tmp / "tsconfig.json").write_text(json.dumps(config), encoding="utf-8")
    command = [str(tsc), "--noEmit", "-p", str(tmp / "tsconfig.json"), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)


def test_the_extension_type_checks_against_pis_published_types(tmp_path: Path) -> None:
    done = type_check(tmp_path, [str(EXTENSION / "*.ts")], "--listFiles")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    checked = done.stdout.splitlines()
    assert any(line.endswith("pi-coding-agent/dist/core/extensions/types.d.ts") for line in checked)
    for name in ("index.ts", "bridge.ts", "session.ts", "settings.ts"):
        assert str(EXTENSION / name) in checked


def test_a_type_error_in_the_extension_is_caught(tmp_path: Path) -> None:
    """The check is real: the same set-up rejects a handler that misreads Pi's event type."""
    bad = tmp_path / "bad.ts"
    bad.write_text(
        'import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";\n'
        "export default function (pi: ExtensionAPI): void {\n"
        '  pi.on("context", async (event) => { const n: number = event.messages; return undefined; });\n'
        "}\n",
        encoding="utf-8",
    )
    done = type_check(tmp_path, [str(bad)])
    assert done.returncode != 0
    assert "TS2322" in done.stdout
