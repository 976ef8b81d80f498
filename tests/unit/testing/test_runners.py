"""What ``polydbg doctor`` says about the project's test runners: the ecosystems whose markers are in the nearest
project directory, not those of a project further up."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.testing import runners


def test_a_project_nested_in_another_reports_its_own_runners_only(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    (tmp_path / "pyproject.toml").write_text("[project]\nname='outer'\n")
    web = tmp_path / "web"
    (web / "test").mkdir(parents=True)
    (web / "package.json").write_text('{"scripts": {"test": "mocha"}, "devDependencies": {"mocha": "10"}}')
    lines = runners.found(str(web / "test"))
    assert len(lines) == 1 and lines[0].startswith("js/ts   mocha (the project's runner) is not installed: npm "
                                                   f"install in {web}"), lines
    outer = runners.found(str(tmp_path))
    assert len(outer) == 1 and outer[0].startswith("python  ") and "test=\"tests/test_x.py::test_name\"" in outer[0]


def test_go_packages_and_a_directory_without_a_project(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m\n")
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "calc_test.go").write_text("package calc\n")
    lines = runners.found(str(tmp_path))
    assert len(lines) == 1 and "1 package(s) with tests" in lines[0], lines
    assert runners.found("/") == []
