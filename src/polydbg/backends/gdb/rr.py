"""rr, the record-and-replay debugger, for ``debug_launch(record="rr")`` and ``polydbg doctor``: whether it can
record on this machine, and rr's own reason when it cannot.

rr records with the CPU's hardware performance counters, which it needs ``kernel.perf_event_paranoid`` ≤ 1 to
open, and it knows only the CPU models it was built for: on a VM without counters (this project's CI) or a CPU
newer than the rr ("Intel CPU type 0xc06f0 unknown", rr 5.6 here) it cannot record at all. So the answer comes
from a real ``rr record /bin/true``, not from the settings alone. UNTESTED IN CI: no CI machine records with rr;
where rr records, a launch still answers that polydbg does not replay rr traces yet (record=true records with
gdb instead, slower but anywhere).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

PROBE_S = 10.0  # rr record /bin/true takes well under a second where it works
PARANOID = "/proc/sys/kernel/perf_event_paranoid"
INSTEAD = "debug_launch(…, record=true) records with gdb instead (slower, but needs no performance counters)"


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
            probe = subprocess.run([rr, "record", "/bin/true"], env={**os.environ, "_RR_TRACE_DIR": traces},
                                   capture_output=True, text=True, timeout=PROBE_S, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return False, f"rr record /bin/true did not finish within {PROBE_S:g} s ({paranoid})"
        except OSError as exc:
            return False, f"rr could not run: {exc.strerror} ({paranoid})"
    if probe.returncode == 0:
        return True, f"rr records here ({paranoid})"
    said = [line.strip() for line in (probe.stderr or probe.stdout).splitlines() if line.strip()]
    reason = said[-1] if said else f"exit status {probe.returncode}"
    return False, (f"rr cannot record here: {reason} ({paranoid}; rr needs hardware performance counters, "
                   "perf_event_paranoid ≤ 1 and a CPU it knows)")


def refusal(recordable: bool, said: str) -> str:
    """What ``debug_launch(record="rr")`` answers."""
    if not recordable:
        return f"{said}; {INSTEAD}"
    return f"{said}, but polydbg does not replay rr traces yet; {INSTEAD}"
