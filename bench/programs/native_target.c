/* The C debuggee of bench/native_flow.py: one breakpoint line, a step, then it runs to the end.
   Built with gcc -g -O0 by the benchmark. */
#include <stdio.h>

struct point {
    int x;
    int y;
};

static int total_of(const int *values, int count) {
    int total = 0;
    for (int i = 0; i < count; i++) {
        total += values[i];
    }
    return total;
}

int main(void) {
    int values[50];
    for (int i = 0; i < 50; i++) {
        values[i] = i;
    }
    struct point origin = {3, 4};
    int total = total_of(values, 50);
    int mean = total / 50; /* marker: breakpoint */
    int scaled = mean * origin.x;
    printf("summary: %d %d %d\n", total, mean, scaled);
    return 0;
}
