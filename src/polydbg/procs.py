"""Child processes that cannot outlive polydbg.

Every debugger starts in its own process group with PR_SET_PDEATHSIG=SIGKILL, so it dies with the
server even when the server is SIGKILLed; on terminate the whole group (and any debuggee group the
debugger reported) is signalled, TERM first, then KILL. A registry of live groups lets the CLI kill
everything on SIGTERM/SIGINT/stdin EOF. ``DebuggerProcess`` is the one owner of a debugger process
every backend uses: spawn, stderr tail, exit cause, the debuggee's group, idempotent end.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import errno
import fcntl
import logging
import os
import re
import shutil
import signal
import struct
import sys
import tempfile
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import NamedTuple

from polydbg import warm
from polydbg.errors import EnvironmentProblem
from polydbg.guard import GUARD

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
DEBUGGEE_GONE_GRACE_S = 1.0  # time a debugger has to report its program's exit before polydbg says it died
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
_live_groups: set[int] = set()
_warm: warm.Pool | None = None  # while a server runs (warm_guards): guards started ahead of need
_TRACEBACK = "Traceback (most recent call last):"
_FRAME_LINE = re.compile(r'^\s*File "')


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def spawn(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                stdin: int | None = asyncio.subprocess.PIPE, stdout: int | None = asyncio.subprocess.PIPE,
                stderr: int | None = asyncio.subprocess.PIPE, guarded: bool = False) -> asyncio.subprocess.Process:
    """Start a process in a new process group that dies with polydbg.

    The parent-death signal is set by ``setpriv --pdeathsig`` where util-linux has it: a ``preexec_fn``
    forces Python to fork instead of vfork, which costs ~4 ms per spawn (a launch spawns one to three).
    ``guarded`` runs it under ``polydbg.guard`` (a debugger: what it starts must not outlive polydbg
    either); the returned process is then the guard's, whose exit status is the debugger's. Under
    ``warm_guards`` that guard is one started ahead of need when one fits (``polydbg.warm``).
    """
    command = list(argv)
    preexec = None
    if guarded:
        if shutil.which(command[0]) is None:
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
        taken = _warm.take((stdin, stdout, stderr), command, env, cwd) if _warm is not None else None
        if taken is not None:
            return taken
        command = [sys.executable, "-S", "-c", GUARD, *command]
    elif _SETPRIV is not None:
        if shutil.which(command[0]) is None:  # else setpriv would report it as an exit, not an OSError
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
        command = [_SETPRIV, "--pdeathsig", "KILL", "--", *command]
    else:
        preexec = _die_with_parent
    process = await asyncio.create_subprocess_exec(
        *command, env=dict(env) if env is not None else None, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=True, preexec_fn=preexec, limit=256 * 1024,
    )
    _live_groups.add(process.pid)
    return process


@contextlib.asynccontextmanager
async def warm_guards() -> AsyncIterator[warm.Pool]:
    """Keep guards started ahead of need while this runs (a server's lifespan; nested ones share them), and end
    every one nobody took when the last one ends."""
    global _warm
    if _warm is None or _warm.loop is not asyncio.get_running_loop():
        _warm = warm.Pool(track_group, forget_group)
    pool = _warm
    pool.users += 1
    try:
        yield pool
    finally:
        pool.users -= 1
        if pool.users == 0:
            if _warm is pool:
                _warm = None
            await pool.close()


def track_group(pgid: int) -> None:
    """Remember a process group that polydbg must kill on exit (e.g. a debuggee the adapter spawned)."""
    _live_groups.add(pgid)


def forget_group(pgid: int) -> None:
    """A group that ended on its own (a finished build) needs no killing at exit."""
    _live_groups.discard(pgid)


def signal_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        _live_groups.discard(pgid)
        return False
    except PermissionError:
        return False


class ProcStat(NamedTuple):
    """A live (non-zombie) process as /proc/PID/stat describes it."""

    pid: int
    ppid: int
    pgrp: int
    name: str
    start_time: bytes  # clock ticks after boot: with the pid, a process's identity


def read_stat(pid: int | str) -> ProcStat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    head, _, tail = raw.rpartition(b")")
    fields = tail.split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return ProcStat(int(pid), int(fields[1]), int(fields[2]), head.partition(b"(")[2].decode(errors="replace"),
                    fields[19])


def thread_states(pid: int) -> set[str]:
    """The states of a process's threads as /proc shows them (``R`` running, ``S`` sleeping, ``T`` stopped
    by a signal, ``t`` stopped by its tracer …); empty when it is gone."""
    states: set[str] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return states
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat", "rb") as handle:
                fields = handle.read().rpartition(b")")[2].split()
        except OSError:
            continue
        if fields:
            states.add(fields[0].decode())
    return states


def threads_all_exited(pid: int) -> bool:
    """Every thread of ``pid`` has exited, or the process is gone. A traced program killed while its debugger
    holds it stopped stays a set of zombie threads until the debugger next waits on it (delve: when it resumes
    the program); a pidfd counts it ended only once they are reaped, so this is how such an end is seen."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return True
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/stat", "rb") as handle:
                state = handle.read().rpartition(b")")[2].split()[:1]
        except OSError:
            continue  # this thread is gone
        if state not in ([b"Z"], [b"X"]):
            return False
    return True


