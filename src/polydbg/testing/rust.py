"""Rust tests by name: a ``cargo test`` name (``tests::bulk_discount``: the test's path in its crate, or the
test's own name when only one test has it), looked up in every test binary of the package at cwd (its library's,
its binaries', its integration tests'), or with the file of the target it is in before it
(``tests/parse.rs::eleven_items``) when several hold that name.

The tests are built as ``cargo test --no-run --message-format=json`` builds them (the test profile; cargo's JSON
names each test binary and its target's file), each binary lists its tests (``--list``), and the one holding the
name runs it alone: ``<binary> <name> --exact --include-ignored --nocapture --test-threads=1`` (a test named is
run, ``#[ignore]`` or not), in its package's directory with the variables cargo sets for a test run, under the
Rust default debugger. A failing ``assert!``/``assert_eq!`` panics, and the backends' panic stop shows it at the
assertion's line in the test's frame with the panic's message ("left: … right: …"). A name no binary lists is
answered before anything runs, with the closest names.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from polydbg.backends.kit.panics import panic_message
from polydbg.backends.kit.projects import nearest_with
from polydbg.errors import EnvironmentProblem, UsageError, echo
from polydbg.testing.plan import (
    ERROR,
    FAILED,
    NOT_FOUND,
    PASSED,
    TestPlan,
    Verdict,
    closest,
    last_lines,
    output_of,
    run,
)

BUILD_S = 900.0  # cargo builds the package's tests (and their dependencies, the first time)
ERRORS_SHOWN = 3
_NAME = re.compile(r"[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*")
_LISTED = re.compile(r"^(\S+): test$", re.MULTILINE)
_RESULT = re.compile(r"^test result: (ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored.*$", re.MULTILINE)


@dataclass(frozen=True)
class TestBinary:
    __test__ = False  # not a test class, whatever pytest reads in its name
    executable: str
    source: str  # the target's root file (src/lib.rs, tests/parse.rs)
    package_dir: str
    tests: tuple[str, ...] = ()

    def shown(self, name: str, cwd: str) -> str:
        """``name`` as ``test`` takes it, with this binary's file before it."""
        return f"{os.path.relpath(self.source, cwd)}::{name}"


def find_cargo(env: Mapping[str, str]) -> str:
    found = shutil.which("cargo", path=env.get("PATH")) or shutil.which(
        "cargo", path=os.path.join(os.path.expanduser("~"), ".cargo", "bin"))
    if found is None:
        raise EnvironmentProblem("cargo is not on PATH (nor in ~/.cargo/bin); install Rust (rustup, or Debian's cargo "
                                 "package), or pass env={\"PATH\": …} with its directory")
    return found


def is_rust_test(test: str, cwd: str) -> bool:
    """A name in a Cargo package: cwd is in one, or the name starts with a ``.rs`` file."""
    return test.split("::")[0].endswith(".rs") or _manifest_dir(cwd) is not None


def _manifest_dir(start: str) -> str | None:
    return nearest_with(start, "Cargo.toml")


