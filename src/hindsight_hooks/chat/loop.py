"""``hindsight-hooks chat``: the reference interactive host.

A small REPL that drives any ``agent_hooks`` plugin exactly the way a real agent host does:
``session_start`` once, ``context`` before every model call, ``agent_end`` after every run,
``shutdown`` on the way out — and slash commands and tab completion at the prompt. It exists
so the plugin can be tried (and tested end to end in a real terminal) without installing Pi.

Threads: agent runs and slash commands execute in a worker thread while the main thread
waits, because only the main thread receives SIGINT. Ctrl-C there aborts the work
(``host.abort()`` sets ``ctx.signal``; the model's reply is abandoned) and the prompt comes
back. Ctrl-C or Ctrl-D at an empty prompt, ``/exit`` and ``/quit`` end the chat; ``shutdown``
runs on every exit path.
"""

from __future__ import annotations

import functools
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from ..hooks import CommandResult, Host, Message, message_text
from .agent import DEFAULT_MAX_TOOL_ROUNDS, AgentRunner, RunOutcome, tool_calls_of
from .completion import install as install_completion
from .models import Model
from .session_file import SessionFile
from .terminal_ui import TerminalUI, format_result

EXIT_WORDS = ("/exit", "/quit")
_PREVIEW = 200


def _preview(text: str, limit: int = _PREVIEW) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class ChatLoop:
    """The REPL. ``read_line`` defaults to ``input`` (readline-enabled on a terminal)."""

    def __init__(
        self,
        host: Host,
        model: Model,
        ui: TerminalUI,
        session: SessionFile | None,
        transcript: list[Message] | None = None,
        *,
        out: TextIO | None = None,
        read_line: Callable[[str], str] | None = None,
        max_tool_rounds: int = DEFAULT_MAX_TOOL_ROUNDS,
    ) -> None:
        self.host = host
        self.model = model
        self.ui = ui
        self.session = session
        self.transcript: list[Message] = transcript if transcript is not None else []
        self._out = out
        self._read_line = read_line or input
        self.runner = AgentRunner(
            host, model, self.transcript, on_message=self._on_message, max_tool_rounds=max_tool_rounds
        )
        self._cancel = threading.Event()
        ui.cancel = self._cancel

    @property
    def out(self) -> TextIO:
        return self._out if self._out is not None else sys.stdout

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    # -- prompt -------------------------------------------------------------------------------
    def prompt(self) -> str:
        status = self.ui.status_text()
        return f"[{status}] you> " if status else "you> "

    def _read(self) -> str | None:
        """The next line; ``None`` means "end the chat" (EOF, or Ctrl-C on an empty line)."""
        pending: list[str] = []
        previous = _capture_line_on_sigint(pending)
        try:
            return self._read_line(self.prompt())
        except EOFError:
            self.say()
            return None
        except KeyboardInterrupt:
            self.say("^C")
            # Like a shell: Ctrl-C discards a half-typed line; on an empty line it ends the chat.
            return "" if any(p.strip() for p in pending) else None
        finally:
            _restore_sigint(previous)

    # -- main ---------------------------------------------------------------------------------
    def run(self) -> int:
        try:
            self._in_worker(self.host.start)
            install_completion(self.host)
            where = f" (session file {self.session.path})" if self.session is not None else ""
            self.say(f"hindsight-hooks chat with model {self.model.name}{where}")
            self.say("type /help for commands, /exit or Ctrl-D to quit")
            while True:
                line = self._read()
                if line is None:
                    break
                try:
                    if not self.handle(line):
                        break
                except KeyboardInterrupt:  # Ctrl-C in the instant between the prompt and the worker
                    self.say("^C")
        finally:
            self._shutdown()
        return 0

    def handle(self, line: str) -> bool:
        """Act on one input line; ``False`` ends the chat."""
        text = line.strip()
        if not text:
            return True
        if text in EXIT_WORDS:
            return False
        if text == "/help":
            self.say(self.help_text())
        elif text.startswith("/"):
            result = self._in_worker(functools.partial(self.host.command, text))
            if isinstance(result, CommandResult):
                self.say(format_result(result))
        else:
            outcome = self._in_worker(functools.partial(self.runner.run, line, self._cancel))
            if isinstance(outcome, RunOutcome) and outcome.hit_round_limit:
                self.say(f"(stopped after {self.runner.max_tool_rounds} tool rounds)")
        return True

    def _shutdown(self) -> None:
        try:
            self._in_worker(self.host.shutdown)  # bounded flush; Ctrl-C here cannot leave a traceback
        finally:
            try:
                self.model.close()
            finally:
                if self.session is not None:
                    self.session.close()
                self.say("bye")

    def help_text(self) -> str:
        lines = ["commands:"]
        for name, cmd in sorted(self.host.commands().items()):
            lines.append(f"  /{name}  {cmd.description}")
        lines.append("  /help  this list")
        lines.append("  /exit, /quit  end the chat (Ctrl-D too)")
        return "\n".join(lines)

    # -- work in a worker thread ----------------------------------------------------------------
    def _in_worker(self, work: Callable[[], Any]) -> Any:
        """Run ``work`` in a thread; Ctrl-C aborts it and waits for it to wind down."""
        self._cancel.clear()
        box: dict[str, Any] = {}
        done = threading.Event()

        def target() -> None:
            try:
                box["value"] = work()
            except Exception as exc:  # a host bug must not kill the chat
                box["error"] = exc
            finally:
                done.set()

        threading.Thread(target=target, name="chat-run", daemon=True).start()
        aborting = False
        # Poll with sleep, not Thread.join: on CPython 3.11 a join interrupted by Ctrl-C can
        # mark a still-running thread as finished (bpo-45274 family), and a sleep is always
        # safe to interrupt.
        while not done.is_set():
            try:
                time.sleep(0.05)
            except KeyboardInterrupt:
                if not aborting:
                    aborting = True
                    self._cancel.set()
                    self.host.abort()
                    self.say("^C (aborting)")
                else:
                    self.say("^C (still winding down the aborted run)")
        if "error" in box:
            self.say(f"error: {type(box['error']).__name__}")
        return box.get("value")

    # -- transcript -----------------------------------------------------------------------------
    def _on_message(self, msg: Message) -> None:
        """Persist every transcript message and show what the person did not type."""
        if self.session is not None:
            try:
                self.session.append(msg)
            except Exception as exc:
                self.say(f"warning: could not write the session file: {type(exc).__name__}")
        role = msg.get("role")
        if role == "assistant":
            stop = msg.get("stopReason")
            text = message_text(msg)
            if text:
                self.say(f"{msg.get('model') or 'assistant'}> {text}")
            for call in tool_calls_of(msg):
                self.say(f"  -> tool {call.get('name')} {_preview(str(call.get('arguments')))}")
            if stop == "error":
                self.say(f"error: {msg.get('errorMessage') or 'model call failed'}")
            elif stop == "aborted":
                self.say("(aborted)")
        elif role == "toolResult":
            mark = "error" if msg.get("isError") else "ok"
            self.say(f"  <- {msg.get('toolName')} [{mark}] {_preview(message_text(msg))}")


def _capture_line_on_sigint(sink: list[str]) -> Any:
    """While the prompt waits, note what was typed when Ctrl-C arrives.

    readline clears its buffer after the signal handler has run, so the handler is the last
    moment the half-typed line can be seen. Returns the handler to restore (``None`` when
    this is not the main thread, where handlers cannot be set).
    """
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum: int, frame: Any) -> None:
        try:
            import readline

            sink.append(readline.get_line_buffer())
        except Exception:
            pass
        raise KeyboardInterrupt

    try:
        return signal.signal(signal.SIGINT, handler)
    except (ValueError, OSError):
        return None


def _restore_sigint(previous: Any) -> None:
    if previous is not None:
        try:
            signal.signal(signal.SIGINT, previous)
        except (ValueError, OSError):
            pass
