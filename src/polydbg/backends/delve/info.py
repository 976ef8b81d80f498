"""What polydbg knows about the delve backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, CommandEscape, InjectingEnv

INFO = BackendInfo(
    name="delve", target="polydbg.backends.delve.backend:DelveBackend", languages=("go",),
    find=lambda: locate.which("dlv"), version_args=("version",),
    install="apt-get install delve golang-go   (or: go install github.com/go-delve/delve/cmd/dlv@latest)",
    command_escape=CommandEscape(r"^\s*dlv\s", "starts with 'dlv ', which runs a delve command", "delve's dlv"),
    # delve builds the program with the launch environment: -toolexec, toolchains, modules, cgo's compilers
    injecting_env=InjectingEnv(prefixes=("CGO_",), names=frozenset({
        "GOFLAGS", "GOTOOLCHAIN", "GOENV", "GOROOT", "GOPATH", "GOWORK", "GOCACHE", "GOPROXY", "GOSUMDB",
        "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOINSECURE", "CC", "CXX", "AR", "PKG_CONFIG"})),
    refusals={"data_breakpoints": (
        "delve 1.20 has no data breakpoints (its DAP server cannot stop where a value is written); to see where "
        "it changes, debug_trace records it at the lines that may write it (points=[{file, line}, …], "
        "expressions=[the value]) without stopping, or debug_break with a condition on it stops where it "
        "has changed")},
)
