"""Ending a child process the tests talk to over stdin/stdout (the bridge, Pi in RPC mode).

Both are told to finish the way their real parent ends them: stdin closes. The exit code is
what the tests check; the file their stderr went to is closed either way.
"""

from __future__ import annotations

import subprocess
from typing import IO, Any


def close_stdin_and_wait(proc: subprocess.Popen[Any], stderr: IO[bytes], timeout: float) -> int:
    """Close the child's stdin (a child that already exited is fine) and return its exit code."""
    if proc.stdin is not None and not proc.stdin.closed:
        try:
            proc.stdin.close()
        except BrokenPipeError:
            pass
    try:
        return proc.wait(timeout)
    finally:
        stderr.close()
