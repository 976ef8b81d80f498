"""rr, the record-and-replay debugger, for ``debug_launch(record="rr")`` and ``polydbg doctor``: whether it can
record on this machine (rr's own reason when it cannot), recording a program to its end, and serving the trace
to gdb, which runs forward and backward through it by rr's remote protocol.

UNTESTED IN CI. rr records with the CPU's hardware performance counters, which it needs
``kernel.perf_event_paranoid`` ≤ 1 to open, and it knows only the CPU models it was built for: on a VM without
counters (this project's CI) or a CPU newer than the rr ("Intel CPU type 0xc06f0 unknown", rr 5.6 here) it can
neither record nor replay. So whether it can comes from a real ``rr record /bin/true``, not from the settings, and
only the pieces that need no counters are tested here: the command lines, the recognition of a trace directory,
the reading of rr's answers (``rr replay``'s "Launch gdb with" line, ``rr ps``) and the gdb commands that connect to
the replay. Written against rr 5.6's sources (RecordCommand.cc, ReplayCommand.cc, GdbServer.cc, PsCommand.cc).

How a session goes:

- ``rr record`` runs the program to its end (its output is the session's output; a program still running after
  the launch's timeout is ended by SIGTERM, which rr turns into a finished trace). The trace goes under
  ``_RR_TRACE_DIR`` when the launch (or polydbg) has one, and is kept; else under a directory of polydbg's own,
  removed when the session ends. An existing trace is replayed as it is: the directory holding rr's ``version``
  file, or one holding a ``latest-trace`` link to it.
- ``rr replay -s 0 -h 127.0.0.1 -q <trace>`` replays to the program's exec, picks a free port and says on stderr
  how gdb connects ("Launch gdb with … 'target extended-remote 127.0.0.1:PORT' /path/to/exe"); ``-q`` keeps the
  recorded output from being written a second time. gdb connects the way rr launches it (``-l 10000``: rr can take
  long to answer; ``set sysroot /``: the libraries are read from disk, not through the connection).
- The end of the trace comes to gdb as a SIGKILL stop (rr's "synthetic SIGKILL", so that the program can still be
  run back from there); there is no live run after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from polydbg import procs
from polydbg.backends.base import LaunchSpec
from polydbg.backends.gdb.commands import console, gdb_arg
from polydbg.errors import EnvironmentProblem, UsageError

PROBE_S = 10.0  # rr record /bin/true takes well under a second where it works
SERVE_S = 60.0  # rr replays up to the program's exec before it listens: seconds for a big trace
STOP_RECORDING_S = 10.0  # rr ends a tracee it was sent SIGTERM for within 1 + 5 s (RecordCommand.cc)
PARANOID = "/proc/sys/kernel/perf_event_paranoid"
INSTEAD = "debug_launch(…, record=true) records with gdb instead (slower, but needs no performance counters)"
TRACE_DIR_VARIABLE = "_RR_TRACE_DIR"
LATEST = "latest-trace"
_LAUNCH_LINE = re.compile(r"'target extended-remote ([^':\s]+):(\d+)'\s+(.+?)\s*$", re.MULTILINE)
_PS_ROW = re.compile(r"^(\d+)\t--\t(\S+)\t(.*)$", re.MULTILINE)  # the first process: pid, no parent, exit, command
TAIL_LINES = 20
Output = Callable[[str, str], None]  # (category, text): the program's output, as the backend's listener takes it


def status() -> tuple[bool, str]:
    """Whether rr records here, and what it said (blocking: up to ``PROBE_S``)."""
    rr = shutil.which("rr")
    if rr is None:
        return False, "rr is not installed (apt-get install rr)"
    try:
        with open(PARANOID, encoding="ascii") as handle:
            paranoid = f"kernel.perf_event_paranoid = {handle.read().strip()}"
    except OSError:
        paranoid = "kernel.perf_event_paranoid unreadable"
    with tempfile.TemporaryDirectory(prefix="polydbg-rr-") as traces:
        try:
            probe = subprocess.run([rr, "record", "/bin/true"], env={**os.environ, TRACE_DIR_VARIABLE: traces},
                                   capture_output=True, text=True, timeout=PROBE_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, f"rr record /bin/true did not finish within {PROBE_S:g} s ({paranoid})"
        except OSError as exc:
            return False, f"rr could not run: {exc.strerror} ({paranoid})"
    if probe.returncode == 0:
        return True, f"rr records here ({paranoid})"
    return False, (f"rr cannot record here: {last_words(probe.stderr or probe.stdout, probe.returncode)} ({paranoid};"
                   " rr needs hardware performance counters, perf_event_paranoid ≤ 1 and a CPU it knows)")


def refusal(said: str) -> str:
    """What ``debug_launch(record="rr")`` answers where rr cannot record (nor replay: it needs the same counters)."""
    return f"{said}; {INSTEAD}"


def last_words(text: str, code: int | None) -> str:
    """rr's last line: its reason (rr ends with it after any warnings)."""
    said = [line.strip() for line in text.splitlines() if line.strip()]
    return said[-1] if said else f"exit status {code}"


