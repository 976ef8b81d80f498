"""What polydbg knows about the rdbg backend before importing it (see ``BackendInfo``)."""

from polydbg.backends.base import BackendInfo, InjectingEnv, no_data_breakpoints
from polydbg.backends.rdbg import gems

INFO = BackendInfo(
    name="rdbg", target="polydbg.backends.rdbg.backend:RdbgBackend", languages=("ruby",),
    find=gems.find_rdbg,
    install="apt-get install ruby   (its debug gem ships rdbg; web apps: ruby-webrick ruby-rack; tests: ruby-rspec)",
    break_on_exception={"uncaught": ("uncaught",), "raised": ("raised",)},
    # extra libraries and options Ruby loads, and the gems it picks
    injecting_env=InjectingEnv(prefixes=("RUBY_DEBUG_", "BUNDLE_"), names=frozenset({
        "RUBYOPT", "RUBYLIB", "RUBYSHELL", "GEM_HOME", "GEM_PATH", "BUNDLE_GEMFILE"})),
    process_names=("ruby",),
    attach_hint="rdbg --open --host=127.0.0.1 --port=PORT -- app.rb",
    native_refusal="Ruby has no raw memory, registers or machine code to show; read values with debug_evaluate and "
                   "debug_variables",
    refusals={"data_breakpoints": no_data_breakpoints("rdbg")},
)
