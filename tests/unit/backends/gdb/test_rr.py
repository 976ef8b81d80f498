"""rr's record and replay (rr.py, and timetravel.py's replay of a trace), in what can be checked without the
performance counters rr needs (none on CI's machines): the command lines, the recognition of a trace directory,
the reading of rr's answers (text in the formats of rr 5.6's sources), the commands that connect gdb to rr's
replay, and how the stops of a replay read — gdb is a script of answers here: no gdb or rr runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydbg.backends.base import StopEvent
from polydbg.backends.gdb import rr
from polydbg.backends.gdb.calls import Calls
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.stops import Stop
from polydbg.backends.gdb.timetravel import TimeControl
from polydbg.backends.timecontrol import HISTORY_END, HISTORY_START
from polydbg.errors import UsageError
from polydbg.mi.client import MiResult

# GdbServer.cc's print_debugger_launch_command, as rr replay -s 0 writes it on stderr
LAUNCH = ("rr: Replaying trace...\nLaunch gdb with\n  gdb '-l' '10000' '-ex' 'set sysroot /' '-ex' "
          "'target extended-remote 127.0.0.1:41234' /home/me/build/stray write\n")
PS = "PID\tPPID\tEXIT\tCMD\n4242\t--\t3\t/home/me/build/app --fast\n4243\t4242\t0\t/bin/sh -c true\n"


def test_rr_records_the_program_with_its_arguments_and_serves_the_trace_on_a_loopback_port_it_picks() -> None:
    assert rr.record_argv("/usr/bin/rr", "/p/app", ("-v", "in put")) == ["/usr/bin/rr", "record", "--", "/p/app",
                                                                         "-v", "in put"]
    assert rr.replay_argv("/usr/bin/rr", "/t/app-0") == ["/usr/bin/rr", "replay", "--dbgport=0",
                                                         "--dbghost=127.0.0.1", "--no-redirect-output", "/t/app-0"]


def test_a_trace_is_a_directory_with_rrs_version_file_or_one_holding_latest_trace(tmp_path: Path) -> None:
    trace = tmp_path / "app-0"
    trace.mkdir()
    assert rr.trace_of(str(trace)) is None  # not (yet) a trace
    (trace / "data").write_bytes(b"")
    (trace / "version").write_text("85\n")
    assert rr.trace_of(str(trace)) == str(trace)
    assert rr.trace_of(str(trace / "version")) is None  # a file is no trace
    os.symlink("app-0", tmp_path / rr.LATEST)
    assert rr.trace_of(str(tmp_path)) == str(trace)  # _RR_TRACE_DIR itself: its latest trace
    assert rr.trace_of(str(tmp_path / "elsewhere")) is None


def test_a_trace_whose_recording_never_finished_is_refused_with_what_to_do(tmp_path: Path) -> None:
    (tmp_path / "incomplete").write_text("")
    with pytest.raises(UsageError, match=r"never finished .* record the program again with debug_launch"):
        rr.trace_of(str(tmp_path))


def test_rr_replays_launch_line_says_where_gdb_connects_and_the_executable() -> None:
    assert rr.served_by("rr: Replaying trace...\n") is None  # rr has not reached the program's exec yet
    served = rr.served_by(LAUNCH)
    assert served == rr.Served("127.0.0.1", 41234, "/home/me/build/stray write")


def test_gdb_connects_to_the_replay_as_rr_launches_it_with_the_programs_symbols() -> None:
    served = rr.Served("127.0.0.1", 41234, "/home/me/build/app")
    assert rr.gdb_commands(served, "/work/my app") == [
        '-interpreter-exec console "set remotetimeout 10000"', "-gdb-set sysroot /",
        '-file-exec-and-symbols "/work/my app"', "-target-select extended-remote 127.0.0.1:41234"]
    assert rr.gdb_commands(served, None)[2] == "-file-exec-and-symbols /home/me/build/app"  # a trace given


def test_rr_ps_says_how_the_recorded_program_ended() -> None:
    assert rr.first_process(PS) == ("3", "/home/me/build/app --fast")
    assert rr.first_process("Invalid trace\n") is None
    assert rr.exit_text("3") == "the program exited with code 3"
    assert rr.exit_text(-9) == "the program was killed by signal 9"
    assert rr.exit_text("none") == "the program had not exited when the recording ended"


def test_where_rr_cannot_record_the_launch_says_rrs_reason_and_records_with_gdb_instead() -> None:
    said = "rr cannot record here: Intel CPU type 0xc06f0 unknown (kernel.perf_event_paranoid = 2; …)"
    assert rr.refusal(said) == f"{said}; {rr.INSTEAD}"
    assert "record=true" in rr.INSTEAD
    assert rr.last_words("[WARN] something\nUnable to open performance counter\n\n", 1) == (
        "Unable to open performance counter")
    assert rr.last_words("", 7) == "exit status 7"


class ReplayGdb(GdbState):
    """gdb connected to rr's replay: records what it was sent, answers done."""

    def __init__(self) -> None:
        super().__init__("c")
        self.sent: list[str] = []

    async def cmd(self, command: str) -> MiResult:
        self.sent.append(command)
        return MiResult("done", {})


