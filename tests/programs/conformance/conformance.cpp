// The conformance program (the same computation as conformance.py, .c, rust/ and go/): prints and exits with 13.
#include <iostream>
#include <unistd.h>

static int add(int a, int b) {  // add starts
    int total = a + b;  // in add
    return total;
}

int main(int argc, char **argv) {
    int x = 3;
    int y = 4;
    int s = add(x, y);  // call add
    for (int i = 0; i < 4; i++) {  // loop
        s += i;  // loop body
    }
    std::cout << "result " << s << std::endl;  // print result
    while (argc > 1 && argv[1]) {  // with an argument, stay until killed
        sleep(60);
    }
    return s;
}
