"""A question is shown with the answer it got (ADR 219).

Agents settle things by asking: "We could replace eslint with biome. Shall I switch?" — "no, keep
eslint for now". The question says the subject's words, so a later "what did we decide about
biome?" finds it; the answer says the outcome in words of its own or none at all ("yes, go
ahead"), so it is not found. A block that shows the proposal without its answer tells the model
that biome was proposed and leaves it to guess whether it was taken, which is worse than nothing
when it was not.

So a shown unit that asks (its text ends with a question mark) brings the next message of its
document right after it, when that message is the other side's and short enough to be a reply.
A reply that asks in turn brings its own answer, a few replies deep; every unit is shown once (an
answer found on its own moves up to its question).

The choice often comes later than the next message (ADR 235): "Should we lint with biome or
eslint?" — the agent looks at the repository for a message or two — "ok, go with biome then". When
the next message is no answer, the user's first short message of the next few that names what was
asked, in few words of its own, is the answer; a user message that does not moves the talk on, and
ends the search.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from itertools import islice

from .local_echo import ACK_STEMS
from .local_rank import Candidate
from .local_time import content_stems
from .local_windows import ASSISTANT_PREFIX, USER_PREFIX

# A reply, not a statement of its own: an answer of a few sentences. A longer next message is a
# message in its own right, found (or not) by its own words, and would take much of the block.
ANSWER_MAX_CHARS = 300
# "Can we lint faster?" — "We could use biome. Shall I switch?" — "no, keep eslint": a reply that asks
# is followed by its own answer, a few turns at most (the block's budget ends a longer run anyway).
MAX_HOPS = 3
# An answer that says more words of its own than this (beside words of acknowledgement and words
# the question says) is a statement that its own words find; pairing it with every question that
# ranks would give it places it did not earn. Measured in ADR 219: with no such bar the synthetic
# bench's weak question hits ("How often should the event bus job fire?") brought their long answers
# and pushed evidence out of the top ten (lexical multi-fact questions 89.1 → 76.6).
ANSWER_MAX_OWN_WORDS = 2
# How many units after the next one the user's later choice is looked for: the agent's look at the
# repository (its tool calls and their output are units of their own) and its report, or the user's
# "let me check" and the agent's reply. Only the first user message among them can be the choice.
LATER_MAX_GAP = 8
# A question ends with its question mark (or the full-width one), before any closing quotes,
# brackets, emphasis marks or emoji.
_ASKS = re.compile(r"[?？][\s\"'”’)\]*_~\U0001F300-\U0001FAFF\u2600-\u27BF]*\Z")


def asks(content: str) -> bool:
    """Whether a user's or the agent's unit ends by asking something."""
    return content.startswith((USER_PREFIX, ASSISTANT_PREFIX)) and _ASKS.search(content) is not None


def other_side(content: str) -> str:
    """The role prefix of the side that answers ``content`` ('' for a unit of neither side)."""
    if content.startswith(USER_PREFIX):
        return ASSISTANT_PREFIX
    if content.startswith(ASSISTANT_PREFIX):
        return USER_PREFIX
    return ""


def answers(question: str, reply: str) -> bool:
    """Whether ``reply``, the message after ``question`` in its document, is its answer to pair with
    it: ``question`` asks, ``reply`` is the other side's, at most ``ANSWER_MAX_CHARS`` long, and says
    at most ``ANSWER_MAX_OWN_WORDS`` content words that are neither the question's nor words of
    acknowledgement ("yes, go ahead", "no, keep eslint for now", "Dara.")."""
    side = other_side(question)
    if not side or not reply.startswith(side) or len(reply) - len(side) > ANSWER_MAX_CHARS or not asks(question):
        return False
    return len(content_stems(reply) - content_stems(question) - ACK_STEMS) <= ANSWER_MAX_OWN_WORDS


def decides_later(question: str, reply: str) -> bool:
    """Whether ``reply``, the user's message some messages after ``question`` (not the next one), is
    the choice it asked for (ADR 235): ``question`` asks, ``reply`` asks nothing, is at most
    ``ANSWER_MAX_CHARS`` long, names a content word of ``question`` ("biome") and says at most
    ``ANSWER_MAX_OWN_WORDS`` others but words of acknowledgement ("ok, go with biome then")."""
    if not reply.startswith(USER_PREFIX) or len(reply) - len(USER_PREFIX) > ANSWER_MAX_CHARS:
        return False
    if asks(reply) or not asks(question):
        return False
    said, asked = content_stems(reply), content_stems(question)
    return bool(said & asked) and len(said - asked - ACK_STEMS) <= ANSWER_MAX_OWN_WORDS


def answer_among(question: str, following: list[str | None]) -> int | None:
    """The place in ``following`` (the messages after ``question`` in its document, in order; None
    for one not read: too long, forgotten, absent) of its answer: the next message when it
    ``answers``, or else the first later one that ``decides_later``, unless a user message that
    does not comes before it."""
    if following and following[0] is not None and answers(question, following[0]):
        return 0
    for place, reply in enumerate(following[1 : LATER_MAX_GAP + 1], start=1):
        if reply is None or not reply.startswith(USER_PREFIX):
            continue
        if decides_later(question, reply):
            return place
        break
    return None


def with_their_answers(
    ordered: Iterable[Candidate],
    answered_by: Callable[[list[Candidate]], dict[int, Candidate]],
    batch: int,
) -> Iterator[Candidate]:
    """``ordered``, each unit that asks followed by the answer it got, and that answer's answer when
    it asks in turn (up to ``MAX_HOPS`` replies); every unit is shown once.

    ``answered_by``: of some units that ask, those the next message of their document ``answers``, each
    with that message, by the question's rowid.
    It is asked for ``batch`` candidates at a time and once more per reply that asks, so a block
    costs one look-up unless a question was answered by a question."""
    shown: set[int] = set()
    pulled = iter(ordered)
    while part := list(islice(pulled, batch)):
        answered: dict[int, Candidate] = {}
        questions = [cand for cand in part if cand.seq >= 0 and cand.rowid not in shown and asks(cand.content)]
        for _ in range(MAX_HOPS):
            if not questions:
                break
            found = answered_by(questions)
            answered.update(found)
            questions = [reply for reply in found.values() if asks(reply.content) and reply.rowid not in answered]
        for cand in part:
            if cand.rowid in shown:
                continue
            shown.add(cand.rowid)
            yield cand
            answer = answered.get(cand.rowid)
            while answer is not None and answer.rowid not in shown:
                shown.add(answer.rowid)
                answer.score = cand.score
                yield answer
                answer = answered.get(answer.rowid)
