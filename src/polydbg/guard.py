"""The guard: a tiny parent for each debugger, so nothing the debugger starts outlives polydbg.

A debugger gets the parent-death signal, but what *it* starts does not: lldb-server, delve's target
and a ``setsid()`` daemon run in groups of their own, and when their tracer dies a running program is
simply detached and runs on. So each debugger runs under this guard (``python -S -c GUARD argv…``,
~15 ms): it becomes a child subreaper, so every process below it that loses its parent is re-parented
to it instead of to init; it forks and execs the debugger (which keeps the guard's stdin, stdout and
stderr: polydbg talks to the debugger directly) and waits. When the debugger exits, or when polydbg
dies (the guard's parent-death signal, SIGUSR1, fires even on SIGKILL), the guard kills every process
left below it, reaps them, and exits with the debugger's status (a signal that ended the debugger ends the
guard too: a JVM killed by SIGKILL read as "exit 1" while the guard tried to reset SIGKILL's handler, which
has none). SIGUSR2 from polydbg means "detach": the program is to keep running, so the guard leaves its
descendants alone when the debugger exits.

It is Python without ``site`` and uses only ``os``, ``signal`` and ``ctypes``, so it starts fast; the
source is a string because it runs before (and apart from) polydbg's own imports.
``WARM`` is the same guard started ahead of need: it reads what to run (argv, env, cwd) from a pipe
first (``polydbg.warm``), so a launch does not wait for its interpreter to start.
"""

from __future__ import annotations

MARKER = "polydbg-guard"

_HEAD = r'''
import ctypes, os, signal, sys
# polydbg-guard
libc = ctypes.CDLL(None, use_errno=True)
me, parent = os.getpid(), os.getppid()
libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
released = False

def below():
    table = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            try:
                with open('/proc/%s/stat' % entry, 'rb') as handle:
                    fields = handle.read().rpartition(b')')[2].split()
                if fields[0] != b'Z':  # a zombie is dead already: killing it again would spin here
                    table[int(entry)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                pass
    found, frontier = set(), [me]
    while frontier:
        pid = frontier.pop()
        for child, ppid in table.items():
            if ppid == pid and child not in found:
                found.add(child)
                frontier.append(child)
    return found

def kill_below():
    for _ in range(200):
        pids = below()
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break

def orphaned(*_):
    kill_below()
    os._exit(137)

def release(*_):
    global released
    released = True

signal.signal(signal.SIGUSR1, orphaned)
signal.signal(signal.SIGUSR2, release)
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # polydbg TERMs the group: that is the debugger's to handle
signal.signal(signal.SIGINT, signal.SIG_IGN)
libc.prctl(1, signal.SIGUSR1, 0, 0, 0)  # PR_SET_PDEATHSIG
if os.getppid() != parent:
    orphaned()
'''

# A warm guard (polydbg.warm) is started before it is needed and reads what to run from the pipe whose fd is its
# one argument: marshal's (argv, env, cwd), then end of file. An end of file with nothing before it (or a cut
# request) means polydbg let it go: it exits, having started nothing. The locale variables are the ones the
# interpreter left in its own environment (PEP 538 sets LC_CTYPE=C.UTF-8 where the locale is C): polydbg sends a
# request only when the caller's locale variables are the ones this guard started with, so the debugger sees what
# it would see under a guard started for it.
_WARM_READ = r'''
import marshal
control, request = int(sys.argv[1]), b''
while True:
    chunk = os.read(control, 65536)
    if not chunk:
        break
    request += chunk
os.close(control)
try:
    argv, env, cwd = marshal.loads(request)
except (EOFError, ValueError, TypeError):
    os._exit(0)
for key in LOCALE:
    if key in os.environ:
        env[key] = os.environ[key]
    else:
        env.pop(key, None)
try:
    os.chdir(cwd)
except OSError as error:
    sys.stderr.write('cannot change to the directory %s: %s\n' % (cwd, error))
    os._exit(127)
'''

_RUN = r'''
child = os.fork()
if child == 0:
    for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)
    try:
        if env is None:
            os.execvp(argv[0], argv)
        else:
            os.execvpe(argv[0], argv, env)
    except OSError as error:
        sys.stderr.write('cannot run %s: %s\n' % (argv[0], error))
        os._exit(127)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)  # the debugger's streams end when it does, not when the guard does
status = 0
while True:
    try:
        pid, code = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if pid == child:
        status = code
        break
if not released:
    kill_below()
if os.WIFSIGNALED(status):
    if os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGSTOP):  # these two have no handler to reset
        signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(me, os.WTERMSIG(status))
os._exit(os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 1)
'''

# The variables that decide whether the interpreter coerces the locale (and so changes the environment it passes on).
LOCALE = ("LC_ALL", "LC_CTYPE", "LANG", "LOCPATH", "PYTHONCOERCECLOCALE", "PYTHONUTF8")

GUARD = _HEAD + "argv, env = sys.argv[1:], None\n" + _RUN
WARM = _HEAD + f"LOCALE = {LOCALE!r}\n" + _WARM_READ + _RUN
