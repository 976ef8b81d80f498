"""Which packages a test run lets out of the blackbox: those the user's scripts import (the assertion library a test
uses, whatever its name), read from each script once, the test runners' own and Node's modules left hidden."""

from __future__ import annotations

import re
from pathlib import Path

from polydbg.backends.node import failures


def test_the_packages_a_users_script_imports_are_let_out_of_the_blackbox(tmp_path: Path) -> None:
    test = tmp_path / "cart.test.ts"
    test.write_text("""import { describe, it } from "vitest";
import should from 'should';
import "./setup.js";
import '@acme/test-helpers/register';
const assume = require('assume'), fs = require("node:fs");
const name = await __vi_ssr_import__("fn.name");
export { deep } from "deep-eql/lib";
const later = () => import('unexpected');
const { expect } = require("chai");  // listed already
""")
    imports = failures.Imports()
    assert imports.read(str(test)) and not imports.read(str(test))  # one read a script
    assert imports.names == {"should", "@acme/test-helpers", "assume", "fn.name", "deep-eql", "unexpected"}
    node, dependencies = imports.blackbox()
    assert node == failures.BLACKBOX[0]
    hidden = re.compile(dependencies)  # the pattern V8 is given (the same in Python's syntax here)
    for shown in ("assume/index.js", "@acme/test-helpers/index.js", "fn.name/index.js", "chai/lib/chai.js",
                  "x/node_modules/should/cjs/should.js"):
        assert not hidden.search(f"file:///p/node_modules/{shown}"), shown
    for kept in ("vitest/dist/index.js", "mocha/lib/runner.js", "fnxname/index.js", "assume-x/index.js"):
        assert hidden.search(f"file:///p/node_modules/{kept}"), kept


def test_a_script_that_cannot_be_read_or_imports_nothing_new_changes_nothing(tmp_path: Path) -> None:
    imports = failures.Imports()
    assert not imports.read(str(tmp_path / "missing.js"))
    (tmp_path / "a.js").write_text("const chai = require('chai'); const m = require('mocha'); require('./b');")
    assert not imports.read(str(tmp_path / "a.js"))
    assert imports.blackbox() == failures.BLACKBOX
