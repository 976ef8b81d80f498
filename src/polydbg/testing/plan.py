"""A test run's plan and its verdict, in terms every runner shares.

A ``TestPlan`` is what launching needs to run one test alone under the debugger (the program or module and its
arguments, where it runs) and what the session needs afterwards: a ``judge`` that reads the run's end (its exit
code and the tail of its output) as a verdict, and the names of the tests there are, for the closest to a name
that matched none. The runners (one module per ecosystem) build plans; the session only calls them.
"""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field

from polydbg import procs
from polydbg.errors import UsageError, echo

PASSED = "passed"
FAILED = "failed"
NOT_FOUND = "not found"
ERROR = "error"
CLOSEST = 5
LISTING_S = 60.0  # for a runner to list a project's tests


@dataclass(frozen=True)
class Verdict:
    """How a test run ended: ``outcome`` (passed, failed, not found, error) and the runner's own summary line."""

    outcome: str
    summary: str | None = None


@dataclass(frozen=True)
class TestPlan:
    __test__ = False  # not a test class, whatever pytest reads in its name
    name: str  # as the agent gave it
    runner: str  # "pytest", "unittest": said in answers
    language: str
    cwd: str
    program: str | None = None
    module: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # what the runner sets for a test (cargo: CARGO_MANIFEST_DIR, …)
    judge: Callable[[int | None, str], Verdict] = field(default=lambda code, text: Verdict(ERROR))
    names: Callable[[], Awaitable[list[str]]] | None = None  # every test name in the plan's scope
    runtime_args: tuple[str, ...] | None = None  # the runtime's flags (a JVM's classpath): the launch's, replaced
    exception_filters: tuple[str, ...] = ()  # the backend's filters the run adds (JUnit catches every failure)
    rebuild: Callable[[], Awaitable[None]] | None = None  # before a restart: what the runner compiled, anew


def closest(name: str, names: Sequence[str]) -> list[str]:
    """The names most like ``name``: those ending with its last part first (the same test in another class or
    file), then the most similar, ``CLOSEST`` at most. A bare name is compared with the names' last parts first
    (against whole ids ``test_lru_clearr`` found ``…::LRUCacheTest::test_clear`` closer than ``test_lru_clear``)."""
    last = name.replace("#", "::").replace(".", "::").split("::")[-1].split("[")[0]
    ending = [n for n in names if last and n.replace("#", "::").split("::")[-1].split("[")[0] == last]
    whole = difflib.get_close_matches(name, list(names), n=CLOSEST, cutoff=0.4)
    parts = difflib.get_close_matches(last, [n.split("::")[-1] for n in names], n=CLOSEST, cutoff=0.5)
    similar = parts + whole if last == name else whole + parts
    found: list[str] = []
    for candidate in [*ending, *similar]:
        full = next((n for n in names if n == candidate or n.endswith("::" + candidate)), candidate)
        if full not in found:
            found.append(full)
    return found[:CLOSEST]


def the_one(name: str, found: Sequence[str], names: Sequence[str], cwd: str, how: str, none_here: str) -> str:
    """The one test of ``found`` (those of ``names`` named ``name``), else why not: the tests so named, ``how`` to
    pick one, or the closest names (``none_here``: why there may be no test at all)."""
    if len(found) == 1:
        return found[0]
    if found:
        shown = ", ".join(found[:10]) + (f" … ({len(found)} in all)" if len(found) > 10 else "")
        raise UsageError(f"{len(found)} tests are named {echo(name)}: {shown}; {how}")
    near = closest(name, names)
    hint = f"; closest: {', '.join(near)}" if near else (f" ({none_here})" if not names else "")
    raise UsageError(f"no test named {echo(name)} in {cwd}{hint}")


def last_lines(text: str, count: int) -> list[str]:
    return [line for line in text.rstrip().splitlines() if line.strip()][-count:]


async def output_of(argv: Sequence[str], cwd: str, timeout_s: float = LISTING_S,
                    env: Mapping[str, str] | None = None) -> str:
    """What a listing command (a runner's collection of test names) prints, stdout and stderr together; the
    command is ended at ``timeout_s`` (a project whose collection hangs answers with what it printed)."""
    return (await run(argv, cwd, timeout_s, env))[1]


async def run(argv: Sequence[str], cwd: str | None, timeout_s: float,
              env: Mapping[str, str] | None = None) -> tuple[int | None, str]:
    """A command's exit code (None: ended at ``timeout_s``) and what it printed, stdout and stderr together."""
    process = await procs.spawn(argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL,
                                stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except asyncio.TimeoutError:
        await procs.kill_group(process.pid)
        await procs.reap(process)
        return None, ""
    finally:
        procs.forget_group(process.pid)
    return process.returncode, out.decode("utf-8", "replace")
