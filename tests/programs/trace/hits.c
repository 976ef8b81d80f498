/* Counts to N (the first argument, default 20000) for trace tests: each turn passes the loop body once. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    long total = 0; /* before the loop */
    for (long i = 0; i < n; i++) {
        total += i; /* loop body */
        /* a comment in the loop */
    }
    printf("total %ld\n", total); /* after the loop */
    return 0;
}
