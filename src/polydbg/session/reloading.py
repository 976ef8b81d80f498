"""Edited source put into the running program: ``debug_continue(reload=true)`` reloads first, then runs.

What was replaced (or refused: then nothing changed and nothing moved) is said in the note of the stop the run
reaches, so one call shows the fix at work. The backend contract is ``backends/timecontrol.py``.
"""

from __future__ import annotations

from polydbg.backends.timecontrol import Reloaded
from polydbg.session.core import SessionCore
from polydbg.session.inspection import Inspector
from polydbg.session.model import State


async def reload(core: SessionCore, inspector: Inspector, thread_id: int | None) -> str:
    """Put the edited files into the running program (the caller holds the session's lock); the note saying what
    changed. A refusal (``ReloadRefused``) propagates: nothing changed, nothing moved."""
    backend = core.backend
    thread = None
    if core.life.state == State.stopped:
        thread = await inspector.thread_of(core.life.stopped_scope(), thread_id)
    return reload_note(await core.call(backend.reload(thread)))


def reload_note(done: Reloaded) -> str:
    if not done.replaced:
        text = "reload: no source file was edited since the program loaded it (or since the last reload)"
    else:
        text = "reloaded " + "; ".join(done.replaced)
        if done.reentered:
            text += f"; re-entered {done.reentered}: the new code ran from its start"
    return "; ".join((text, *done.notes))
