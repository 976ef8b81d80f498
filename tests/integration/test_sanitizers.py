"""AddressSanitizer, UndefinedBehaviorSanitizer and ThreadSanitizer reports as stops, on gdb and lldb-dap: a
program built with -fsanitize=… stops at the user's faulting line with the report's kind as the exception type,
the access in its message and the report's stacks (allocation, free, the other access) in its details.

Programs: tests/programs/native/sanitizers/*.c, built once per run (gcc -g -O0 -fsanitize=…).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

SANITIZERS = PROGRAMS / "native" / "sanitizers"
LLDB = "lldb-dap-22|lldb-dap|lldb-vscode"
BOTH = pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
# anyio's plugin drops the callspec of coroutine tests that do not ask for anyio_backend (test_conformance.py)
pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture(scope="session")
def sanitized(build_dir: Path) -> dict[str, str]:
    require("gcc")
    out = build_dir / "sanitized"
    out.mkdir(exist_ok=True)
    for name, flag in (("overflow", "address"), ("undefined", "undefined"), ("race", "thread")):
        subprocess.run(["gcc", "-g", "-O0", f"-fsanitize={flag}", "-pthread", "-o", str(out / name),
                        str(SANITIZERS / f"{name}.c")], check=True, capture_output=True, timeout=120)
    return {name: str(out / name) for name in ("overflow", "undefined", "race")}


async def stopped(tools: Tools, adapter: str, program: str, **launch: Any) -> dict[str, Any]:
    require("gdb" if adapter == "gdb" else LLDB)
    report = await tools("debug_launch", program=program, adapter=adapter, timeout_s=60, **launch)
    assert report["reason"] == "exception", report
    return report


def where(report: dict[str, Any], source: str, marker: str) -> None:
    assert report["location"]["file"] == str(SANITIZERS / source), report["location"]
    assert report["location"]["line"] == line_of(f"native/sanitizers/{source}", marker), report["location"]


@BOTH
async def test_heap_overflow_stops_at_the_write_with_the_allocation(tools: Tools, sanitized: dict[str, str],
                                                                    adapter: str) -> None:
    report = await stopped(tools, adapter, sanitized["overflow"])
    where(report, "overflow.c", "/* writes past the end */")
    exception = report["exception"]
    assert exception["type"] == "AddressSanitizer: heap-buffer-overflow", exception
    assert exception["message"].startswith("WRITE of size 1 at 0x"), exception
    assert "is located 0 bytes" in exception["message"] and "10-byte region" in exception["message"], exception
    details = exception["details"]
    made = line_of("native/sanitizers/overflow.c", "/* allocated here */")
    assert "allocated by thread T0 here:" in details and f"overflow.c:{made}" in " ".join(details), details
    await tools("debug_terminate")


@BOTH
async def test_use_after_free_stops_at_the_read_with_the_free(tools: Tools, sanitized: dict[str, str],
                                                             adapter: str) -> None:
    report = await stopped(tools, adapter, sanitized["overflow"], args=["free"])
    where(report, "overflow.c", "/* reads freed memory */")
    exception = report["exception"]
    assert exception["type"] == "AddressSanitizer: heap-use-after-free", exception
    assert exception["message"].startswith("READ of size 1 at 0x"), exception
    freed = line_of("native/sanitizers/overflow.c", "/* freed here */")
    details = " ".join(exception["details"])
    assert "freed by thread T0 here:" in details and f"overflow.c:{freed}" in details, details
    assert "previously allocated by thread T0 here:" in details, details
    await tools("debug_terminate")


@BOTH
async def test_undefined_behaviour_stops_at_the_overflow(tools: Tools, sanitized: dict[str, str], adapter: str) -> None:
    report = await stopped(tools, adapter, sanitized["undefined"])
    where(report, "undefined.c", "/* overflows */")
    exception = report["exception"]
    assert exception["type"] == "UndefinedBehaviorSanitizer: signed integer overflow", exception
    assert "2147483647 + 1 cannot be represented in type 'int'" in exception["message"], exception
    await tools("debug_terminate")


@BOTH
async def test_data_race_stops_at_the_racing_line_with_both_accesses(tools: Tools, sanitized: dict[str, str],
                                                                    adapter: str) -> None:
    report = await stopped(tools, adapter, sanitized["race"])
    where(report, "race.c", "/* races */")
    exception = report["exception"]
    assert exception["type"] == "ThreadSanitizer: data race", exception
    assert "Location is global 'counter'" in exception["message"], exception
    details = " ".join(exception["details"])
    assert "Previous write of size 4" in details and details.count("race.c:") >= 2, details
    await tools("debug_terminate")
