/* The call-trace bench's C program (gdb, lldb-dap): work called N times in a loop, after a line to stop at first;
   work calls half, its callee (a trace with depth 1 records both). Built with gcc -g -O0 by the benchmark. */
#include <stdio.h>
#include <stdlib.h>

int half(int i) {
    return i / 2;
}

int work(int i) {
    return half(i) * 2; /* body */
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    long total = 0; /* start */
    for (int i = 0; i < n; i++) total += work(i);
    printf("%ld\n", total);
    return 0;
}
