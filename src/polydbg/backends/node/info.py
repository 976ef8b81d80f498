"""What polydbg knows about the Node backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, InjectingEnv, no_data_breakpoints

INFO = BackendInfo(
    name="node", target="polydbg.backends.node.backend:NodeBackend", languages=("javascript", "typescript"),
    find=locate.find_node, install="apt-get install nodejs   (Node ≥ 18; TypeScript also needs tsx in the project: "
                                   "npm install --save-dev tsx)",
    break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")},
    runtime_argument="node",
    command_dirs="polydbg.backends.node.launcher:command_dirs",
    runtime_flags=(r"--(?:enable-source-maps|no-warnings|no-deprecation|throw-deprecation|pending-deprecation"
                   r"|trace-warnings|trace-deprecation|trace-uncaught|trace-exit|experimental-vm-modules"
                   r"|experimental-strip-types|experimental-transform-types|preserve-symlinks|preserve-symlinks-main)"
                   r"|--(?:max-old-space-size|max-semi-space-size|stack-size|stack-trace-limit|unhandled-rejections"
                   r"|input-type|conditions)=[\w.\-]+"
                   r"|--test-name-pattern=.+|--test-reporter=(?:spec|tap|dot)"),  # Node's test runner (a test by name)
    # extra flags and modules, and paths Node writes to
    injecting_env=InjectingEnv(names=frozenset({
        "NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "NODE_V8_COVERAGE", "NODE_REDIRECT_WARNINGS",
        "NODE_REPL_HISTORY"})),
    process_names=("node", "nodejs"),
    native_refusal="JavaScript has no raw memory, registers or machine code to show; read values with debug_evaluate "
                   "and debug_variables",
    refusals={"data_breakpoints": no_data_breakpoints("V8's inspector")},
)
