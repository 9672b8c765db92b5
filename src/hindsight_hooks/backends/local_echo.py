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

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from .local_rank import Candidate
from .local_text import STOP_WORDS, fold, fts_tokens, porter_stem
from .local_time import content_stems, stem_body
from .local_windows import ASSISTANT_PREFIX

# An acknowledgement is a sentence or two; a longer reply that says only its prompt back is rare,
# and is shown as itself. Longer ones are not looked up: an agent's replies mostly are.
ACK_MAX_CHARS = 300
# The statement that takes its place is a sentence or a paragraph. A longer user message (a pasted
# log, a spec) is not put where a one-line reply stood: it would fill the block, and its length
# alone makes "every word of the reply is in it" likely. The reply is shown as itself.
STATEMENT_MAX_CHARS = 1000

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
ACK_STEMS: frozenset[str] = frozenset(porter_stem(token) for word in _ACK_TEXT.split() for token in fts_tokens(word))
# Phrases an agent acknowledges with whose words are not acknowledgements on their own ("going",
# "project", "future" are words of a subject elsewhere): "Got it, I'll use pnpm going forward."
_ACK_PHRASES = re.compile(
    r"\b(?:going\s+forward|from\s+now\s+on|(?:in|for)\s+(?:the\s+)?future|make\s+sure\s+(?:to|that)"
    r"|(?:for|in)\s+(?:this|the)\s+(?:project|repo|repository|codebase|workspace)|i\s*['’]\s*ll|i\s+will"
    r"|will\s+do|got\s+it|sounds\s+good|makes\s+sense)\b",
    re.I,
)


def said_of_its_own(reply: str) -> str:
    """``reply`` without the phrases an acknowledgement is made of: what it says of the subject."""
    return _ACK_PHRASES.sub(" ", reply)


def acknowledges(reply: str, prompt: str) -> bool:
    """Whether ``reply`` says back ``prompt`` and nothing else: each of its content words but words
    of acknowledgement is one ``prompt`` says, and ``prompt`` is no question.

    Most replies say a word of their own and are told apart at that word, before either text is
    stemmed whole: a token keeps all of its Porter stem but the last letter, so a stem whose
    beginning ``prompt`` does not hold anywhere is not a stem of ``prompt``."""
    if "?" in prompt:
        return False
    folded = fold(prompt)
    said: set[str] = set()  # the reply's content stems but acknowledgements, as ``content_stems`` reads them
    for token in fts_tokens(stem_body(said_of_its_own(reply))):
        if len(token) > 1 and token not in STOP_WORDS:
            stem = porter_stem(token)
            if stem not in ACK_STEMS:
                if stem[:-1] not in folded:
                    return False
                said.add(stem)
    return said <= content_stems(prompt)


def as_their_statements(
    ordered: Iterable[Candidate],
    acknowledged: Callable[[list[Candidate]], dict[int, Candidate]],
    batch: int,
) -> Iterator[Candidate]:
    """``ordered``, each assistant unit that acknowledges the user message before it replaced by that
    message, which takes its place and score; every unit is shown once.

    ``acknowledged``: of some assistant units, those that acknowledge the user message before them
    (``acknowledges``), each with that message, by the reply's rowid. It is asked for ``batch``
    candidates at a time, so a block costs one look-up, not one per reply."""
    shown: set[int] = set()
    pulled = iter(ordered)
    while part := list(islice(pulled, batch)):
        replies = [
            cand
            for cand in part
            if cand.seq > 0 and len(cand.content) <= ACK_MAX_CHARS and cand.content.startswith(ASSISTANT_PREFIX)
        ]
        statements = acknowledged(replies) if replies else {}
        for cand in part:
            statement = statements.get(cand.rowid)
            if statement is not None:
                statement.score = max(statement.score, cand.score)
                cand = statement
            if cand.rowid in shown:
                continue
            shown.add(cand.rowid)
            yield cand
