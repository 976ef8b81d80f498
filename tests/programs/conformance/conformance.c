/* The conformance program (the same computation as conformance.py, .cpp, rust/ and go/): prints and exits with 13. */
#include <stdio.h>
#include <unistd.h>

static int add(int a, int b) { /* add starts */
    int total = a + b; /* in add */
    return total;
}

int main(int argc, char **argv) {
    int x = 3;
    int y = 4;
    int s = add(x, y); /* call add */
    for (int i = 0; i < 4; i++) { /* loop */
        s += i; /* loop body */
    }
    printf("result %d\n", s); /* print result */
    fflush(stdout);
    while (argc > 1 && argv[1]) { /* with an argument, stay until killed */
        sleep(60);
    }
    return s;
}
