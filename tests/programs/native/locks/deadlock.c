/* Two threads that lock two mutexes in opposite orders and deadlock; a third waits for a mutex inside a struct
 * on the heap (no symbol names it) that main holds. main stops once all three are stuck. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

pthread_mutex_t alpha = PTHREAD_MUTEX_INITIALIZER;
pthread_mutex_t beta = PTHREAD_MUTEX_INITIALIZER;

struct account {
    long balance;
    pthread_mutex_t guard;
};

static int holding = 0;
static pid_t tids[3];

static void *left(void *unused) {
    tids[0] = gettid();
    pthread_mutex_lock(&alpha);
    __atomic_fetch_add(&holding, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&holding, __ATOMIC_SEQ_CST) < 2) {
    }
    pthread_mutex_lock(&beta); /* left blocks */
    return unused;
}

static void *right(void *unused) {
    tids[1] = gettid();
    pthread_mutex_lock(&beta);
    __atomic_fetch_add(&holding, 1, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&holding, __ATOMIC_SEQ_CST) < 2) {
    }
    pthread_mutex_lock(&alpha); /* right blocks */
    return unused;
}

static void *auditor(void *arg) {
    struct account *account = arg;
    tids[2] = gettid();
    pthread_mutex_lock(&account->guard); /* auditor blocks */
    account->balance = 0;
    pthread_mutex_unlock(&account->guard);
    return NULL;
}

/* Whether the thread sleeps in the futex system call (202 on x86-64): blocked in pthread_mutex_lock. */
static int in_futex(pid_t tid) {
    char path[64], text[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
    FILE *file = fopen(path, "r");
    if (file == NULL) {
        return 0;
    }
    size_t got = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[got] = 0;
    return strncmp(text, "202 ", 4) == 0;
}

int main(void) {
    struct account *account = malloc(sizeof *account);
    account->balance = 100;
    pthread_mutex_init(&account->guard, NULL);
    pthread_mutex_lock(&account->guard);
    pthread_t threads[3];
    pthread_create(&threads[0], NULL, left, NULL);
    pthread_create(&threads[1], NULL, right, NULL);
    pthread_create(&threads[2], NULL, auditor, account);
    for (int i = 0; i < 3; i++) {
        while (__atomic_load_n(&tids[i], __ATOMIC_SEQ_CST) == 0 || !in_futex(tids[i])) {
            usleep(1000);
        }
    }
    printf("all stuck\n"); /* all stuck */
    fflush(stdout);
    pthread_join(threads[0], NULL);
    return 0;
}
