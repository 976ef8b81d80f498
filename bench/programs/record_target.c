/* The time-control bench's native program: a loop of N iterations between two marked lines (recording's cost),
   then a value written once and a short loop after it (running back to the write through a recording). */
#include <stdio.h>
#include <stdlib.h>

volatile long target; /* written once: the watched value */
volatile long sink;

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    long after = argc > 2 ? atol(argv[2]) : 1250;
    long total = 0;
    sink = 0; /* before the loop */
    for (long i = 0; i < n; i++) {
        total += i * 3;
    }
    sink = total; /* after the loop */
    target = total % 1000 + 1; /* the write */
    for (long i = 0; i < after; i++) {
        sink += i;
    }
    printf("total %ld target %ld\n", total, (long)target); /* the end */
    return 0;
}
