"""A word of the workday no memory says is searched by the other words people use for it (ADR 233).

"When is the standup?" — the memory says "Daily sync is at 9:30". "Where are the credentials?" —
"The API token lives in the vault". "Who is my manager?" — "Dana is my boss". People name the
same thing in several ways from one day to the next, and the index matches words; the
``[semantic]`` extra's static vectors put such pairs at cosines of 0.1–0.25, under its floor.

As the short-word rule does (``local_abbrev``, ADR 197), this touches only a query word that no unit
of the bank says: a word the bank says is searched as it is, so a prompt whose words are all known
searches exactly as before. Such a word, when the table below lists it, is searched instead by
those of its other words that the bank says (at most :data:`MAX_FORMS`, in the table's order),
and a unit that says one of them counts as saying the word. The table is short on purpose: words
of a developer's working day whose other words mean the same thing there ("ship" a release, not a
boat); words that name several things ("issue", "build", "run") are not keys.
"""

from __future__ import annotations

from collections.abc import Callable

from .local_abbrev import said_forms_of_unsaid

MAX_FORMS = 3

# word -> the other words people use for it (a form of several words is searched as a phrase)
SYNONYMS: dict[str, tuple[str, ...]] = {
    "standup": ("stand up", "daily", "scrum", "sync"),
    "standups": ("stand ups", "dailies", "scrum", "syncs"),
    "meeting": ("sync", "standup"),
    "meetings": ("syncs", "standups"),
    "deadline": ("due date", "due"),
    "deadlines": ("due dates", "due"),
    "bug": ("defect", "regression", "glitch"),
    "bugs": ("defects", "regressions", "glitches"),
    "defect": ("bug",),
    "defects": ("bugs",),
    "slow": ("latency", "sluggish", "laggy", "lag"),
    "slowness": ("latency", "sluggish", "lag"),
    "latency": ("slow", "lag", "response time"),
    "credentials": ("password", "token", "secret", "api key", "login"),
    "password": ("passphrase", "credentials", "passcode"),
    "passwords": ("passphrases", "credentials"),
    "boss": ("manager", "supervisor", "lead"),
    "manager": ("boss", "supervisor"),
    "supervisor": ("boss", "manager"),
    "laptop": ("machine", "computer", "macbook", "workstation"),
    "computer": ("laptop", "machine", "workstation"),
    "workstation": ("laptop", "machine", "computer"),
    "ship": ("release", "launch"),
    "shipped": ("released", "launched"),
    "launch": ("release", "ship"),
    "launched": ("released", "shipped"),
    "vacation": ("holiday", "pto", "time off", "leave"),
    "vacations": ("holidays", "pto", "time off"),
    "holiday": ("vacation", "pto", "time off"),
    "holidays": ("vacation", "pto", "time off"),
    "pto": ("vacation", "holiday", "time off"),
    "customer": ("client",),
    "customers": ("clients",),
    "client": ("customer",),
    "clients": ("customers",),
    "price": ("cost", "pricing"),
    "prices": ("costs", "pricing"),
    "pricing": ("price", "cost"),
    "cost": ("price", "pricing"),
    "costs": ("prices", "pricing"),
    "salary": ("pay", "compensation", "wage"),
    "wifi": ("wi fi", "wireless", "network"),
    "outage": ("downtime", "incident"),
    "outages": ("downtime", "incidents"),
    "downtime": ("outage", "incident"),
    "backup": ("snapshot",),
    "backups": ("snapshots",),
    "snapshot": ("backup",),
    "snapshots": ("backups",),
    "settings": ("configuration", "config", "preferences", "options"),
    "preferences": ("settings",),
    "delete": ("remove",),
    "deleted": ("removed",),
    "remove": ("delete",),
    "removed": ("deleted",),
    "exception": ("error", "traceback", "stack trace"),
    "exceptions": ("errors", "tracebacks"),
    "traceback": ("stack trace", "exception"),
    "crash": ("segfault", "panic"),
    "goal": ("objective", "aim"),
    "goals": ("objectives", "aims"),
    "objective": ("goal",),
    "roadmap": ("plan", "milestones"),
    "todo": ("to do", "task", "tasks"),
    "todos": ("to dos", "tasks"),
    "teammate": ("colleague", "coworker", "co worker"),
    "teammates": ("colleagues", "coworkers", "team"),
    "colleague": ("coworker", "teammate", "co worker"),
    "colleagues": ("coworkers", "teammates", "team"),
    "coworker": ("colleague", "teammate"),
    "coworkers": ("colleagues", "teammates"),
    "office": ("workplace",),
    "birthday": ("bday", "birth date"),
    "phone": ("mobile", "cell"),
    "email": ("mail", "e mail"),
    "address": ("lives at",),
    "allergy": ("allergic",),
    "allergies": ("allergic",),
    "allergic": ("allergy", "allergies"),
    "favourite": ("favorite", "prefer", "love"),
    "favorite": ("favourite", "prefer", "love"),
    "timezone": ("time zone", "utc", "gmt"),
    "commute": ("drive to work", "train to work"),
    "onboarding": ("new hire", "first week"),
    "feedback": ("review",),
    "guidelines": ("conventions", "rules", "style guide"),
    "conventions": ("guidelines", "rules", "style guide"),
}


def with_synonyms(words: list[str], counts: Callable[[list[str]], list[int]]) -> tuple[list[str], dict[str, str]]:
    """``words`` with each word no unit says, and the table lists, replaced by the first of its other
    words the bank says, and the other such words (at most :data:`MAX_FORMS` in all) mapped to that
    first one, to be searched beside it and counted as it (as ADR 203's alternates are).

    Which forms the bank says is read as for ADR 197's short words (``said_forms_of_unsaid``): a
    prompt with no word of the table costs no statement here.
    """
    forms = said_forms_of_unsaid(words, _synonyms_of, counts)
    if not forms:
        return words, {}
    out: list[str] = []
    alternates: dict[str, str] = {}
    for word in words:
        said = list(forms.get(word, ()))[:MAX_FORMS]
        if not said:
            out.append(word)
            continue
        head, *rest = said
        if head not in out:
            out.append(head)
        for form in rest:
            alternates.setdefault(form, head)
    return out, {form: head for form, head in alternates.items() if form not in out}


def _synonyms_of(word: str) -> tuple[str, ...]:
    return SYNONYMS.get(word, ())
