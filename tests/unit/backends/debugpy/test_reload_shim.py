"""The reload shim (shims/reload.py) run for real in this process, as the program runs it: modules written to a
temporary directory, imported, edited, reloaded. What a function captured elsewhere runs (a decorator's closure,
functools.wraps, a partial, a default argument, a bound method), what is added, what is refused with nothing changed
(a syntax error in another file, a class layout, a closure, a new statement that fails), and what the notes say."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from polydbg.backends.base import Variable
from polydbg.backends.debugpy import reload
from polydbg.backends.kit import shims
from polydbg.backends.timecontrol import Reloaded, ReloadRefused
from polydbg.errors import UsageError

Reload = Callable[[], dict[str, Any]]


@pytest.fixture
def shim() -> Reload:
    """A fresh copy of the shim (its memory of the files starts empty), called as polydbg calls it."""
    spec = importlib.util.spec_from_file_location("_polydbg_reload_test", shims.path(reload.__file__, "reload.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda: dict(json.loads(module.reload([reload.OURS])))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str, str], ModuleType]]:
    """Writes a module of the given name and source and imports it (the files are named from their directory, as a
    program's from its own); every one is forgotten after the test."""
    monkeypatch.chdir(tmp_path)
    made: list[str] = []
    sys.path.insert(0, str(tmp_path))

    def write(name: str, source: str) -> ModuleType:
        (tmp_path / f"{name}.py").write_text(textwrap.dedent(source))
        made.append(name)
        importlib.invalidate_caches()
        return importlib.import_module(name)

    yield write
    sys.path.remove(str(tmp_path))
    for name in made:
        sys.modules.pop(name, None)


def edit(module: ModuleType, old: str, new: str) -> None:
    path = Path(module.__file__ or "")
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


def test_functions_captured_elsewhere_run_the_new_code_and_a_cache_is_cleared(project: Any, shim: Reload) -> None:
    app = project("rl_captured", """
        import functools

        def twice(f):
            def wrapper(*a):
                return f(*a)
            return wrapper

        @twice
        def plain(i):
            return i + 1

        @functools.wraps(plain)
        def wrapped(i):
            return plain(i)

        @functools.lru_cache
        def cached(i):
            return i + 1

        def target(i):
            return i + 1

        def caller(i, f=target):
            return f(i)

        class Box:
            def get(self, i):
                return i + 1
        """)
    partial, bound, cached_before = functools_partial(app.target), app.Box().get, app.cached(1)
    assert (app.plain(1), partial(1), app.caller(1), bound(1), cached_before) == (2, 2, 2, 2, 2)
    edit(app, "return i + 1", "return i + 100")
    done = shim()
    assert done["replaced"] == ["rl_captured.py: plain, cached, target, Box.get"], done  # the file's order
    assert (app.plain(1), partial(1), app.caller(1), bound(1), app.cached(1)) == (101, 101, 101, 101, 101)
    assert "rl_captured.py: cached's cache was cleared (its results came from the old code)" in done["notes"], done
    assert shim() == {"replaced": [], "notes": []}  # nothing edited since


def functools_partial(f: Callable[[int], int]) -> Callable[[int], int]:
    import functools

    return functools.partial(f)


def test_a_syntax_error_in_one_file_leaves_the_other_edited_file_unchanged_too(project: Any, shim: Reload) -> None:
    good, bad = project("rl_good", "def f():\n    return 1\n"), project("rl_bad", "def g():\n    return 1\n")
    edit(good, "return 1", "return 2")
    edit(bad, "return 1", "return (2")
    refused = shim()["refused"]
    assert refused.startswith("rl_bad.py:2: ") and ("was never closed" in refused or "invalid syntax" in refused), \
        refused
    assert (good.f(), bad.g()) == (1, 1)
    edit(bad, "return (2", "return 3")  # fixed: both go in at the next reload
    assert sorted(shim()["replaced"]) == ["rl_bad.py: g", "rl_good.py: f"]
    assert (good.f(), bad.g()) == (2, 3)


@pytest.mark.parametrize(("source", "old", "new", "refusal"), [
    ("class P:\n    __slots__ = ('x',)\n    def f(self):\n        return 1\n", "('x',)", "('x', 'y')",
     "class P changed its __slots__ (x, y, was x)"),
    ("import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int\n    def f(self):\n        return 1\n",
     "    x: int\n", "    x: int\n    y: int = 0\n", "class P changed its fields (x, y, was x)"),
    ("class B:\n    pass\nclass P:\n    def f(self):\n        return 1\n", "class P:", "class P(B):",
     "class P changed its bases (added B)"),
    ("def outer():\n    n = 1\n    def f():\n        return 1\n    return f\nf = outer()\n", "return 1\n",
     "return n\n", "outer.<locals>.f now uses other variables of its enclosing scope (n, was none)"),
    ("def f():\n    return 1\n", "def f", "import not_a_module_anywhere\ndef f",
     "the new statement failed when run: ModuleNotFoundError"),
])
def test_a_change_the_running_program_cannot_take_refuses_the_whole_reload(
        project: Any, shim: Reload, source: str, old: str, new: str, refusal: str) -> None:
    module = project("rl_refused", source)
    function = module.f if hasattr(module, "f") else module.P.f
    code, names = function.__code__, set(vars(module))
    edit(module, old, new)
    if "return 1" in Path(module.__file__ or "").read_text():  # a change that could go in, beside the refused one
        edit(module, "return 1", "return 2")
    refused = shim()["refused"]
    assert refusal in refused, refused
    assert function.__code__ is code and set(vars(module)) == names


def test_new_names_and_methods_are_added_and_a_new_super_call_reaches_the_real_class(
        project: Any, shim: Reload) -> None:
    app = project("rl_added", """
        class Base:
            def hello(self):
                return "base"

        class Child(Base):
            def hello(self):
                return "child"

        def use():
            return 0
        """)
    child = app.Child()
    edit(app, "def use():\n    return 0", "LIMIT = 7\n\ndef helper():\n    return LIMIT\n\ndef use():\n"
                                          "    return helper()")
    edit(app, "        return \"child\"", "        return \"child\"\n\n    def both(self):\n"
                                          "        return super().hello() + '+' + self.hello()")
    done = shim()
    assert done["replaced"] == ["rl_added.py: use; added Child.both, LIMIT, helper"], done
    assert app.use() == 7 and child.both() == "base+child"


def test_a_changed_literal_is_named_and_a_started_generator_keeps_its_code(project: Any, shim: Reload,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # the module's code cached at import: what it loaded
    app = project("rl_notes", "LIMIT = 10\n\ndef ticks():\n    yield 1\n    yield 2\n")
    started = app.ticks()
    next(started)
    edit(app, "LIMIT = 10", "LIMIT = 20")
    edit(app, "yield 2", "yield 3")
    done = shim()
    assert done["replaced"] == ["rl_notes.py: ticks"], done
    assert ("rl_notes.py:1: LIMIT = 20 in the file, 10 in the program: code outside functions is not run again "
            "(debug_evaluate(\"__import__('sys').modules['rl_notes'].LIMIT = 20\") sets it)") in done["notes"], done
    assert "generators or coroutines started already keep the old code until they finish (ticks: 1)" in \
        " ".join(done["notes"]), done
    assert list(started) == [2] and list(app.ticks()) == [1, 3]
    assert app.LIMIT == 10


def test_a_call_in_progress_is_named_as_finishing_with_the_old_code(project: Any, shim: Reload) -> None:
    app = project("rl_running", "def work(reload):\n    answer = reload()\n    return 'old', answer\n")
    edit(app, "return 'old', answer", "return 'new', answer")
    result, done = app.work(shim)
    assert result == "old" and app.work(lambda: None)[0] == "new"
    assert any(n.startswith("work (rl_running.py:2) is running: this call finishes with the old code")
               for n in done["notes"]), done


def test_the_shims_answer_read_by_the_backend() -> None:
    def value(text: str) -> Variable:
        return Variable(name="", value=repr(text), type="str", ref=0)

    assert reload.reloaded(value('{"replaced": ["a.py: f"], "notes": ["n"]}')) == Reloaded(("a.py: f",), None, ("n",))
    with pytest.raises(ReloadRefused, match=r"nothing was reloaded, the program runs its old code: a\.py:2: bad"):
        reload.reloaded(value('{"refused": "a.py:2: bad"}'))
    with pytest.raises(UsageError, match=r"failed inside the program.*NameError"):
        reload.reloaded(Variable(name="", value="NameError: name 'x' is not defined", type="", ref=0))
    with pytest.raises(UsageError, match="no thread is stopped in Python code"):
        reload.reloaded(None)


def test_classes_whose_bases_typing_rewrites_take_a_changed_method(project: Any, shim: Reload) -> None:
    """NamedTuple, Protocol and Generic classes hold other __bases__ than the file names: not a layout change."""
    app = project("rl_typing", """
        import dataclasses
        from typing import Generic, NamedTuple, Protocol, TypeVar

        T = TypeVar("T")

        class Point(NamedTuple):
            x: int
            def f(self):
                return 1

        class Shape(Protocol):
            def f(self):
                return 1

        class Box(Generic[T], object):
            def f(self):
                return 1

        @dataclasses.dataclass
        class Base:
            a: int = 0

        @dataclasses.dataclass
        class Child(Base):
            b: int = 0
            def f(self):
                return 1
        """)
    edit(app, "return 1", "return 2")
    assert shim()["replaced"] == ["rl_typing.py: Point.f, Shape.f, Box.f, Child.f"]
    assert (app.Point(1).f(), app.Box().f(), app.Child().f()) == (2, 2, 2)


REGISTRY = ("NAMES = []\nCOUNT = 0\n\ndef add(n):\n    global COUNT\n    NAMES.append(n)\n    COUNT += 1\n"
            "    return n\n\nadd('a')\n")


def test_a_value_the_program_changed_itself_is_not_taken_for_an_edited_literal(
        project: Any, shim: Reload, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # the import caches the module's code, as it usually does
    app = project("rl_registry", REGISTRY)  # a registry filled at import, a counter
    app.add("b")
    edit(app, "return n\n", "return n * 2\n")
    assert shim() == {"replaced": ["rl_registry.py: add"], "notes": []}  # NAMES, COUNT: as the program ran them
    edit(app, "COUNT = 0", "COUNT = 5")
    done = shim()  # compared with what the last reload saw: the edited statement is named
    assert done["notes"] == ["rl_registry.py:2: COUNT = 5 in the file, 2 in the program: code outside functions is "
                             "not run again (debug_evaluate(\"__import__('sys').modules['rl_registry'].COUNT = 5\") "
                             "sets it)"], done


def test_without_the_module_s_cached_code_a_container_is_not_compared_and_a_value_s_note_is_hedged(
        project: Any, shim: Reload, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # PYTHONDONTWRITEBYTECODE: what was loaded is unknown
    app = project("rl_unknown", REGISTRY)
    edit(app, "return n\n", "return n * 2\n")
    done = shim()
    assert done["replaced"] == ["rl_unknown.py: add"], done
    assert len(done["notes"]) == 1 and done["notes"][0].startswith(
        "rl_unknown.py:2: COUNT = 0 in the file, 1 in the program (which may have changed it itself: set it only if "
        "you edited this line)"), done
