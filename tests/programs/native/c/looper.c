/* Runs until killed, calling tick() every millisecond: a target to attach to and to take a core of. */
#include <stdio.h>
#include <time.h>

static long ticks = 0;

long tick(long n) {
    long doubled = n * 2;  /* in tick */
    ticks = n;
    return doubled;
}

int main(void) {
    struct timespec pause = {0, 1000000};
    long total = 0;
    printf("looping\n");
    fflush(stdout);
    for (long n = 0;; n++) {
        total += tick(n);
        nanosleep(&pause, NULL);   /* sleeping */
    }
    return (int)total;
}