# -- what can be checked without performance counters ---------------------------------------------------------

def trace_of(path: str) -> str | None:
    """The rr trace ``path`` names — a trace directory (rr's ``version`` file), or one holding ``latest-trace``
    — else None. A trace whose recording never finished (``incomplete`` instead of ``version``) is refused."""
    if not os.path.isdir(path):
        return None
    if os.path.isfile(os.path.join(path, "version")):
        return os.path.realpath(path)
    if os.path.exists(os.path.join(path, "incomplete")):
        raise UsageError(f"{path} is an rr trace whose recording never finished (rr left its 'incomplete' file): rr "
                         "cannot replay it; record the program again with debug_launch(program=…, record=\"rr\")")
    latest = os.path.join(path, LATEST)
    if os.path.islink(latest) or os.path.isdir(latest):
        return trace_of(os.path.realpath(latest))
    return None


def record_argv(rr: str, program: str, args: tuple[str, ...]) -> list[str]:
    return [rr, "record", "--", program, *args]


def replay_argv(rr: str, trace: str) -> list[str]:
    """rr's gdb server on a loopback port rr picks (``-s 0``: from its pid up), the recorded output not repeated."""
    return [rr, "replay", "--dbgport=0", "--dbghost=127.0.0.1", "--no-redirect-output", trace]


@dataclass(frozen=True)
class Served:
    """Where rr's gdb server listens, and the executable it replays (gdb reads its symbols)."""

    host: str
    port: int
    exe: str


def served_by(stderr: str) -> Served | None:
    """rr replay's "Launch gdb with" line (GdbServer.cc's print_debugger_launch_command), read."""
    match = _LAUNCH_LINE.search(stderr)
    if match is None:
        return None
    return Served(match.group(1), int(match.group(2)), match.group(3))


def first_process(ps: str) -> tuple[str, str] | None:
    """``rr ps``'s row of the recorded program (no parent): its exit ("0", "-9", "none") and command line."""
    match = _PS_ROW.search(ps)
    return (match.group(2), match.group(3)) if match else None


def gdb_commands(served: Served, program: str | None) -> list[str]:
    """What connects gdb to rr's replay, as rr itself launches gdb: no reply timeout (rr can take long), the
    libraries read from this machine, the program's symbols; then the connection (the program at its exec)."""
    return [console("set remotetimeout 10000"), "-gdb-set sysroot /",
            f"-file-exec-and-symbols {gdb_arg(program or served.exe)}",
            f"-target-select extended-remote {served.host}:{served.port}"]


def ending(exit_text: str) -> str:
    """The note of the stop at the end of the trace."""
    return (f"the end of the rr trace: the recorded run ends here ({exit_text}); there is no live run after it. "
            "debug_continue(reverse=true) and debug_step(reverse=true) run back through the recording; "
            "debug_restart records the program again")


def exit_text(code: str | int | None) -> str:
    if code is None or code == "none":
        return "the program had not exited when the recording ended"
    number = int(code)
    if number < 0:
        return f"the program was killed by signal {-number}"
    return f"the program exited with code {number}"


# -- running rr (UNTESTED IN CI) ---------------------------------------------------------------------------------

async def prepare(spec: LaunchSpec, output: Output, timeout_s: float) -> tuple[RrReplay, list[str]]:
    """Everything before gdb starts: whether rr runs here, the trace (recorded now, or the one given as program),
    rr's replay serving it. Returns the replay and the commands that connect gdb to it."""
    assert spec.program is not None
    trace = trace_of(spec.program)
    recordable, said = await asyncio.to_thread(status)
    rr = shutil.which("rr")
    if rr is None or not recordable:
        raise UsageError(refusal(said))
    replay = RrReplay(rr)
    try:
        if trace is not None:
            await replay.given(trace)
        else:
            await replay.record(spec, output, timeout_s)
        served = await replay.serve(timeout_s)
    except BaseException:
        await replay.close()
        raise
    return replay, gdb_commands(served, None if trace is not None else spec.program)


