"""Rust tests read by name and by their ends: libtest's ``test result:`` line as verdicts, a binary's listing, and
the names refused before cargo runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg import testing
from polydbg.errors import UsageError
from polydbg.testing import rust

pytestmark = pytest.mark.anyio

FAILED_RUN = """
running 1 test
thread 'tests::bulk' (24199) panicked at src/lib.rs:31:9:
assertion `left == right` failed
  left: 10.0
 right: 9.0
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
test tests::bulk ... FAILED

test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 2 filtered out; finished in 0.25s
"""


def test_libtest_runs_read_as_verdicts() -> None:
    failed = rust.verdict(101, FAILED_RUN)
    assert failed.outcome == "failed", failed
    assert failed.summary == ("panicked at src/lib.rs:31:9: assertion `left == right` failed left: 10.0 right: 9.0 "
                              "(thread 'tests::bulk'); test result: FAILED. 0 passed; 1 failed; 0 ignored; "
                              "0 measured; 2 filtered out; finished in 0.25s")
    passed = rust.verdict(0, "test a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; "
                             "2 filtered out; finished in 0.00s\n")
    assert passed.outcome == "passed" and (passed.summary or "").startswith("test result: ok. 1 passed"), passed
    assert rust.verdict(0, "test result: ok. 0 passed; 0 failed; 1 ignored; 0 measured").outcome == "passed"
    nothing = rust.verdict(0, "running 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; "
                              "3 filtered out\n")
    assert nothing.outcome == "not found", nothing
    assert rust.verdict(None, "Killed").outcome == "error"


def test_a_binarys_listing_is_its_tests() -> None:
    listing = "tests::bulk: test\ntests::single: test\nbench_x: benchmark\n\n2 tests, 1 benchmark\n"
    assert rust._LISTED.findall(listing) == ["tests::bulk", "tests::single"]


async def test_names_refused_before_cargo_runs(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="is not a cargo test name"):
        await rust.plan("tests::bulk discount", str(tmp_path), None)
    with pytest.raises(UsageError, match=r"no Cargo\.toml in"):
        await rust.plan("tests::bulk", str(tmp_path), None)
    (tmp_path / "Cargo.toml").write_text("[package]\n")
    (tmp_path / "src").mkdir()
    assert testing.language_of("tests::bulk", str(tmp_path / "src"), None) == "rust"  # inside the package
    assert testing.language_of("tests/parse.rs::empty", str(tmp_path), None) == "rust"
