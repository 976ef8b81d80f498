/* N threads (argv[1], default 200) stuck on pthread mutexes: a deadlocked pair, the rest blocked on a mutex
 * main holds; main then stops at a breakpoint at each tick. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER, second = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t gate = PTHREAD_MUTEX_INITIALIZER;
static int holding;

static void *one(void *unused) {
    pthread_mutex_lock(&first);
    __atomic_fetch_add(&holding, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&holding, __ATOMIC_SEQ_CST) < 2) {
    }
    pthread_mutex_lock(&second);
    return unused;
}

static void *other(void *unused) {
    pthread_mutex_lock(&second);
    __atomic_fetch_add(&holding, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&holding, __ATOMIC_SEQ_CST) < 2) {
    }
    pthread_mutex_lock(&first);
    return unused;
}

static void *waiter(void *unused) {
    pthread_mutex_lock(&gate);
    pthread_mutex_unlock(&gate);
    return unused;
}

static void tick(int n) {
    (void)n; /* tick */
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 200;
    pthread_t t;
    pthread_mutex_lock(&gate);
    pthread_create(&t, NULL, one, NULL);
    pthread_create(&t, NULL, other, NULL);
    for (int i = 2; i < threads; i++) {
        pthread_create(&t, NULL, waiter, NULL);
    }
    usleep(300000); /* the threads reach their locks (a bench: timing is all it needs) */
    for (int n = 0;; n++) {
        tick(n);
        usleep(1000);
    }
}
