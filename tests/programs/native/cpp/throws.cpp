// An exception nobody catches: std::terminate aborts; the debugger must stop at the throw.
#include <cstdio>
#include <stdexcept>

int parse_age(int raw) {
    if (raw < 0) {
        throw std::invalid_argument("age must not be negative");  // throws here
    }
    return raw;
}

int main() {
    std::printf("age %d\n", parse_age(42));
    return parse_age(-1);
}
