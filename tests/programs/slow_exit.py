"""Counts and prints the total; its exit then takes a second after debugpy has let go of it (debugpy closes its
connection to the program in the interpreter's exit handlers, and the exit is reported once the process ends):
a breakpoint or trace sent meanwhile meets a debugger that has lost the program."""

import os
import sys
import time
import types


class SlowExit:
    def __del__(self) -> None:
        os.write(1, b"shutting down\n")  # sys.stdout may be gone this late
        time.sleep(1.0)


# A module's objects are released after the interpreter's exit handlers, debugpy's among them, have run.
sys.modules["_slow_exit"] = holder = types.ModuleType("_slow_exit")
holder.keeper = SlowExit()  # type: ignore[attr-defined]
del holder

total = 0  # before the loop
for i in range(10):
    total += i  # loop body
print("total", total)  # after the loop
