/* Four worker threads that loop until told to stop; the main thread waits for them. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#define WORKERS 4

static volatile int stop = 0;
static volatile long progress[WORKERS];
static int started = 0;

static void *work(void *arg) {
    long id = (long)arg;
    struct timespec nap = {0, 1000000};
    __atomic_fetch_add(&started, 1, __ATOMIC_SEQ_CST);
    while (!stop) {
        progress[id]++;    /* worker loop */
        nanosleep(&nap, NULL);
    }
    return NULL;
}

int main(void) {
    pthread_t threads[WORKERS];
    for (long i = 0; i < WORKERS; i++) {
        pthread_create(&threads[i], NULL, work, (void *)i);
    }
    while (__atomic_load_n(&started, __ATOMIC_SEQ_CST) < WORKERS) {
    }
    printf("all workers running\n");  /* all workers running */
    fflush(stdout);
    for (int i = 0; i < WORKERS; i++) {
        pthread_join(threads[i], NULL);
    }
    printf("done\n");
    return 0;
}
