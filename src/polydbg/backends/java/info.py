"""What polydbg knows about the Java backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, InjectingEnv

INFO = BackendInfo(
    name="java", target="polydbg.backends.java.backend:JavaBackend", languages=("java", "kotlin"),
    find=locate.find_java, install="apt-get install openjdk-17-jdk-headless   (any JDK ≥ 11; javac for .java "
                                   "programs, kotlinc for .kt ones)", version_args=("-version",),
    break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")},
    expression_check="polydbg.backends.java.checks:check",
    # assertions, heap and stack sizes, system properties outside the JDK's own namespaces
    runtime_flags=(r"-(?:ea|da|esa|dsa|enableassertions|disableassertions|enablesystemassertions"
                   r"|disablesystemassertions)(?::[\w.$]*(?:\.\.\.)?)?"
                   r"|-X(?:mx|ms|ss)\d+[kKmMgG]?"
                   r"|-D(?!(?:java|jdk|sun|javax|com\.sun)\.)[A-Za-z_][\w.\-]*(?:=.*)?"),
    runtime_path_flags=dict.fromkeys(("-cp", "-classpath", "--class-path"), "classpath entry"),
    injecting_env=InjectingEnv(names=frozenset({"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
                                                "CLASSPATH"})),  # the JVM reads these as command-line options
    process_names=("java",),
    # every query debug_command has on Java (commands.py) reads the JVM over JDWP; none changes it or runs code
    read_only_commands=("classes", "methods", "fields", "threads", "version", "classpath", "sourcepaths", "sourcepath",
                        "help", "?"),
    watch_hint=None,  # the JVM watches fields; its refusal says which
)
