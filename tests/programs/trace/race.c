/* A lost update, the same every run: two threads each add 1 to a shared counter N times (the first argument,
   default 500), reading it, then both waiting at a barrier, then writing what each read plus one, so every
   increment of one thread overwrites the other's: the counter ends at N, not 2N. The same program is in race.py,
   Race.java and go/race/main.go. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static long counter = 0;
static long rounds = 500;
static pthread_barrier_t barrier;

static void *work(void *arg) {
    (void)arg;
    for (long i = 0; i < rounds; i++) {
        long seen = counter;
        pthread_barrier_wait(&barrier); /* both have read the counter */
        counter = seen + 1; /* the write */
        pthread_barrier_wait(&barrier); /* both have written it */
    }
    return NULL;
}

int main(int argc, char **argv) {
    pthread_t workers[2];
    if (argc > 1)
        rounds = atol(argv[1]);
    pthread_barrier_init(&barrier, NULL, 2); /* before the threads */
    for (int n = 0; n < 2; n++)
        pthread_create(&workers[n], NULL, work, NULL);
    for (int n = 0; n < 2; n++)
        pthread_join(workers[n], NULL);
    printf("counter %ld of %ld\n", counter, 2 * rounds); /* after the threads */
    return 0;
}
