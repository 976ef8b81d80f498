// Throws a class of the program's derived from another of its own, caught, a std::out_of_range caught, then the
// derived class uncaught.
#include <cstdio>
#include <stdexcept>
#include <string>

struct AppError : std::runtime_error {
    using std::runtime_error::runtime_error;
    int code = 3;
};

struct ParseError : AppError {
    using AppError::AppError;
};

static int parse(const std::string &text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
        throw ParseError("not a number: " + text);  // raise here
    }
    return std::stoi(text);
}

static int lenient(const std::string &text) {
    try {
        return parse(text);
    } catch (const AppError &) {
        return 0;
    }
}

int main() {
    try {
        throw std::out_of_range("no such index");
    } catch (const std::exception &e) {
        std::printf("caught %s\n", e.what());
    }
    std::printf("lenient %d\n", lenient("x1"));
    std::printf("strict %d\n", parse("y2"));
    return 0;
}
