"""An acknowledgement is shown as the statement it acknowledges (ADR 215).

An agent answers a stated preference or decision by saying it back: "Deploys go to Fly.io through
deploy.yml." — "Noted: Fly.io via deploy.yml." Both are units, both say the words a later question
asks, and both rank near the top, so a block of eight memories held three or four such pairs and
half as many distinct things as it had room for. The reply says nothing its prompt does not; the
prompt is the user's own words, the ones that hold.

So when a shown assistant unit *acknowledges* the user message just before it in its document
(every content word it says is said by that message, but for words of acknowledgement, and that
message asks nothing), the user message takes its place, and is shown once. Deliberately narrow:

- a reply that adds one word of its own ("Will do, with --frozen-lockfile") is a statement of its own;
- a reply to a question ("Should we switch to bun?" — "Yes, switch to bun.") is the answer, and the
  question is no statement;
- a user message that acknowledges the assistant ("ok, 4821") is the user agreeing, which counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from .local_rank import Candidate
from .local_text import porter_stem
from .local_time import content_stems

ASSISTANT_PREFIX = "assistant: "

# Words that acknowledge and say nothing of the subject, in the languages whose function words
# the store knows (local_text's stop words hold "ok", "yes", "got", "will", "do", ... already).
_ACK_TEXT = """
    noted note understood understand sure right yep yeah yup thanks thank perfect great good fine
    sounds agreed agree absolutely course alright cool makes sense remember remembered keep mind
    confirmed acknowledged roger gotcha certainly definitely exactly indeed ll ve re
    verstanden notiert alles klar gut danke genau
    compris noté entendu merci parfait
    entendido anotado claro gracias perfecto vale
    capito notato grazie perfetto
    entendi anotado obrigado certo
    begrepen genoteerd bedankt prima
    понял поняла принято спасибо хорошо отлично
    rozumiem zanotowane dzięki dzieki dobrze świetnie swietnie
    зрозумів зрозуміла дякую добре
"""
ACK_STEMS: frozenset[str] = frozenset(porter_stem(word) for word in _ACK_TEXT.split())


def acknowledges(reply: str, prompt: str) -> bool:
    """Whether ``reply`` says back ``prompt`` and nothing else: each of its content words but words
    of acknowledgement is one ``prompt`` says, and ``prompt`` is no question."""
    if "?" in prompt:
        return False
    return content_stems(reply) - ACK_STEMS <= content_stems(prompt)


def as_their_statements(
    ordered: Iterable[Candidate], statement_of: Callable[[Candidate], Candidate | None]
) -> Iterator[Candidate]:
    """``ordered``, with each assistant unit that acknowledges the user message before it replaced by
    that message (``statement_of``: the unit just before it in its document, if it is a user's and
    passes the recall's filters), which takes its place and score; every unit is shown once."""
    shown: set[int] = set()
    for cand in ordered:
        if cand.content.startswith(ASSISTANT_PREFIX) and cand.seq > 0:
            prompt = statement_of(cand)
            if prompt is not None and acknowledges(cand.content, prompt.content):
                prompt.score = max(prompt.score, cand.score)
                cand = prompt
        if cand.rowid in shown:
            continue
        shown.add(cand.rowid)
        yield cand