class RrReplay:
    """One session's rr: the recording it made (or the trace it was given) and the replay gdb connects to."""

    def __init__(self, rr: str) -> None:
        self._rr = rr
        self.trace = ""
        self.ending = ending(exit_text(None))
        self._own: str | None = None  # polydbg's directory holding the trace: removed at the end
        self._replay: asyncio.subprocess.Process | None = None
        self._said: deque[str] = deque(maxlen=TAIL_LINES)
        self._draining: asyncio.Task[None] | None = None

    async def record(self, spec: LaunchSpec, output: Output, timeout_s: float) -> None:
        """``rr record`` the program to its end; its output goes to ``output``."""
        assert spec.program is not None
        env = {**os.environ, **dict(spec.env)}
        if not env.get(TRACE_DIR_VARIABLE):
            self._own = env[TRACE_DIR_VARIABLE] = tempfile.mkdtemp(prefix="polydbg-rr-")
        process = await procs.spawn(record_argv(self._rr, spec.program, spec.args), env=env, cwd=spec.cwd,
                                    stdin=asyncio.subprocess.PIPE if spec.stdin is not None else
                                    asyncio.subprocess.DEVNULL)
        if process.stdin is not None:
            process.stdin.write((spec.stdin or "").encode())
            process.stdin.close()
        assert process.stdout is not None and process.stderr is not None
        streams = asyncio.gather(self._relay(process.stdout, "stdout", output),
                                 self._relay(process.stderr, "stderr", output))
        cut = ""
        try:
            await asyncio.wait_for(asyncio.shield(process.wait()), timeout_s)
        except asyncio.TimeoutError:
            cut = f"; it was still running after {timeout_s:g} s, so rr stopped recording it there"
            process.send_signal(signal.SIGTERM)  # rr ends the program and finishes the trace
            await procs.reap(process, STOP_RECORDING_S)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(streams, 1.0)
        procs.forget_group(process.pid)
        trace = trace_of(env[TRACE_DIR_VARIABLE])
        if trace is None:
            raise EnvironmentProblem(f"rr record left no trace in {env[TRACE_DIR_VARIABLE]}: "
                                     f"{last_words(chr(10).join(self._said), process.returncode)}")
        self.trace = trace
        self.ending = ending(exit_text(process.returncode) + cut)

    async def _relay(self, stream: asyncio.StreamReader, category: str, output: Output) -> None:
        while chunk := await stream.read(65536):
            text = chunk.decode(errors="replace")
            if category == "stderr":
                self._said.extend(text.splitlines())
            output(category, text)

    async def given(self, trace: str) -> None:
        """Replay a trace recorded before: how its program ended, from ``rr ps``."""
        self.trace = trace
        ps = await asyncio.create_subprocess_exec(self._rr, "ps", trace, stdout=asyncio.subprocess.PIPE,
                                                  stderr=asyncio.subprocess.DEVNULL)
        try:
            out, _ = await asyncio.wait_for(ps.communicate(), PROBE_S)
        except asyncio.TimeoutError:
            ps.kill()
            await ps.wait()
            return
        row = first_process(out.decode(errors="replace"))
        if row is not None:
            self.ending = ending(exit_text(row[0]))

    async def serve(self, timeout_s: float) -> Served:
        """Start rr's replay and read where its gdb server listens; rr's own words when it fails."""
        self._replay = process = await procs.spawn(replay_argv(self._rr, self.trace), stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.DEVNULL)
        assert process.stderr is not None
        said: list[str] = []

        async def listening() -> Served | None:
            while line := await stderr.readline():
                said.append(line.decode(errors="replace"))
                served = served_by("".join(said))
                if served is not None:
                    return served
            return None
        stderr = process.stderr
        wait_s = max(timeout_s, SERVE_S)
        try:
            served = await asyncio.wait_for(listening(), wait_s)
        except asyncio.TimeoutError:
            served = None
            said.append(f"rr replay did not offer a gdb connection within {wait_s:g} s")
        if served is None:
            raise EnvironmentProblem(f"rr recorded the program but could not replay it: "
                                     f"{last_words(''.join(said), process.returncode)} (trace {self.trace}); {INSTEAD}")
        self._draining = asyncio.get_running_loop().create_task(self._drain(stderr))
        return served

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        while line := await stream.readline():
            self._said.append(line.decode(errors="replace").rstrip())

    async def close(self) -> None:
        """End the replay; remove the trace when it is polydbg's own."""
        if self._draining is not None:
            self._draining.cancel()
        if self._replay is not None:
            await procs.kill_group(self._replay.pid, grace_s=0.5)
            await procs.reap(self._replay, 1.0)
        if self._own is not None:
            shutil.rmtree(self._own, ignore_errors=True)
