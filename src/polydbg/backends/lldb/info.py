"""What polydbg knows about the lldb-dap backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, CommandEscape

INFO = BackendInfo(
    name="lldb-dap", target="polydbg.backends.lldb.backend:LldbDapBackend", languages=("c", "cpp", "rust"),
    find=locate.find_lldb_dap, install="apt-get install lldb-22   (or any lldb ≥ 18 that ships lldb-dap)",
    break_on_exception={"raised": ("cpp_throw",)},  # C++ only; other languages drop it
    command_escape=CommandEscape(r"^\s*`", "starts with lldb-dap's command escape (`), which runs an lldb command",
                                 "lldb's `"),
)
