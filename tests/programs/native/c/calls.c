/* Functions debug_evaluate calls while the program is stopped: one that takes a while to return and one that
   never returns; main runs until it is killed (a program to detach from). */
#include <unistd.h>

static volatile int spinning = 1;

unsigned slow_call(unsigned seconds) {
    return sleep(seconds);
}

int endless_call(void) {
    while (spinning) {
    }
    return 0;
}

int main(void) {
    long rounds = 0;
    for (;;) {
        rounds++;          /* between rounds */
        usleep(1000);
    }
    return (int)rounds;
}
