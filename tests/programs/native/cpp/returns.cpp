// Calls whose results a step out of (or over) them reports: a number, a struct, a recursive call, a throw.
#include <cstdio>
#include <stdexcept>

struct Point {
    int x;
    int y;
};

int add(int a, int b) {
    int total = a + b;
    return total * 2;  // add returns
}

Point make_point(int x) {
    Point p{x, x + 1};
    return p;  // make_point returns
}

int factorial(int n) {
    if (n <= 1) {
        return 1;  // factorial base
    }
    return n * factorial(n - 1);  // factorial recurses
}

int checked(int v) {
    if (v < 0) {
        throw std::invalid_argument("negative");  // checked throws
    }
    return v;
}

int main() {
    int x = add(1, 2);  // first call
    int y = add(x, 3);
    Point p = make_point(y);  // point call
    int f = factorial(3);  // factorial call
    int c = 0;
    try {
        c = checked(-1);  // checked call
    } catch (const std::invalid_argument &e) {
        c = -1;  // caught
    }
    std::printf("%d %d %d %d %d %d\n", x, y, p.x, p.y, f, c);
    return 0;
}