class ProgramEnd(NamedTuple):
    """How a process ended, in the kernel's words (its wait status): the code it exited with, or the signal
    that killed it."""

    code: int | None
    signal: int | None

    @classmethod
    def of(cls, status: int) -> ProgramEnd:
        if os.WIFSIGNALED(status):
            return cls(None, os.WTERMSIG(status))
        return cls(os.WEXITSTATUS(status), None)

    def __str__(self) -> str:
        if self.signal is None:
            return f"exited with code {self.code}"
        try:
            return f"killed by signal {self.signal} ({signal.Signals(self.signal).name})"
        except ValueError:
            return f"killed by signal {self.signal}"


_PIDFD_GET_INFO = 0xC040FF0B  # _IOWR(0xFF, 11, struct pidfd_info): Linux 6.15 and later
_PIDFD_INFO_EXIT = 1 << 3  # asks for (and, in the answer, says there is) the exit status of a reaped process
_PIDFD_INFO_SIZE = 64
_PIDFD_EXIT_CODE_AT = 60  # the offset of pidfd_info's exit_code
_STAT_EXIT_CODE = 49  # /proc/PID/stat's 52nd field (exit_code, Linux 3.5), counted after the command's ")"


def _reaped_status(pidfd: int) -> int | None:
    """The wait status of a reaped process, from its pidfd (None: not reaped yet, or a kernel before 6.15)."""
    info = bytearray(_PIDFD_INFO_SIZE)
    struct.pack_into("Q", info, 0, _PIDFD_INFO_EXIT)
    try:
        fcntl.ioctl(pidfd, _PIDFD_GET_INFO, info)
    except OSError:
        return None
    if not struct.unpack_from("Q", info, 0)[0] & _PIDFD_INFO_EXIT:
        return None
    return int(struct.unpack_from("i", info, _PIDFD_EXIT_CODE_AT)[0])


