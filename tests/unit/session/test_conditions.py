"""Conditions and logpoint messages are checked by the checker the registry names for the session's language
(the file's, before any session) when they are set; languages whose debugger reads them at the hit are left
to it. (Python's checker itself is tested in tests/unit/backends/debugpy/test_expressions.py.)"""

from __future__ import annotations

import pytest

from polydbg.backends import registry
from polydbg.errors import UsageError
from polydbg.session import conditions


@pytest.mark.parametrize(("language", "condition", "says"), [
    ("python", "i = 3", "not a Python expression"),
    ("java", "i +* 2", "not evaluable Java"),
    ("kotlin", "i ==", "not evaluable Java"),  # Kotlin conditions are evaluated as Java
])
def test_a_language_with_a_checker_refuses_a_broken_condition(language: str, condition: str, says: str) -> None:
    with pytest.raises(UsageError, match=says):
        conditions.check(language, condition, None)
    conditions.check(language, "i == 3", None)


@pytest.mark.parametrize("language", ["java", "python"])
def test_each_interpolation_of_a_log_message_is_checked(language: str) -> None:
    conditions.check(language, None, "i={i} and {i + 1}")
    with pytest.raises(UsageError, match=r"\{i \+\* 2\} in log_message"):
        conditions.check(language, None, "ok {i} broken {i +* 2}")


def test_languages_without_a_checker_are_left_to_their_debugger() -> None:
    for language in ("c", "cpp", "rust", "go", "javascript", "typescript", "cobol"):
        conditions.check(language, "i = = 3", "{+*}")


def test_nothing_to_check_asks_the_registry_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(language: str) -> None:
        raise AssertionError(f"the registry was asked about {language}")

    monkeypatch.setattr(registry, "expression_check", never)
    conditions.check("python", None, None)
    conditions.check(None, "i = 3", "{+*}")  # no language known: nothing to check with


def test_the_checker_gets_both_the_condition_and_the_log_message(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str | None, str | None]] = []
    monkeypatch.setattr(registry, "expression_check", lambda language: lambda c, m: seen.append((c, m)))
    conditions.check("python", "a > 1", "{a}")
    conditions.check("python", None, "{b}")
    assert seen == [("a > 1", "{a}"), (None, "{b}")]


def test_before_a_session_the_files_language_decides() -> None:
    for file in ("/src/app.py", "/src/App.java", "/src/Main.kt"):
        with pytest.raises(UsageError):
            conditions.check_file(file, "i = = 3", None)
    for file in ("/src/main.c", "/src/main.go", "/src/notes.txt", "/src/Makefile"):  # none, or no language
        conditions.check_file(file, "i = = 3", None)


@pytest.mark.parametrize("hit_condition", ["every 2", "% 0", "0", "== 0", "-3", ">= x", "5 times"])
def test_a_hit_condition_that_is_not_one_is_refused(hit_condition: str) -> None:
    """Given to the debugger, debugpy ignored such a condition (the program ran to its end), delve crashed on
    '% 0' and the others reported the breakpoint 'not bound yet'."""
    with pytest.raises(UsageError, match="is not one: use N"):
        conditions.check_hit(hit_condition)


@pytest.mark.parametrize("hit_condition", [None, "", "5", "== 2", ">= 3", "> 0", "< 4", "<= 2", "% 3"])
def test_a_hit_condition_that_is_one_passes(hit_condition: str | None) -> None:
    conditions.check_hit(hit_condition)
