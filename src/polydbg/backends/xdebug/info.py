"""What polydbg knows about the Xdebug backend before importing it (see ``BackendInfo``)."""

from polydbg.backends.base import BackendInfo, InjectingEnv, no_data_breakpoints
from polydbg.backends.xdebug import launcher

INFO = BackendInfo(
    name="xdebug", target="polydbg.backends.xdebug.backend:XdebugBackend", languages=("php",),
    find=launcher.find_php, install=launcher.INSTALL,
    version_args=("-r", "echo 'PHP ', PHP_VERSION, ', Xdebug ', phpversion('xdebug'), PHP_EOL;"),
    break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")},
    expression_check="polydbg.backends.xdebug.checks:check",
    # the built-in web server (-S addr, its document root -t dir: a path inside the roots), ini settings of
    # Xdebug's own and of error reporting (none of them loads code)
    runtime_flags=(r"-S|(?:-S)?(?:[\w.\-]+|\[[\da-fA-F:]+\]):\d+"
                   r"|-d(?:xdebug\.[\w.]+|error_reporting|display_errors|memory_limit|max_execution_time)"
                   r"=[\w.\-~&|^ ]*"),
    runtime_path_flags={"-t": "document root"},
    # ini files PHP reads (auto_prepend_file in one runs code)
    injecting_env=InjectingEnv(names=frozenset({"PHPRC", "PHP_INI_SCAN_DIR", "XDEBUG_CONFIG", "XDEBUG_MODE"})),
    process_names=("php", "php-cgi", "php-fpm"),
    native_refusal="PHP has no raw memory, registers or machine code to show; read values with debug_evaluate "
                   "and debug_variables",
    refusals={"data_breakpoints": no_data_breakpoints("Xdebug")},
)
