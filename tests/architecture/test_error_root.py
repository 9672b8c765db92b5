"""Every exception class the package defines derives from ``HindsightHooksError`` (ADR 141)."""

from __future__ import annotations

import hindsight_hooks
from hindsight_hooks.backends.base import BackendError
from hindsight_hooks.errors import HindsightHooksError

from .package_walk import all_modules


def _exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for module in all_modules():
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module.__name__:
                found.append(value)
    return found


def test_every_exception_class_derives_from_the_root() -> None:
    classes = _exception_classes()
    names = {f"{c.__module__}.{c.__qualname__}" for c in classes}
    assert BackendError in classes and "hindsight_hooks.queue.errors.QueueError" in names
    assert len(classes) >= 20, sorted(names)  # the walk really saw the package's errors
    strays = sorted(f"{c.__module__}.{c.__qualname__}" for c in classes if not issubclass(c, HindsightHooksError))
    assert strays == []


def test_the_root_is_importable_from_the_package_and_value_errors_stay_value_errors() -> None:
    from hindsight_hooks.backends.tag_groups import TagGroupError, validate_tag_groups

    assert hindsight_hooks.HindsightHooksError is HindsightHooksError
    try:
        validate_tag_groups([{"tags": ["a"], "match": "nope"}])
    except ValueError as exc:  # existing ``except ValueError`` handlers keep catching it
        assert isinstance(exc, TagGroupError) and isinstance(exc, HindsightHooksError)
    else:
        raise AssertionError("a bad match mode must raise")
