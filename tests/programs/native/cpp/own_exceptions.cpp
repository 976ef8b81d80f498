// Exceptions of the program's own classes: what() of its own, a std::runtime_error's, a plain struct (caught by
// name, so the debug info describes it), a struct only thrown (g++ describes it nowhere), a thrown int.
#include <cstdio>
#include <stdexcept>
#include <string>

struct AppError : std::exception {
    std::string msg;
    explicit AppError(std::string text) : msg(std::move(text)) {}
    const char *what() const noexcept override { return msg.c_str(); }
};

struct ConfigError : std::runtime_error {
    int code;
    ConfigError(const std::string &text, int number) : std::runtime_error(text), code(number) {}
};

struct Plain {
    int code;
};

struct Bare {
    int code;
};

static void fail(char which) {
    if (which == 'a') throw AppError("bad config value");  // throws AppError
    if (which == 'c') throw ConfigError("port out of range", 7);  // throws ConfigError
    if (which == 'p') throw Plain{7};  // throws Plain
    if (which == 'b') throw Bare{9};  // throws Bare
    throw 42;  // throws an int
}

int main(int argc, char **argv) {
    try {
        fail(argc > 1 ? argv[1][0] : 'a');
    } catch (const Plain &plain) {
        std::printf("plain %d\n", plain.code);
    } catch (...) {
        std::puts("caught");
    }
    return 0;
}
