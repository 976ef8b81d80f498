"""Edited source put into the running program: ``debug_continue(reload=true)`` reloads first, then runs.

What was replaced (or refused: then nothing changed and nothing moved) is said in the note of the stop the run
reaches, so one call shows the fix at work. The backend contract is ``backends/timecontrol.py``.
"""

from __future__ import annotations

from polydbg.backends.timecontrol import Reloaded, RestartNeeded
from polydbg.errors import UsageError
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
    try:
        done = await core.call(backend.reload(thread))
    except RestartNeeded as exc:
        if core.build is not None:
            how = f"debug_restart runs the launch's build ({core.build[0]}) again, then the program"
        elif exc.rebuilds:
            how = "debug_restart builds it again and runs it"
        else:
            how = ("debug_restart runs the program again from its files; launch it with build=\"…\" (the command that "
                   "compiles it) so that debug_restart rebuilds it first")
        raise UsageError(f"{exc}: nothing was changed. {how}, with the breakpoints kept") from exc
    return reload_note(done)


NOTE_MAX = 1500  # characters: a reload of a whole package names every file and function, and the stop comes after


def reload_note(done: Reloaded) -> str:
    """What a reload did, bounded like every answer (cut at a part's end, saying how much more there was)."""
    if not done.replaced:
        text = "reload: no source file was edited since the program loaded it (or since the last reload)"
    else:
        text = "reloaded " + "; ".join(done.replaced)
        if done.reentered:
            text += f"; re-entered {done.reentered}: the new code runs from its start"
    note = "; ".join((text, *done.notes))
    if len(note) <= NOTE_MAX:
        return note
    kept = note[:NOTE_MAX].rpartition("; ")[0] or note[:NOTE_MAX]
    return f"{kept}; … and {len(note) - len(kept):,} characters more of what was reloaded (all of it was)"
