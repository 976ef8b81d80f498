"""What polydbg knows about the debugpy backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, InjectingEnv, no_data_breakpoints

INFO = BackendInfo(
    name="debugpy", target="polydbg.backends.debugpy.backend:DebugpyBackend", languages=("python",),
    find=locate.python_itself, install="pip install debugpy (a dependency of polydbg)", version_args=(),
    # uncaught: by the program, or by the user's code (an exception leaving it into a library: a test runner's)
    break_on_exception={"uncaught": ("uncaught", "userUnhandled"), "raised": ("raised", "uncaught")},
    expression_check="polydbg.backends.debugpy.expressions:check",
    runtime_argument="python",
    command_dirs="polydbg.backends.debugpy.python:command_dirs",
    injecting_env=InjectingEnv(prefixes=("PYTHON",), harmless=frozenset({
        "PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONHASHSEED", "PYTHONWARNINGS",
        "PYTHONDEVMODE", "PYTHONFAULTHANDLER", "PYTHONUTF8", "PYTHONTRACEMALLOC", "PYTHONASYNCIODEBUG",
        "PYTHONNODEBUGRANGES", "PYTHONSAFEPATH", "PYTHONNOUSERSITE", "PYTHONOPTIMIZE", "PYTHONVERBOSE",
        "PYTHONMALLOC", "PYTHONMALLOCSTATS", "PYTHONINTMAXSTRDIGITS", "PYTHONCOERCECLOCALE",
        "PYTHONWARNDEFAULTENCODING"})),
    process_names=("python", "pypy"),
    attach_hint="python -m debugpy --listen 5678",
    module_runner="python -m",
    native_refusal="Python has no raw memory, registers or machine code to show (it works with C, C++ and Rust); "
                   "read values with debug_evaluate and debug_variables",
    refusals={"data_breakpoints": no_data_breakpoints("debugpy")},
)
