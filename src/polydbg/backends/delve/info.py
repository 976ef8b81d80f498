"""What polydbg knows about the delve backend before importing it (see ``BackendInfo``)."""

from polydbg.backends import locate
from polydbg.backends.base import BackendInfo, CommandEscape, InjectingEnv, no_data_breakpoints

INFO = BackendInfo(
    name="delve", target="polydbg.backends.delve.backend:DelveBackend", languages=("go",),
    find=lambda: locate.which("dlv"), version_args=("version",),
    install="apt-get install delve golang-go   (or: go install github.com/go-delve/delve/cmd/dlv@latest)",
    command_escape=CommandEscape(r"^\s*dlv\s", "starts with 'dlv ', which runs a delve command", "delve's dlv"),
    # delve builds the program with the launch environment: -toolexec, toolchains, modules, cgo's compilers
    injecting_env=InjectingEnv(prefixes=("CGO_",), names=frozenset({
        "GOFLAGS", "GOTOOLCHAIN", "GOENV", "GOROOT", "GOPATH", "GOWORK", "GOCACHE", "GOPROXY", "GOSUMDB",
        "GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GONOPROXY", "GOINSECURE", "CC", "CXX", "AR", "PKG_CONFIG"})),
    refusals={"data_breakpoints": no_data_breakpoints("delve 1.20")},
)
