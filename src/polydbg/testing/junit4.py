"""JUnit 4's runner for one test: ``JUnitCore`` runs whole classes only (its command line has no method filter), so
polydbg runs a test through a runner class of its own — JUnitCore with a one-method filter and JUnit's own text
listener, so the output reads as JUnitCore's — compiled once per JUnit jar with ``javac`` into a cache directory.

The method filter takes ``method`` and its parameterized runs (``method[0]``, ``method[10 items]``); a name that
matches nothing, or a class that is not on the classpath, exits with ``NOT_FOUND_EXIT`` and says so.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile

from polydbg.backends.kit import timeouts
from polydbg.errors import UsageError
from polydbg.testing.plan import run

CLASS = "polydbg.junit.OneTest"
NOT_FOUND_EXIT = 3
_SOURCE = """\
package polydbg.junit;

import org.junit.internal.TextListener;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.Runner;
import org.junit.runner.manipulation.Filter;
import org.junit.runner.manipulation.NoTestsRemainException;

/** polydbg's runner of one JUnit 4 test: Class#method (and its parameterized runs, method[...]), or a Class. */
public final class OneTest {
    public static void main(String[] args) {
        String name = args[0];
        int hash = name.indexOf('#');
        String className = hash < 0 ? name : name.substring(0, hash);
        Class<?> testClass;
        try {
            testClass = Class.forName(className, false, OneTest.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            System.out.println("polydbg: no test class " + className + " on the classpath (" + e + ")");
            System.exit(3);
            return;
        }
        Runner runner = Request.aClass(testClass).getRunner();
        if (hash >= 0) {
            final String method = name.substring(hash + 1);
            try {
                new Filter() {
                    @Override
                    public boolean shouldRun(Description description) {
                        if (description.isTest()) {
                            String named = description.getMethodName();
                            return named != null && (named.equals(method) || named.startsWith(method + "["));
                        }
                        for (Description child : description.getChildren()) {
                            if (shouldRun(child)) {
                                return true;
                            }
                        }
                        return false;
                    }

                    @Override
                    public String describe() {
                        return "method " + method;
                    }
                }.apply(runner);
            } catch (NoTestsRemainException e) {
                System.out.println("polydbg: no test " + method + " in " + className);
                System.exit(3);
                return;
            }
        }
        JUnitCore core = new JUnitCore();
        core.addListener(new TextListener(System.out));
        Result result = core.run(runner);
        System.exit(result.wasSuccessful() ? 0 : 1);
    }
}
"""


async def runner_classes(javac: str, junit_jar: str) -> str:
    """The directory holding the compiled runner for ``junit_jar`` (compiled on first use, kept for the next)."""
    key = hashlib.sha256(f"{_SOURCE}\0{os.path.realpath(junit_jar)}\0{os.path.realpath(javac)}".encode())
    home = os.path.join(tempfile.gettempdir(), f"polydbg-junit4-{os.getuid()}-{key.hexdigest()[:16]}")
    if os.path.isfile(os.path.join(home, *CLASS.split(".")) + ".class"):
        return home
    work = tempfile.mkdtemp(prefix="polydbg-junit4-")
    try:
        source = os.path.join(work, "OneTest.java")
        with open(source, "w", encoding="utf-8") as handle:
            handle.write(_SOURCE)
        out = os.path.join(work, "classes")
        await run_compiler([javac, "-nowarn", "-cp", junit_jar, "-d", out, source],
                           f"polydbg's JUnit 4 runner (against {junit_jar}: is it JUnit 4.12 or later?)")
        with contextlib.suppress(OSError):  # another polydbg compiled it meanwhile
            os.rename(out, home)
        return home
    finally:
        shutil.rmtree(work, ignore_errors=True)


async def run_compiler(argv: list[str], what: str, cwd: str | None = None, tool: str = "javac") -> None:
    """Run a compiler (``argv``); its errors, or a compile past ``timeouts.COMPILE_S``, are the answer."""
    code, output = await run(argv, cwd, timeouts.COMPILE_S)
    if code is None:
        raise UsageError(f"{tool} did not finish compiling {what} within {timeouts.COMPILE_S:g} s")
    if code != 0:
        raise UsageError(f"{tool} could not compile {what}:\n{output[-2000:]}")
