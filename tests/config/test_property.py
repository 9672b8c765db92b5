"""Hypothesis: random (valid and invalid) configs never make loading raise; warnings name their
keys; valid values round-trip from the user file, the project file and env."""

from __future__ import annotations

import json
import string
import tomllib
from pathlib import Path
from typing import Any, Literal, get_args, get_origin

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from hindsight_hooks.config import PROJECT_FORBIDDEN, PROJECT_NARROW_ONLY, flatten_config, load_config
from hindsight_hooks.config_model import Config, Entity, dump_config

from . import toml_writer


def _annotations() -> dict[str, Any]:
    """dotted TOML key → annotation, read from the models (the spec table in code)."""
    out: dict[str, Any] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            ann = info.annotation
            dotted = prefix + (info.alias or name)
            if isinstance(ann, type) and issubclass(ann, BaseModel):
                walk(ann, dotted + ".")
            else:
                out[dotted] = ann

    walk(Config, "")
    return out


ANN = _annotations()
DEFAULTS: dict[str, Any] = {}


def _defaults(node: dict[str, Any], prefix: str) -> None:
    for k, v in node.items():
        if isinstance(v, dict):
            _defaults(v, prefix + k + ".")
        else:
            DEFAULTS[prefix + k] = v


_defaults(dump_config(Config()), "")
assert set(DEFAULTS) == set(ANN)

# Keys whose final value depends on other keys (docs/configuration.md#normalisation cross-key rules): not round-trip
# checked.
COUPLED = {"banks.project.derive", "banks.user.enabled", "recall.project_query_preamble", "recall.user_query_preamble"}


def forbidden_in_project(flat: dict[str, Any]) -> set[str]:
    """Keys the project file may not set as written: secrets, code, and read-widening bank keys
    (any value but the narrowing one; ADR-063)."""
    narrow = {k for k, v in flat.items() if k in PROJECT_NARROW_ONLY and v is not PROJECT_NARROW_ONLY[k]}
    return set(PROJECT_FORBIDDEN) | narrow


PLACEHOLDERS = ["{repoKey}", "{sessionId}", "{cwdHash}", "{projectBankId}", "{bankId}", "{hostName}"]

text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=12)
plain = st.text(string.ascii_letters + string.digits + "-_:./ ", min_size=1, max_size=10).filter(str.strip)
ident = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
rel_path = st.lists(st.text(string.ascii_lowercase + "-_", min_size=1, max_size=6), min_size=1, max_size=3).map(
    lambda parts: "/".join(parts) + ".json"
)
junk_scalar = st.one_of(st.integers(), st.booleans(), st.floats(allow_nan=False, allow_infinity=False), text)


def _literal(tp: Any) -> tuple[str, ...] | None:
    return tuple(get_args(tp)) if get_origin(tp) is Literal else None


def valid(key: str) -> st.SearchStrategy[Any]:
    ann = ANN[key]
    leaf = key.rsplit(".", 1)[-1]
    if key == "hindsight.base_url":
        return st.sampled_from(["", "http://localhost:8888", "https://mem.example.com/api"])
    if key == "hindsight.api_key_ref":
        return st.one_of(st.just(""), ident, ident.map(lambda n: "env:" + n))
    if key == "local.embedder":
        return st.one_of(st.just(""), st.tuples(ident, ident).map(lambda t: f"{t[0]}.mod:{t[1]}"))
    if key == "recall.query_timestamp":
        return st.datetimes().map(lambda d: d.isoformat())
    if key == "retain.flush_interval_ms":
        return st.integers(0, 10**9)
    if key == "observations.scopes":
        item = st.tuples(plain, st.sampled_from(["", *PLACEHOLDERS])).map(lambda t: t[0] + t[1])
        return st.lists(st.lists(item, min_size=1, max_size=3), max_size=3)
    if key == "scope.user_scope_tags":
        return st.lists(plain, max_size=3)
    if leaf == "bank_id":
        return plain.map(str.strip)
    if leaf.endswith("path"):
        return rel_path
    if key == "retain.entities":
        entity = st.fixed_dictionaries({"text": plain}, optional={"type": plain})
        return st.lists(entity, max_size=3)
    if ann is bool:
        return st.booleans()
    if ann is int or ann == (int | None):
        return st.integers(1, 2**40)
    if ann is str:
        return text
    lit = _literal(ann)
    if lit:
        return st.sampled_from(lit)
    args = get_args(ann)
    if get_origin(ann) is list and _literal(args[0]):
        return st.lists(st.sampled_from(_literal(args[0]) or ()), max_size=4)
    if ann in (list[str], list[str] | None):
        return st.lists(text, max_size=3)
    raise AssertionError(f"no strategy for {key}: {ann}")


