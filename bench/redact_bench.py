"""Redaction benchmark: false positives on ordinary code, throughput, and adversarial inputs.

Figures, each printed with its target and a baseline measured in the same run (never asserted):

1. **False positives** — the share of lines of ordinary code that redaction changes. Corpus: the
   whole standard library plus the installed packages (tests excluded). Target (docs/design.md): at
   most 1 %. Baseline: the naive rule ADR-009 replaced, "redact any value after a secret name",
   run over the same lines.
2. **Throughput** — ms per MB of ordinary code redacted in 1 MB texts (a large retained delta
   or tool result) and line by line (many small messages). Target: 250 ms/MB in 1 MB texts, so
   a 1 MB tool result costs a retain a quarter of a second (the recall query redacts at most
   ~66 KB, ADR-060). Baseline: one pass of the cheapest single rule (the AWS key regex).
3. **Adversarial** — ms per MB on inputs built to repeat what each rule looks for (``-p`` flags,
   ``;Password=``, ``auth``, ``token ``, ``_PWD=``…). Target: linear, i.e. the same order as
   ordinary text (≤ 3,000 ms/MB), never quadratic. Baseline: the throughput figure above.

Usage: ``python bench/redact_bench.py [--max-files N]``
"""

from __future__ import annotations

import argparse
import re
import sysconfig
import time
from pathlib import Path

from hindsight_hooks.governance.redact import redact_text
from hindsight_hooks.governance.secret_lexicon import SECRET_WORD, SEPARATOR

FP_TARGET = 0.01
THROUGHPUT_TARGET_MS_PER_MB = 250.0
ADVERSARIAL_TARGET_MS_PER_MB = 3000.0
_AWS = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}")
_NAIVE = re.compile(SECRET_WORD.pattern + r"[A-Za-z0-9_]*" + SEPARATOR.pattern + r"\S+")

ADVERSARIAL = {
    "-p flags": "a -p " * 200_000,
    "mysql -p runs": "mysql -pa " * 100_000,
    "curl -u runs": "curl -u " * 100_000,
    ";Password= pairs": ";Password=x" * 100_000,
    "=; runs": "=;" * 400_000,
    "auth runs": "auth" * 300_000,
    "token labels": "token " * 200_000,
    "_PWD= names": "MYSQL_PWD=" * 80_000,
    "key- prefixes": "key-" * 250_000,
    "SK + 31 hex": ("SK" + "a" * 31 + " ") * 30_000,
    "s. dots": "s." * 400_000,
    "digits + :AA": ("1" * 15 + ":AA") * 50_000,
}


def _corpus(max_files: int) -> list[str]:
    roots = [Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    lines: list[str] = []
    files = 0
    for root in roots:
        for path in sorted(root.rglob("*.py")):
            if files >= max_files:
                return lines
            if {"test", "tests"} & set(path.parts):
                continue
            try:
                lines.extend(path.read_text(encoding="utf-8", errors="replace").splitlines())
            except OSError:
                continue
            files += 1
    return lines


def _chunks(lines: list[str], size: int) -> list[str]:
    """The lines joined into texts of about ``size`` characters, cut at line ends."""
    chunks: list[str] = []
    current: list[str] = []
    length = 0
    for line in lines:
        current.append(line)
        length += len(line) + 1
        if length >= size:
            chunks.append("\n".join(current))
            current, length = [], 0
    if current:
        chunks.append("\n".join(current))
    return chunks


def _ms_per_mb(seconds: float, chars: int) -> float:
    return seconds * 1000.0 / max(chars / 1e6, 1e-9)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-files", type=int, default=100_000)
    args = parser.parse_args()

    lines = _corpus(args.max_files)
    text = "\n".join(lines)
    print(f"corpus: {len(lines):,} lines, {len(text) / 1e6:.1f} MB of ordinary Python")

    changed = sum(1 for line in lines if redact_text(line) != line)
    naive = sum(1 for line in lines if _NAIVE.search(line))
    print(
        f"1. false positives: {changed / len(lines):.4%} of lines ({changed:,})  target <= {FP_TARGET:.0%}  "
        f"baseline (naive 'any value after a secret name'): {naive / len(lines):.4%} ({naive:,})"
    )

    chunks = _chunks(lines, 1_000_000)
    started = time.perf_counter()
    for chunk in chunks:
        redact_text(chunk)
    whole = _ms_per_mb(time.perf_counter() - started, len(text))
    started = time.perf_counter()
    for line in lines:
        redact_text(line)
    per_line = _ms_per_mb(time.perf_counter() - started, len(text))
    started = time.perf_counter()
    _AWS.sub("[X]", text)
    one_rule = _ms_per_mb(time.perf_counter() - started, len(text))
    print(
        f"2. throughput: {whole:.0f} ms/MB in 1 MB texts, {per_line:.0f} ms/MB line by line  "
        f"target <= {THROUGHPUT_TARGET_MS_PER_MB:.0f} ms/MB (1 MB texts)  "
        f"baseline (one rule, one pass): {one_rule:.1f} ms/MB"
    )

    print(f"3. adversarial inputs (target <= {ADVERSARIAL_TARGET_MS_PER_MB:.0f} ms/MB; baseline: {whole:.0f} ms/MB):")
    for name, sample in ADVERSARIAL.items():
        started = time.perf_counter()
        redact_text(sample)
        figure = _ms_per_mb(time.perf_counter() - started, len(sample))
        print(f"   {name:18s} {figure:7.0f} ms/MB  ({len(sample) / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
