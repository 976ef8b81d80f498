"""What polydbg knows about the gdb backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, CommandEscape

INFO = BackendInfo(
    name="gdb", target="polydbg.backends.gdb.backend:GdbMiBackend", languages=("c", "cpp", "rust"),
    find=lambda: locate.which("gdb"), install="apt-get install gdb gdbserver",
    break_on_exception={"raised": ("throw", "panic"), "uncaught": ("panic",)},  # panic: Rust only
    command_escape=CommandEscape(r"\$_shell\b", "calls gdb's $_shell, which runs a shell command", "gdb's $_shell"),
    records=("full", "rr"),
)