def invalid(key: str) -> st.SearchStrategy[Any]:
    ann = ANN[key]
    leaf = key.rsplit(".", 1)[-1]
    if key == "hindsight.base_url":
        return st.one_of(st.integers(), st.just("ftp://x"), st.just("localhost"))
    if key == "hindsight.api_key_ref":
        return st.one_of(st.integers(), st.just("env:1x"), st.just("a-b"))
    if key == "local.embedder":
        return st.one_of(st.booleans(), st.just("no colon here"))
    if key == "recall.query_timestamp":
        return st.one_of(st.integers(), st.text(string.ascii_letters, min_size=1, max_size=8))
    if key == "retain.flush_interval_ms":
        return st.one_of(st.booleans(), text, st.floats(allow_nan=False, allow_infinity=False))
    if key == "observations.scopes":
        return st.sampled_from([[[]], [["{nope}"]], "x", [[""]], [[1]], [["a{"]]])
    if key == "scope.user_scope_tags":
        return st.sampled_from([[""], "tag", [1], 3])
    if leaf == "bank_id":
        return st.one_of(st.integers(), st.booleans(), st.lists(st.integers(), max_size=2))
    if leaf.endswith("path"):
        return st.one_of(st.integers(), st.just(""), st.just("   "))
    if key == "retain.entities":
        return st.sampled_from([[{"text": ""}], "Ada", [1], [{"type": "x"}], [{"text": "a", "extra": 1}]])
    if ann is bool:
        return st.one_of(st.integers(), text, st.lists(st.booleans(), max_size=2))
    if ann is int or ann == (int | None):
        return st.one_of(
            st.integers(max_value=0), text, st.booleans(), st.floats(allow_nan=False, allow_infinity=False)
        )
    if ann is str:
        return st.one_of(st.integers(), st.booleans(), st.lists(st.integers(), max_size=2))
    lit = _literal(ann)
    if lit:
        return st.one_of(st.integers(), text.filter(lambda s: s not in lit))
    if get_origin(ann) is list or ann == (list[str] | None):
        return st.one_of(st.integers(), st.lists(st.integers(), min_size=1, max_size=2))
    raise AssertionError(f"no strategy for {key}: {ann}")


KEYS = sorted(ANN)
UNKNOWN = ["zz_unknown", "recall.zz_unknown", "queue.zz_x", "banks.project.zz"]


@st.composite
def configs(draw: st.DrawFn) -> tuple[dict[str, Any], set[str], set[str]]:
    """(flat {key: value}, valid keys, invalid keys)."""
    keys = draw(st.lists(st.sampled_from(KEYS), unique=True, max_size=25))
    flat: dict[str, Any] = {}
    good: set[str] = set()
    bad: set[str] = set()
    for key in keys:
        if draw(st.booleans()):
            flat[key] = draw(valid(key))
            good.add(key)
        else:
            flat[key] = draw(invalid(key))
            bad.add(key)
    for key in draw(st.lists(st.sampled_from(UNKNOWN), unique=True, max_size=2)):
        flat[key] = draw(junk_scalar)
    return flat, good, bad


