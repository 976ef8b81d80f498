"""How a Ruby program is started under rdbg, and where an ``rdbg --open`` program listens.

A launch runs ``ruby -r <debug gem>/lib/debug/open program args`` — what ``rdbg --open`` execs, without the
``RUBYOPT`` it sets (which every Ruby the program starts would inherit, each opening a debugger) — with
``RUBY_DEBUG_SOCK_PATH`` naming a UNIX socket in a private directory: no port to pick, no race for one, nobody
else on the machine can connect. A project whose Gemfile.lock names ``debug`` runs it through Bundler
(``-r bundler/setup -r debug/open``), so the project's newer gem is the one used (``gems``).

An attach by pid finds the UNIX socket the process listens on from ``/proc`` (its socket inodes in
``/proc/net/unix``), wherever ``RUBY_DEBUG_SOCK_DIR``, ``XDG_RUNTIME_DIR`` or ``--sock-path`` put it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import stat
import time
from typing import NamedTuple

from polydbg.backends.base import LaunchSpec
from polydbg.backends.rdbg import gems
from polydbg.errors import EnvironmentProblem, UsageError, echo

# Variables of the user's environment that would make rdbg listen elsewhere or talk otherwise
_DROPPED = ("RUBY_DEBUG_PORT", "RUBY_DEBUG_HOST", "RUBY_DEBUG_SOCK_DIR", "RUBY_DEBUG_NONSTOP", "RUBY_DEBUG_OPEN",
            "RUBY_DEBUG_DAP_SHOW_PROTOCOL", "DEBUG_DAP_SHOW_PROTOCOL", "RUBY_DEBUG_COMMANDS", "RUBY_DEBUG_INIT_SCRIPT",
            "RUBYOPT")
PID_SOCKET = "<the UNIX socket process pid listens on>"  # an attach by pid, its socket not looked up yet
LISTEN_S = 2.0  # for an rdbg that said it can be attached to, to listen (a few ms)
LISTEN_POLL_S = 0.02
LAUNCH_LISTEN_S = 10.0  # for a launched rdbg between its "wait for debugger connection" and its bind (loaded CI)
INSTALL = "install Ruby with its debug gem: apt-get install ruby (or gem install debug)"


class Plan(NamedTuple):
    argv: list[str]
    env: dict[str, str]
    cwd: str
    gem: gems.Gem


def plan(spec: LaunchSpec, socket: str) -> Plan:
    """The command, environment and directory of a launch whose rdbg listens on ``socket``."""
    if spec.module:
        raise UsageError("module= is Python's (python -m); for Ruby pass the script or command as program "
                         "(program=\"rspec\", args=[…])")
    if not spec.program:
        raise UsageError("pass the Ruby program (a .rb file, or a command such as rspec or rake) as program")
    cwd = spec.cwd or os.getcwd()
    ruby = spec.runtime or shutil.which("ruby")
    if ruby is None:
        raise EnvironmentProblem(f"ruby is not on PATH; {INSTALL}")
    gem = gems.chosen(cwd)
    if gem is None:
        raise EnvironmentProblem(f"no debug gem found for {ruby}; {INSTALL}")
    if gem.bundler is not None:
        requires = ["-r", "bundler/setup", "-r", "debug/open"]
    else:
        assert gem.path is not None
        requires = ["-r", os.path.join(gem.path, "lib", "debug", "open")]
    env = {k: v for k, v in {**os.environ, **dict(spec.env)}.items() if k not in _DROPPED}
    env["RUBY_DEBUG_SOCK_PATH"] = socket
    env.setdefault("RUBY_DEBUG_NO_COLOR", "1")
    return Plan([ruby, *spec.runtime_args, *requires, spec.program, *spec.args], env, cwd, gem)


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    try:
        names = os.listdir(f"/proc/{pid}/fd")
    except OSError as exc:
        raise UsageError(f"cannot read process {pid}'s open files ({exc}); attach as its user") from exc
    for name in names:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{name}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def listening_socket(pid: int) -> str:
    """The UNIX socket rdbg listens on in process ``pid`` (``rdbg --open``, ``ruby -r debug/open``)."""
    inodes = _socket_inodes(pid)
    found = []
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="replace") as handle:
            for line in handle.read().splitlines()[1:]:
                fields = line.split()
                # Num RefCount Protocol Flags Type St Inode Path; St 01 is listening
                if len(fields) >= 8 and fields[6] in inodes and fields[5] == "01":
                    found.append(fields[7])
    except OSError:
        pass
    debug = [path for path in found if "ruby-debug" in os.path.basename(path)] or found
    if not debug:
        raise UsageError(f"process {pid} listens on no UNIX socket: start it under rdbg's server (rdbg --open -- "
                         "app.rb, or ruby -r debug/open app.rb; with --port=N attach by port instead)")
    return debug[0]


async def listening_socket_soon(pid: int) -> str:
    """``listening_socket``, waited for up to ``LISTEN_S``: rdbg 1.4.0 prints "Debugger can attach via UNIX
    domain socket" before it binds the socket, so an attach right after that line finds none yet. (And a client
    that connects before rdbg's session is set up — its listener starts inside ``Session.new``, before
    ``DEBUGGER__::SESSION`` is assigned — crashes rdbg's reader thread, which aborts the program: rdbg's bug, only
    within milliseconds of the program's start, which no attach of an agent's meets.)"""
    deadline = time.monotonic() + LISTEN_S
    while True:
        try:
            return listening_socket(pid)
        except UsageError:
            if time.monotonic() >= deadline:
                raise
        await asyncio.sleep(LISTEN_POLL_S)


async def socket_soon(path: str, wait_s: float = LAUNCH_LISTEN_S) -> None:
    """Wait (up to ``wait_s``) until rdbg binds ``path``: a launched rdbg 1.4.0 prints "wait for debugger
    connection" before it binds its socket too, and on a loaded machine the connect came first (ENOENT). The
    connect that follows says what went wrong if it never appears."""
    deadline = time.monotonic() + wait_s
    while True:
        if is_socket(path) or time.monotonic() >= deadline:
            return
        await asyncio.sleep(LISTEN_POLL_S)


def is_socket(path: str) -> bool:
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except OSError:
        return False


def socket_named(program: str | None) -> str | None:
    """A UNIX socket given as the attach's ``program`` (an ``rdbg --open --sock-path=…``), or None."""
    if program and is_socket(program):
        return program
    if (program and program.endswith((".sock", ".socket"))) or (program and "ruby-debug" in program):
        raise UsageError(f"{echo(program)} is no UNIX socket (not there, or not listening); start the program with "
                         f"rdbg --open --sock-path={program} -- app.rb")
    return None
