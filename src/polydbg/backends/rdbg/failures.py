"""Where a Ruby test fails (``debug_launch(test=…)``): the runners' assertion errors caught where they are raised,
and the stop shown in the test's own frame, the framework's frames listed above it.

minitest, test-unit and RSpec fail a test by raising their assertion error inside their own assertion methods
(``assert_equal`` → ``Minitest::Assertions#assert``, RSpec's ``expect(…).to eq`` → ``RSpec::Support``'s failure
notifier) and catch it in their runner, so to rdbg every failure is a caught exception. Under the ``failures``
exception filter (the test plan adds it) each class below is a catch breakpoint (rdbg's ``TracePoint(:raise)``):
the stop comes at the raise, in the framework's code, with the test's frame intact below it. Frames at the top of
that stack that are not the project's (outside the launch's directory, or under its ``vendor/`` or ``.bundle/``)
are hidden: frame 0 is the test's line with its locals, the assertion machinery is listed above it
(``Backend.frames_above``) and the exception (its message: expected and actual) is read from rdbg's ``_raised``
in the real top frame.

``Minitest::Skip`` is a ``Minitest::Assertion`` too: its stop is resumed unseen (rdbg evaluates a catch
breakpoint's condition in the raising frame's binding, where neither ``$!`` nor the exception is in reach, so it
cannot be left out by a condition). test-unit's ``omit``/``pend`` and RSpec's ``skip`` raise other classes.
An assertion error raised again on its way out (test-unit's ``_wrap_assertion`` re-raises it) is the same
object: its second stop is resumed unseen too.

An error the test's code raises (a ``NoMethodError``) is caught by the runner as well, but is no stop here: rdbg
cannot tell at the raise whether the project's code rescues it itself; the verdict says the test errored, and
``break_on_exception`` (``raised`` or the class) stops at it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

FILTER = "failures"
ASSERTIONS = ("Minitest::Assertion", "Test::Unit::AssertionFailedError", "RSpec::Expectations::ExpectationNotMetError",
              "RSpec::Mocks::MockExpectationError")
SKIPS = ("Minitest::Skip",)
# the stop's exception from any frame (rdbg's ``_raised`` is a local of the top frame's only, hidden here)
RAISED = "::DEBUGGER__::ThreadClient.current.instance_variable_get(:@target_frames).first.raised_exception"
IDENTITY = "_raised.__id__"  # in the raising frame: the exception object's, to show a re-raised one once
_THIRD_PARTY = ("vendor", ".bundle")


def skipped(text: object) -> bool:
    """A catch stop (rdbg's text ``#<Class: message> is raised.``) of an exception that skips the test."""
    return isinstance(text, str) and text.startswith(tuple(f"#<{name}:" for name in SKIPS))


def is_project(path: str, root: str) -> bool:
    """A file of the project at ``root``, not a gem's, Ruby's or a bundled dependency's."""
    if not path or path.startswith("<") or not os.path.isabs(path):
        return False
    relative = os.path.relpath(os.path.realpath(path), os.path.realpath(root))
    return not relative.startswith("..") and relative.split(os.sep)[0] not in _THIRD_PARTY


def hidden(frames: Sequence[dict[str, Any]], root: str) -> int:
    """How many frames at the top of a stop's stack (rdbg's, innermost first) are the framework's, above the
    project's first one; 0 when no frame is the project's (nothing of the test's to show instead)."""
    for index, frame in enumerate(frames):
        if is_project(str((frame.get("source") or {}).get("path") or ""), root):
            return index
    return 0