def nest(flat: dict[str, Any]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for key, v in flat.items():
        node = root
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = v
    return root


def expected(key: str, v: Any) -> Any:
    if key == "retain.entities":
        return [{"text": e["text"], "type": e.get("type")} for e in v]
    return v


def _filter_reverted(key: str, bad: set[str]) -> bool:
    """A bad half of a tool filter reverts the whole filter (docs/configuration.md#normalisation)."""
    if ".tool_filter." not in key:
        return False
    table = key.rsplit(".", 1)[0]
    return any(b.startswith(table + ".") for b in bad)


def check(
    loaded: Any, flat: dict[str, Any], good: set[str], bad: set[str], where: str, source: str, forbidden: set[str]
) -> None:
    values = flatten_config(loaded.config)
    assert loaded.error is None
    written = set(flat)
    for warning in loaded.warnings:
        assert warning.startswith(where + ": "), warning
        named = warning[len(where) + 2 :].split(": ", 1)[0]
        assert any(named == k or k.startswith(named + ".") for k in written), (named, warning)
    warned = {w[len(where) + 2 :].split(": ", 1)[0] for w in loaded.warnings}
    for key in bad | (forbidden & written) | (set(UNKNOWN) & written):
        assert any(key == n or key.startswith(n + ".") for n in warned), (key, loaded.warnings)
    for key in good - COUPLED - forbidden:
        if _filter_reverted(key, bad):
            assert values[key] == DEFAULTS[key]
            continue
        assert values[key] == expected(key, flat[key]), key
        assert loaded.sources[key] == source, key
    for key in (bad | forbidden) - COUPLED:
        if key in written:
            assert values[key] == DEFAULTS[key], key
            assert loaded.sources[key] == "default", key


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(case=configs(), layer=st.sampled_from(["user", "project"]))
def test_random_file_configs(tmp_path: Path, case: tuple[dict[str, Any], set[str], set[str]], layer: str) -> None:
    flat, good, bad = case
    cwd = tmp_path / "proj"
    path = tmp_path / "user.toml" if layer == "user" else cwd / ".hindsight" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    text_doc = toml_writer.dumps(nest(flat))
    assert tomllib.loads(text_doc) == nest(flat)  # the writer itself is right
    path.write_text(text_doc, encoding="utf-8")
    try:
        loaded = load_config(cwd, env={"HOME": str(tmp_path)}, user_config_path=tmp_path / "user.toml")
        forbidden = forbidden_in_project(flat) if layer == "project" else set()
        check(loaded, flat, good, bad, str(path), layer, forbidden)
    finally:
        path.unlink()


@SETTINGS
@given(case=configs())
def test_random_env_configs(tmp_path: Path, case: tuple[dict[str, Any], set[str], set[str]]) -> None:
    flat, good, bad = case
    flat = {k: v for k, v in flat.items() if k not in UNKNOWN}
    env = {"HOME": str(tmp_path)}
    for key, v in flat.items():
        env["HINDSIGHT_HOOKS_" + key.upper().replace(".", "__")] = toml_writer.value(v)
    loaded = load_config(tmp_path / "proj", env=env, user_config_path=tmp_path / "absent.toml")
    values = flatten_config(loaded.config)
    assert loaded.error is None
    for warning in loaded.warnings:
        var = warning.split(": ", 1)[0]
        named = warning.split(": ")[1]
        assert var in env and var.removeprefix("HINDSIGHT_HOOKS_").lower().replace("__", ".").startswith(named)
    # Strings that look like another TOML type are kept as text for string keys, so "bad" string
    # values may legitimately load; only valid values are checked here.
    for key in good - COUPLED:
        if _filter_reverted(key, bad):
            continue
        assert values[key] == expected(key, flat[key]), key
        assert loaded.sources[key] == "env"


nested_keys = st.one_of(st.sampled_from(sorted({p for k in KEYS for p in k.split(".")})), text)
fuzz_values = st.recursive(
    junk_scalar | st.datetimes().map(lambda d: d.isoformat()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(nested_keys, inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.dictionaries(nested_keys, fuzz_values, max_size=6))
def test_fuzzed_documents_never_raise(tmp_path: Path, data: dict[str, Any]) -> None:
    cwd = tmp_path / "proj"
    path = cwd / ".hindsight" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(toml_writer.dumps(data), encoding="utf-8")
    loaded = load_config(cwd, env={"HOME": str(tmp_path)}, user_config_path=tmp_path / "absent.toml")
    assert isinstance(loaded.config, Config)
    for warning in loaded.warnings:
        assert warning.startswith(f"{path}: ")
        rest = warning[len(str(path)) + 2 :]  # "<key>: <reason>"; a key may itself hold ": "
        roots = {*data, *(json.dumps(k, ensure_ascii=False) for k in data)}
        assert any(rest.startswith(r + ": ") or rest.startswith(r + ".") for r in roots), warning
    if loaded.config.retain.entities:
        assert all(isinstance(e, Entity) and e.text.strip() for e in loaded.config.retain.entities)