def _zombie_status(pid: int) -> int | None:
    """The wait status of a process that has ended but is not reaped yet (a zombie, every thread exited)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rpartition(b")")[2].split()
    except OSError:
        return None
    if len(fields) <= _STAT_EXIT_CODE or fields[0] != b"Z" or not threads_all_exited(pid):
        return None
    return int(fields[_STAT_EXIT_CODE])


class ProgramWatch:
    """A process's pidfd, held while it runs so that how it ended can be told afterwards, whoever reaps it: a
    debugger's report of an exit can be wrong (debugpy's launcher says 247 for SIGKILL, lldb -1, and a program
    killed while stopped is an exit some debuggers never report). Opening it needs the process alive (or a
    zombie); reading it costs a syscall or two, no polling."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = None
        with contextlib.suppress(OSError, AttributeError):
            self.fd = os.pidfd_open(pid)

    def ended(self) -> ProgramEnd | None:
        """How the process ended, once it has and the kernel can say (reaped: Linux 6.15's pidfd exit
        information; not yet: its zombie's /proc entry); None while it runs, or when that is not known."""
        if self.fd is None:
            return None
        status = _reaped_status(self.fd)
        if status is None:
            status = _zombie_status(self.pid)
        return ProgramEnd.of(status) if status is not None else None

    def close(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def live_processes() -> list[ProcStat]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [stat for entry in entries if entry.isdigit() and (stat := read_stat(entry)) is not None]


def descendants(root: int) -> list[ProcStat]:
    """Live descendants of ``root`` (children, their children, …)."""
    processes = live_processes()
    found: dict[int, ProcStat] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for stat in processes:
            if stat.ppid == parent and stat.pid not in found:
                found[stat.pid] = stat
                frontier.append(stat.pid)
    return list(found.values())


def group_alive(pgid: int) -> bool:
    """True while a process of the group is running. Zombies do not count: in containers PID 1 often
    never reaps the orphans it inherits, and ``killpg(pgid, 0)`` would call them alive forever."""
    if not signal_group(pgid, 0):
        return False
    return any(stat.pgrp == pgid for stat in live_processes())


async def kill_group(pgid: int, grace_s: float = 1.0) -> None:
    """TERM the group, wait up to ``grace_s`` for it to go, then KILL it."""
    if not signal_group(pgid, signal.SIGTERM):
        return
    deadline = asyncio.get_running_loop().time() + grace_s
    delay = 0.005
    while asyncio.get_running_loop().time() < deadline:
        if not group_alive(pgid):
            _live_groups.discard(pgid)
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)
    signal_group(pgid, signal.SIGKILL)
    _live_groups.discard(pgid)


def kill_all_now() -> None:
    """Synchronously KILL every tracked group (signal handlers, atexit)."""
    for pgid in list(_live_groups):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _live_groups.clear()


async def reap(process: asyncio.subprocess.Process, timeout_s: float = 2.0) -> int | None:
    """Wait for a process to exit, killing its group if it does not."""
    try:
        return await asyncio.wait_for(process.wait(), timeout_s)
    except asyncio.TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            return await asyncio.wait_for(process.wait(), 1.0)
    return None


def _exit_text(code: int | None) -> str:
    if code is None:
        return ""
    if code < 0:
        try:
            return f" (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f" (killed by signal {-code})"
    return f" (exit code {code})"


