"""The shape of the code, checked: no import cycles, no module over the line limit, and no language or
adapter named in the session layer or the policy (what they need to know about a language comes from the
registry's ``BackendInfo``, so a new backend touches neither)."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from polydbg.backends import registry

SRC = Path(__file__).resolve().parents[2] / "src" / "polydbg"
LINE_LIMIT = 600
# Layers that must stay language-neutral.
NEUTRAL = [SRC / "policy.py", *sorted((SRC / "session").glob("*.py"))]
# Short names that are also English words or letters: only a whole string or identifier counts.
SHORT = 3


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        if "shims" in path.parts:  # code run in another process, never imported
            continue
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(path: Path, known: dict[str, Path]) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in out if name in known}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_itself_through_others() -> None:
    """Every import counts, TYPE_CHECKING ones too: a cycle for the type checker is a cycle in the design."""
    modules = _modules()
    graph = {name: _imports(path, modules) - {name} for name, path in modules.items()}
    assert _cycles(graph) == []


def test_no_module_is_over_the_line_limit() -> None:
    long = {name: n for name, path in _modules().items()
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > LINE_LIMIT}
    assert long == {}, f"split these along their seams (limit {LINE_LIMIT} lines)"


def _names() -> set[str]:
    names = set(registry.languages()) | set(registry.BACKENDS) | set(registry._ALIASES)
    names |= {name for info in registry.BACKENDS.values() for name in info.process_names}
    names |= {"lldb", "dlv", "jvm", "jdwp", "pydevd"}  # the debuggers' and runtimes' own names
    return {name.lower() for name in names}


def _words(text: str) -> Iterator[str]:
    """Words as a reader sees them: ``lldb-dap`` and ``c++`` whole, ``NODE_OPTIONS`` one word (a variable)."""
    yield from (word.lower() for word in re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:[+-][A-Za-z+]+)?\+*", text))


def _named(text: str, names: set[str]) -> set[str]:
    """The names ``text`` mentions: a long one as a word anywhere, a short one only as the whole text."""
    whole = text.strip().lower()
    hits = {whole} & names
    hits |= {word for word in _words(text) if len(word) >= SHORT and word in names}
    return hits


def _mentions(path: Path, names: set[str]) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    for node in ast.walk(tree):
        text: str | None = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            text = node.value
        elif isinstance(node, ast.Name):
            text = node.id.replace("_", " ")  # an identifier's parts are words: harmless_python names python
        elif isinstance(node, ast.Attribute):
            text = node.attr.replace("_", " ")
        elif isinstance(node, ast.arg):
            text = node.arg.replace("_", " ")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            text = node.name.replace("_", " ")
        elif isinstance(node, ast.keyword) and node.arg:
            text = node.arg.replace("_", " ")
        if text is not None:
            for name in sorted(_named(text, names)):
                yield f"{path.relative_to(SRC)}:{getattr(node, 'lineno', '?')}: {name} in {text[:60]!r}"


@pytest.mark.parametrize("path", NEUTRAL, ids=lambda p: str(p.relative_to(SRC)))
def test_the_session_and_the_policy_name_no_language_or_adapter(path: Path) -> None:
    assert list(_mentions(path, _names())) == []


def test_the_name_check_sees_what_it_should() -> None:
    names = _names()
    assert _named("if language in ('java', 'kotlin'):", names) == {"java", "kotlin"}
    assert _named("c", names) == {"c"} and _named("go", names) == {"go"}
    assert _named("call it again to go on from here", names) == set()  # English, not Go
    assert _named("HARMLESS PYTHON", names) == {"python"}  # an identifier, split at its underscores
    assert _named("PYTHONSTARTUP, NODE_OPTIONS", names) == set()  # environment variables are not languages
    assert _named("started with lldb-dap's command escape", names) >= {"lldb-dap"}