async def plan(test: str, cwd: str, env: Mapping[str, str] | None) -> TestPlan:
    first, _, rest = test.partition("::")
    source, name = (os.path.realpath(os.path.join(cwd, first)), rest) if first.endswith(".rs") else (None, test)
    if not _NAME.fullmatch(name):
        raise UsageError(f"test {echo(test)} is not a cargo test name; pass a test's path in its crate "
                         "(tests::adds), or its target's file before it (tests/parse.rs::empty)")
    if _manifest_dir(cwd) is None:
        raise UsageError(f"no Cargo.toml in {cwd} or above; pass cwd=the package's directory")
    full_env = {**os.environ, **(env or {})}
    cargo = find_cargo(full_env)
    binaries = await listed(await build(cargo, cwd, full_env))
    if source is not None:
        binaries = [b for b in binaries if os.path.realpath(b.source) == source]
        if not binaries:
            raise UsageError(f"{echo(first)} is no test target's file here; pass its path relative to cwd "
                             "(tests/parse.rs), or the test's name alone")
    holding = [b for b in binaries if name in b.tests]
    if not holding:  # a test's own name without its module path: the one test that ends with it
        ending = [(b, n) for b in binaries for n in b.tests if n.endswith("::" + name)]
        if len(ending) > 1:
            shown = ", ".join(b.shown(n, cwd) for b, n in ending[:10])
            raise UsageError(f"{len(ending)} tests are named {echo(name)}: {shown}; pass the one you mean")
        if ending:
            name = ending[0][1]
            holding = [ending[0][0]]
    if len(holding) > 1:
        shown = ", ".join(b.shown(name, cwd) for b in holding)
        raise UsageError(f"{len(holding)} test targets have a test named {echo(name)}: {shown}; pass the one you "
                         "mean")
    if not holding:
        every = [n for b in binaries for n in b.tests]
        names = [b.shown(n, cwd) if every.count(n) > 1 else n for b in binaries for n in b.tests]
        near = closest(name, names)
        hint = f"; closest: {', '.join(near)}" if near else " (no test binary lists any test)"
        raise UsageError(f"no test named {echo(name)} in {cwd}{hint}")
    binary = holding[0]
    return TestPlan(name=name if source is None else f"{first}::{name}", runner="cargo test", language="rust",
                    cwd=binary.package_dir, program=binary.executable,
                    args=(name, "--exact", "--include-ignored", "--nocapture", "--test-threads=1"),
                    env=(("CARGO_MANIFEST_DIR", binary.package_dir),), judge=verdict,
                    rebuild=lambda: _rebuilt(cargo, cwd, full_env, binary.executable))


async def build(cargo: str, cwd: str, env: Mapping[str, str]) -> list[TestBinary]:
    """The package's test binaries, built with the test profile; a failed build is the answer, with its errors."""
    code, text = await run([cargo, "test", "--no-run", "--message-format=json"], cwd, BUILD_S, env)
    messages = [_json(line) for line in text.splitlines() if line.startswith("{")]
    if code != 0:
        errors = [str(m["message"].get("rendered") or m["message"].get("message")).strip() for m in messages
                  if m.get("reason") == "compiler-message" and (m.get("message") or {}).get("level") == "error"]
        said = "\n".join(errors[:ERRORS_SHOWN]) or "\n".join(
            line for line in last_lines(text, 10) if not line.startswith("{"))
        why = "did not finish" if code is None else f"failed (exit {code})"
        raise UsageError(f"cargo test --no-run {why}:\n{said[-3000:]}")
    return [TestBinary(executable=str(m["executable"]), source=str(m["target"]["src_path"]),
                       package_dir=os.path.dirname(str(m["manifest_path"])))
            for m in messages if m.get("reason") == "compiler-artifact" and m.get("executable")
            and (m.get("profile") or {}).get("test")]


async def _rebuilt(cargo: str, cwd: str, env: Mapping[str, str], executable: str) -> None:
    """The tests built again, for a restart: the binary keeps its path while its crate's code changes."""
    if executable not in {b.executable for b in await build(cargo, cwd, env)}:
        raise UsageError(f"cargo test --no-run no longer builds {executable}: the package changed; debug_launch "
                         "the test again")


async def listed(binaries: list[TestBinary]) -> list[TestBinary]:
    """Each binary with the tests it lists (``--list``)."""
    texts = await asyncio.gather(*(output_of([b.executable, "--list"], b.package_dir) for b in binaries))
    return [TestBinary(b.executable, b.source, b.package_dir, tuple(_LISTED.findall(text)))
            for b, text in zip(binaries, texts, strict=True)]


def verdict(code: int | None, text: str) -> Verdict:
    """How libtest's run of one test ended, from its ``test result:`` line."""
    results = list(_RESULT.finditer(text))
    if not results:
        lines = last_lines(text, 3)
        return Verdict(ERROR, " / ".join(lines) or None)
    result = results[-1]
    summary = result[0].strip()
    if result[1] == "FAILED" or code not in (0, None):
        panicked = panic_message(text)
        return Verdict(FAILED, f"{panicked}; {summary}" if panicked else summary)
    if int(result[2]) + int(result[4]) == 0:
        return Verdict(NOT_FOUND, summary)
    return Verdict(PASSED, summary)


def _json(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
