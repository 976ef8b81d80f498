// A call trace's subjects under gdb and lldb: a recursive function, a method that throws (its caller catches
// it), and a thread of the program's own.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

int fib(int n) {
    if (n < 2) return n;
    return fib(n - 1) + fib(n - 2);
}

struct Parser {
    int parse(const std::string& text) {
        if (text.empty()) throw std::invalid_argument("empty input");
        return static_cast<int>(text.size());
    }
};

int parse_all(Parser& parser, const char* const* texts, int count) {
    int parsed = 0;
    for (int i = 0; i < count; i++) {
        try {
            parser.parse(texts[i]);
            parsed += 1;
        } catch (const std::invalid_argument& err) {
            std::printf("skipped: %s\n", err.what());
        }
    }
    return parsed;
}

int square(int x) {
    return x * x;
}

int main() {
    std::printf("fib %d\n", fib(6));
    Parser parser;
    const char* texts[] = {"ab", "", "xyz"};
    std::printf("parsed %d\n", parse_all(parser, texts, 3));
    std::thread worker([] {
        int total = 0;
        for (int i = 1; i <= 4; i++) total += square(i);
        std::printf("worker %d\n", total);
    });
    worker.join();
    return 0;
}
