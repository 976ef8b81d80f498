"""Finding PHP with Xdebug, and the command lines that make a PHP program connect back to polydbg.

Xdebug is a Zend extension loaded by PHP's ini files (Debian's ``php-xdebug`` enables it for every SAPI);
``php -m`` lists it under ``[Zend Modules]``. When the ini files do not load it but the extension is
installed, ``-dzend_extension=xdebug`` loads it for the run. The settings that make a script connect are
``-dxdebug.*`` options (``settings``), the same for ``php``, ``php -S`` and PHP-FPM, which takes the mode only as
its master starts, never from a pool (``FPM_ADVICE``).
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Sequence

from polydbg.errors import EnvironmentProblem

INSTALL = "apt-get install php-cli php-xdebug   (PHP ≥ 8.0 with Xdebug ≥ 3; phpunit for tests by name)"
LOAD = "-dzend_extension=xdebug"
_PROBE_S = 10.0
TRIGGER = {"XDEBUG_SESSION": "polydbg"}  # with start_with_request=trigger: the debugger starts, the trace does not


def settings(port: int, host: str = "127.0.0.1") -> list[str]:
    """The ini settings that make every script run connect to ``host:port`` at its start (without a log line
    when nothing listens: a web server's requests then run as without a debugger)."""
    return ["xdebug.mode=debug", "xdebug.start_with_request=yes", f"xdebug.client_host={host}",
            f"xdebug.client_port={port}", "xdebug.log_level=0", "xdebug.connect_timeout_ms=2000"]


# Xdebug reads xdebug.mode only as PHP starts (FPM's master, before its pools): a pool's php_admin_value of it is
# ignored (measured with PHP-FPM 8.2, Xdebug 3.2), the other settings may be a pool's
FPM_ADVICE = ("PHP-FPM, Apache: the same settings in php.ini or as php-fpm -d flags, then restart it (Xdebug reads "
              "xdebug.mode only as PHP starts, never from a pool)")


def find_php(runtime: str | None = None) -> str | None:
    """``runtime`` (the launch's ``php``), else ``php`` on PATH, when Xdebug can be loaded into it."""
    php = runtime or shutil.which("php")
    return php if php is not None and loading(php) is not None else None


@functools.cache
def _probe(php: str, mtime: float) -> tuple[str, ...] | None:
    """The flags that load Xdebug into ``php`` (none when its ini files do), None when it cannot be loaded.
    Cached per executable and its modification time (a positive answer only matters: installing Xdebug later
    changes the ini files, not the executable, so a negative one is asked again)."""
    for flags in ((), (LOAD,)):
        try:
            out = subprocess.run([php, *flags, "-m"], capture_output=True, text=True, timeout=_PROBE_S)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if any(line.strip().lower() == "xdebug" for line in out.stdout.splitlines()):
            return flags
    return None


def loading(php: str) -> tuple[str, ...] | None:
    try:
        mtime = os.stat(php).st_mtime
    except OSError:
        return None
    found = _probe(php, mtime)
    if found is None:
        _probe.cache_clear()
    return found


def require_php(runtime: str | None) -> tuple[str, tuple[str, ...]]:
    """The PHP to run and the flags that load Xdebug into it, or what to install."""
    php = runtime or shutil.which("php")
    if php is None:
        raise EnvironmentProblem(f"php is not on PATH; install it: {INSTALL}")
    flags = loading(php)
    if flags is None:
        raise EnvironmentProblem(f"{php} has no Xdebug extension ({php} -m does not list it, and "
                                 f"{LOAD} does not load it); install it: {INSTALL}")
    return php, flags


def command(php: str, load: Sequence[str], port: int, program: str, args: Sequence[str],
            runtime_args: Sequence[str], trace_dir: str | None = None) -> list[str]:
    """``php -d… [runtime_args] program args``: a script, or (``-S addr`` in ``runtime_args``) the built-in web
    server with ``program`` as its router, or ``program`` a directory: its document root. With ``trace_dir``,
    Xdebug's trace mode too (calls are recorded from its function trace: ``tracing``), started only when asked: the
    request starts the debugger alone by its trigger (``TRIGGER``, in the environment), not the trace."""
    given = settings(port)
    if trace_dir is not None:
        given = [*(s for s in given if not s.startswith(("xdebug.mode=", "xdebug.start_with_request="))),
                 "xdebug.mode=debug,trace", "xdebug.start_with_request=trigger", f"xdebug.output_dir={trace_dir}",
                 "xdebug.collect_return=1"]
    argv = [php, *load, *(f"-d{setting}" for setting in given), *runtime_args]
    if os.path.isdir(program):
        return [*argv, "-t", program, *args]
    return [*argv, program, *args]


def serves(runtime_args: Sequence[str]) -> str | None:
    """The address the built-in web server listens on (``-S addr`` among the runtime flags), or None."""
    for index, arg in enumerate(runtime_args):
        if arg == "-S" and index + 1 < len(runtime_args):
            return runtime_args[index + 1]
        if arg.startswith("-S") and len(arg) > 2:
            return arg[2:]
    return None