def _replaying() -> tuple[TimeControl, ReplayGdb]:
    gdb = ReplayGdb()
    time = TimeControl(gdb, Calls(gdb))
    time.replay_rr(rr.ending(rr.exit_text(3)))
    return time, gdb


async def test_the_end_of_the_trace_is_rrs_sigkill_running_forward_and_nothing_runs_live_after_it() -> None:
    time, gdb = _replaying()
    assert time.involved()
    await time.forward()
    killed = Stop(StopEvent("signal", 1, "SIGKILL"))
    end = await time.settle(killed, {"reason": "signal-received", "signal-name": "SIGKILL"}, interrupting=False)
    assert end.event.reason == HISTORY_END
    assert "exited with code 3" in (end.event.text or "") and "no live run after it" in (end.event.text or "")
    with pytest.raises(UsageError, match=r"end of the rr trace.*debug_continue\(reverse=true\)"):
        await time.forward()
    await time.reverse(1, "continue")  # back from the end: rr replays, no record full is asked
    assert gdb.sent == ["-exec-continue --thread 1 --reverse"]
    await time.forward()  # no longer at the end


async def test_running_back_to_the_start_of_the_trace_is_the_start_of_the_history() -> None:
    time, gdb = _replaying()
    await time.reverse(1, "over")
    time.on_text("\nNo more reverse-execution history.\n")
    start = await time.settle(Stop(StopEvent("step", 1)), {"reason": "no-history"}, interrupting=False)
    assert start.event.reason == HISTORY_START and "start of the rr trace" in (start.event.text or "")
    await time.reverse(1, "continue")
    silent = await time.settle(Stop(StopEvent("signal", 1, "0")), {"reason": "signal-received", "signal-name": "0"},
                               interrupting=False)
    assert silent.event.reason == HISTORY_START  # rr's silent stop at the start running backwards
    assert not any("info record" in command for command in gdb.sent)  # no record full to ask about


async def test_a_watchpoint_hit_running_back_through_the_trace_names_the_write() -> None:
    time, _ = _replaying()
    await time.reverse(1, "continue")
    hit = Stop(StopEvent("data breakpoint", 1, "watchpoint 2"))
    payload = {"reason": "watchpoint-trigger", "wpt": {"number": "2", "exp": "table.checksum"},
               "value": {"old": "99", "new": "7"}}
    found = await time.settle(hit, payload, interrupting=False)
    assert "table.checksum was written here: 7 → 99" in (found.event.text or "")


async def test_a_replay_neither_records_again_nor_saves_checkpoints() -> None:
    time, gdb = _replaying()
    with pytest.raises(UsageError, match="rr recorded the whole run already"):
        await time.record("start", 1000)
    with pytest.raises(UsageError, match="no checkpoints in an rr replay"):
        await time.checkpoint(1)
    assert gdb.sent == []
