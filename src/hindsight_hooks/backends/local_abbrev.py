"""A developer's short word the bank never says is searched by its long form, and back (ADR 197).

People write to their agent the way they talk shop: "which db in prod?", "who bumps the deps?",
"how does auth work?", "the k8s manifests". The memories they ask about often say the long word
("the production database", "dependencies", "Authentication uses OAuth", "Kubernetes"), or the
other way round. The index matches words, so without the ``[semantic]`` extra such a question
finds nothing, or only what its other words match.

As the prefix rule does (``local_prefix``), this touches only a query word that no unit of the bank
says. Such a word, when it is one of the pairs below, is searched instead by its counterpart that
the bank says most often. A word the bank says is searched as it is, so a prompt whose words are
all known searches exactly as before. The query's vectors still come from the prompt's own words.

The table is short on purpose: only abbreviations with one meaning in a developer's talk.
Ambiguous ones ("ms", "sec", "temp", "ws") are left out, because a wrong counterpart would
bring in memories about something else.
"""

from __future__ import annotations

from collections.abc import Callable

# short form -> the long forms it stands for (a long form of several words is searched as a phrase)
SHORT_TO_LONG: dict[str, tuple[str, ...]] = {
    "db": ("database",),
    "dbs": ("databases",),
    "prod": ("production",),
    "dev": ("development", "developer"),
    "env": ("environment",),
    "envs": ("environments",),
    "repo": ("repository",),
    "repos": ("repositories",),
    "config": ("configuration",),
    "configs": ("configurations",),
    "cfg": ("configuration",),
    "conf": ("configuration",),
    "auth": ("authentication", "authorization"),
    "authn": ("authentication",),
    "authz": ("authorization",),
    "dep": ("dependency",),
    "deps": ("dependencies",),
    "docs": ("documentation",),
    "k8s": ("kubernetes",),
    "kube": ("kubernetes",),
    "infra": ("infrastructure",),
    "perf": ("performance",),
    "impl": ("implementation",),
    "msg": ("message",),
    "msgs": ("messages",),
    "pkg": ("package",),
    "pkgs": ("packages",),
    "lib": ("library",),
    "libs": ("libraries",),
    "func": ("function",),
    "fn": ("function",),
    "var": ("variable",),
    "vars": ("variables",),
    "param": ("parameter",),
    "params": ("parameters",),
    "arg": ("argument",),
    "args": ("arguments",),
    "req": ("request",),
    "reqs": ("requirements", "requests"),
    "resp": ("response",),
    "err": ("error",),
    "tmp": ("temporary",),
    "dirs": ("directories",),
    "spec": ("specification",),
    "specs": ("specifications",),
    "mgmt": ("management",),
    "txn": ("transaction",),
    "tz": ("timezone", "time zone"),
    "app": ("application",),
    "apps": ("applications",),
    "info": ("information",),
    "async": ("asynchronous",),
    "prefs": ("preferences",),
    "stats": ("statistics",),
    "pw": ("password",),
    "passwd": ("password",),
    "ts": ("typescript",),
    "js": ("javascript",),
    "py": ("python",),
    "gh": ("github",),
    "pg": ("postgres", "postgresql"),
    "postgres": ("postgresql",),
    "mongo": ("mongodb",),
    "pr": ("pull request",),
    "prs": ("pull requests",),
    "mr": ("merge request",),
    "ci": ("continuous integration",),
    "e2e": ("end to end",),
    "regex": ("regular expression",),
    "regexp": ("regular expression",),
    "ui": ("user interface",),
    "ux": ("user experience",),
    "vm": ("virtual machine",),
    "vms": ("virtual machines",),
    "lb": ("load balancer",),
    "sso": ("single sign on",),
    "ml": ("machine learning",),
    "i18n": ("internationalization", "internationalisation"),
    "l10n": ("localization", "localisation"),
    "a11y": ("accessibility",),
}


def _long_to_short() -> dict[str, tuple[str, ...]]:
    back: dict[str, list[str]] = {}
    for short, longs in SHORT_TO_LONG.items():
        for long in longs:
            back.setdefault(long, []).append(short)
    return {long: tuple(shorts) for long, shorts in back.items()}


LONG_TO_SHORT = _long_to_short()


def counterparts(term: str) -> tuple[str, ...]:
    """The other forms of ``term`` (a query word, lower case): its long forms or its short ones."""
    return SHORT_TO_LONG.get(term, ()) + LONG_TO_SHORT.get(term, ())


def said_forms_of_unsaid(
    terms: list[str], forms_of: Callable[[str], tuple[str, ...]], counts: Callable[[list[str]], list[int]]
) -> dict[str, dict[str, int]]:
    """For each of ``terms`` that no unit says and that ``forms_of`` gives other forms of, those forms
    the bank says (in their order, none of ``terms`` itself) with their matches; ``{}`` when none.

    Shared by this table and the synonyms' (ADR 233), which choose among the forms differently.
    ``counts`` gives each term's matches in the bank (the search's own capped counts, kept for the
    rest of the search). A prompt with no word that has forms costs no statement here; one whose
    such words are all said costs the count the search makes anyway.
    """
    known = {term: forms for term in terms if (forms := forms_of(term))}
    if not known:
        return {}
    # Every term of the prompt at once: a bank larger than the ranked window counts them all for
    # its search anyway (the counts are kept), so only the forms below can cost a statement more.
    said = dict(zip(terms, counts(terms), strict=True))
    unsaid = [term for term in known if said[term] == 0]
    if not unsaid:
        return {}
    others = list(dict.fromkeys(form for term in unsaid for form in known[term] if form not in terms))
    found = dict(zip(others, counts(others), strict=True)) if others else {}
    return {term: {form: found[form] for form in known[term] if found.get(form, 0) > 0} for term in unsaid}


def with_counterparts(terms: list[str], counts: Callable[[list[str]], list[int]]) -> list[str]:
    """``terms`` with each word no unit says replaced by the counterpart the bank says most
    (:func:`said_forms_of_unsaid` reads which, and costs what it says)."""
    forms = said_forms_of_unsaid(terms, counterparts, counts)
    if not forms:
        return terms
    out: list[str] = []
    for term in terms:
        said = forms.get(term)
        best = max(said, key=said.__getitem__) if said else None  # the first of equals, as listed
        if best is not None:
            if best not in out:
                out.append(best)
        else:
            out.append(term)
    return out


def said_counterparts(words: list[str], counts: Callable[[list[str]], list[int]]) -> dict[str, str]:
    """The counterparts the bank says of the query's words that it says too, each mapped to its word.

    Why: a bank often says both forms ("the db migrations", "our database is Postgres"). A query
    word the bank says is searched as it is, so "which db do we use?" found the db notes and never
    the Postgres one. Each such counterpart is searched beside its word, and a unit that says it
    counts as saying the word (the coverage rule sees one term, not two). A word with no
    counterpart in the table costs nothing here; one that has some costs one capped count.
    """
    known = {word: forms for word in words if (forms := counterparts(word))}
    if not known:
        return {}
    others = list(dict.fromkeys(form for forms in known.values() for form in forms if form not in words))
    if not others:
        return {}
    said = {form for form, n in zip(others, counts(others), strict=True) if n > 0}
    alternates: dict[str, str] = {}
    for word, forms in known.items():
        for form in forms:
            if form in said and form not in alternates:
                alternates[form] = word
    return alternates