class DebuggerProcess:
    """One debugger process (an adapter, gdb, dlv) and the debuggee group it reports.

    Spawned in its own process group with the death signal; stderr is drained into a short tail
    that errors quote; ``exit_cause`` explains an unexpected exit; ``track_debuggee`` adopts the
    debuggee's process group but never one polydbg did not create for it (its own, the debugger's,
    or pid 0's); ``end`` is idempotent: debuggee group, debugger group, reap.
    """

    def __init__(self, name: str, tail_lines: int = 20) -> None:
        self.name = name
        self.process: asyncio.subprocess.Process | None = None
        self.debuggee_pid: int | None = None
        self.debuggee_pgid: int | None = None
        self.watched_pid: int | None = None  # the debuggee whose end is watched (attached ones too)
        self._debugger_pid: int | None = None
        self._tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self._traceback_indent: int | None = None  # inside a Python traceback on stderr: its header's indent
        self._exception: str | None = None  # the line that ended the last traceback: what was raised
        self._drain: asyncio.Task[None] | None = None
        self._ended: asyncio.Future[None] | None = None
        self.on_stderr: Callable[[str], None] | None = None
        self._watch: ProgramWatch | None = None  # the program's pidfd (watch_debuggee)
        self._files: list[str] = []
        self._gone_report: asyncio.TimerHandle | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def start(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                    stdin: int | None = asyncio.subprocess.PIPE, stdout: int | None = asyncio.subprocess.PIPE,
                    drain_stderr: bool = True) -> asyncio.subprocess.Process:
        """Spawn the debugger; a missing or unrunnable executable is an ``EnvironmentProblem``."""
        try:
            process = await spawn(argv, env=env, cwd=cwd, stdin=stdin, stdout=stdout,
                                  stderr=asyncio.subprocess.PIPE, guarded=True)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot start {self.name} ({argv[0]}): {exc}") from exc
        self.process = process
        if drain_stderr and process.stderr is not None:
            self._drain = asyncio.get_running_loop().create_task(self._drain_stderr(process.stderr))
        return process

    async def _drain_stderr(self, reader: asyncio.StreamReader) -> None:
        while True:
            line = await reader.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace")
            log.debug("%s stderr: %s", self.name, text.rstrip())
            self.remember(text)
            if self.on_stderr is not None:
                self.on_stderr(text)

    def remember(self, text: str) -> None:
        """Keep a line of the debugger's own output for error messages."""
        self._tail.append(text)
        for line in text.splitlines():
            self._follow_traceback(line)

    def _follow_traceback(self, line: str) -> None:
        """Note what a Python traceback on stderr raised: its last line, which a tail of the output misses when
        more follows (debugpy logs the stack where it logged the error after it, ~20 lines)."""
        indent = len(line) - len(line.lstrip())
        if line.strip() == _TRACEBACK:
            self._traceback_indent = indent
        elif self._traceback_indent is not None and line.strip() and indent <= self._traceback_indent \
                and not _FRAME_LINE.match(line):
            self._exception = line.strip()
            self._traceback_indent = None

    def stderr_hint(self) -> str:
        """The end of the debugger's stderr for an error message, always with what a traceback there raised."""
        tail = "".join(self._tail).strip()[-600:]
        if self._exception is not None and self._exception not in tail:
            tail = f"{self._exception} (a traceback's last line) … {tail[-400:]}"
        return f"; {self.name} stderr: {tail}" if tail else ""

    async def exit_cause(self, wait_s: float = 1.0) -> str:
        """Why the debugger went away, for a session that did not ask it to."""
        code = None
        if self.process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                code = await asyncio.wait_for(self.process.wait(), wait_s)
        return f"{self.name} exited unexpectedly{_exit_text(code)}{self.stderr_hint()}"

    def debugger_pid(self) -> int | None:
        """The debugger's own pid: the guard's first child (the process polydbg talks to)."""
        guard = self.pid
        if guard is None:
            return None
        if self._debugger_pid is None:
            try:
                with open(f"/proc/{guard}/task/{guard}/children", "rb") as handle:
                    children = [int(pid) for pid in handle.read().split()]
            except OSError:  # a kernel without CONFIG_PROC_CHILDREN
                children = sorted(stat.pid for stat in live_processes() if stat.ppid == guard)
            self._debugger_pid = children[0] if children else None
        return self._debugger_pid

    def wake(self) -> bool:
        """Continue the debugger if a signal stopped it (SIGSTOP, a terminal's stop): stopped, it can neither
        detach nor kill the program, and ending it would release the program with its breakpoints still in
        its code. Whether it was stopped."""
        pid = self.debugger_pid()
        states = thread_states(pid) if pid is not None else set()
        if pid is None or not states:
            return False
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGCONT)  # also cancels a stop signal still on its way (harmless otherwise)
        if "T" in states:
            log.warning("%s (pid %d) was stopped by a signal: continued to end the session", self.name, pid)
        return "T" in states

    def held_by_signal(self) -> str | None:
        """Why the debugger answers nothing, when a signal holds it (read from /proc): its own process stopped, or
        the program's (where the debugger runs inside it, as debugpy's pydevd does); None when neither is."""
        pid = self.debugger_pid()
        if pid is not None and thread_states(pid) == {"T"}:
            return (f"its process (pid {pid}) is stopped by a signal (SIGSTOP, or a terminal's stop) and answers "
                    f"nothing until it gets SIGCONT (kill -CONT {pid})")
        debuggee = self.debuggee_pid or self.watched_pid
        if debuggee is not None and thread_states(debuggee) == {"T"}:  # with a ptrace debugger it reads "t"
            return (f"the program (pid {debuggee}) is stopped by a signal (SIGSTOP, or a terminal's stop) and runs "
                    f"nothing, the debugger's part in it neither, until it gets SIGCONT (kill -CONT {debuggee})")
        return None

    def not_answering(self) -> str | None:
        """Why the debugger cannot be busy evaluating, read from /proc: a signal holds it (``held_by_signal``), or
        the debuggee has every thread held by its tracer (so it runs no expression either); None when nothing
        says so."""
        held = self.held_by_signal()
        if held is not None:
            return held
        debuggee = self.debuggee_pid or self.watched_pid
        if debuggee is not None and thread_states(debuggee) == {"t"}:
            return f"the program runs no expression (pid {debuggee}: every thread of it is stopped)"
        return None

    def track_debuggee(self, pid: int) -> int | None:
        """Adopt the debuggee's process group (killed on end and at exit); None when it is not one
        polydbg may signal: pid 0 or less, polydbg's own group, or the debugger's group."""
        if pid <= 0:
            return None
        self.debuggee_pid = pid
        try:
            pgid = os.getpgid(pid)
        except OSError:
            return None
        if pgid in (os.getpgid(0), self.pid):
            return None
        self.debuggee_pgid = pgid
        track_group(pgid)
        return pgid

    def input_file(self, text: str) -> str:
        """A private (0600) file holding ``text``, for the program's stdin; deleted when this ends."""
        fd, path = tempfile.mkstemp(prefix="polydbg-stdin-")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        self._files.append(path)
        return path

    def watch_debuggee(self, pid: int, on_gone: Callable[[str], None]) -> None:
        """Tell ``on_gone(cause)`` when the debuggee ends and the debugger has not said so itself.

        A program killed from outside while stopped goes unnoticed by gdb and delve (they still say
        "stopped"); a pidfd becomes readable when the process ends, whoever ended it — no polling.
        The debugger gets ``DEBUGGEE_GONE_GRACE_S`` to report a normal exit first (``on_gone`` is
        expected to ignore a report after one). The pidfd is kept until the end: ``program_end`` reads
        from it how the program ended."""
        if pid <= 0 or self._watch is not None:
            return
        watch = ProgramWatch(pid)
        if watch.fd is None:
            return
        loop = asyncio.get_running_loop()
        self._watch = watch
        self.watched_pid = pid

        def ended() -> None:
            self._stop_watching()
            self._gone_report = loop.call_later(DEBUGGEE_GONE_GRACE_S, lambda: on_gone(self._gone_cause(watch)))

        loop.add_reader(watch.fd, ended)

    def _gone_cause(self, watch: ProgramWatch) -> str:
        end = watch.ended()
        if end is not None and end.signal is not None:
            return f"the program (pid {watch.pid}) was {end}; {self.name} did not report its end"
        held = "a process it started still holds its output open (that process ends with this session)"
        if end is not None:
            return f"the program (pid {watch.pid}) {end} but {self.name} did not report it: perhaps {held}"
        return (f"the program (pid {watch.pid}) has ended but {self.name} did not report it: it was killed from "
                f"outside, or {held}")

    def program_end(self) -> ProgramEnd | None:
        """How the watched program ended, once it has and the kernel can say (``ProgramWatch.ended``)."""
        return self._watch.ended() if self._watch is not None else None

    def _stop_watching(self) -> None:
        if self._watch is not None and self._watch.fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._watch.fd)

    async def end(self, kill_debuggee: bool = True, grace_s: float = 0.5) -> None:
        """Kill the debuggee's group (when asked) and the debugger's, and reap; idempotent."""
        if self._ended is None:
            self._ended = asyncio.ensure_future(self._end(kill_debuggee, grace_s))
        await asyncio.shield(self._ended)

    async def _end(self, kill_debuggee: bool, grace_s: float) -> None:
        self._stop_watching()
        if self._watch is not None:
            self._watch.close()
        for path in self._files:
            with contextlib.suppress(OSError):
                os.unlink(path)
        if not kill_debuggee and self.process is not None and self.process.returncode is None:
            with contextlib.suppress(OSError):
                os.kill(self.process.pid, signal.SIGUSR2)  # the guard leaves the detached program running
        if self._gone_report is not None:
            self._gone_report.cancel()
        if kill_debuggee and self.debuggee_pgid is not None:
            await kill_group(self.debuggee_pgid, grace_s=grace_s)
        if self.process is not None:
            await kill_group(self.process.pid, grace_s=grace_s)
            await reap(self.process, 1.0)
        if self._drain is not None:
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(self._drain, 0.5)
            self._drain.cancel()
