// A call trace's callees under gdb and lldb: a chain three levels below total (weight → scale → clamp, strlen of
// libc's not one of them), a recursion (countdown), a callee that leaves by a longjmp (bail, under guarded), a call
// through a pointer (apply), a thread whose clamp is nobody's callee (spawn waits for it), and weight and countdown
// called again from main, where they are nobody's callees either.
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

static jmp_buf escape;
static int spawned;

int clamp(int x) {
    return x > 100 ? 100 : x;
}

int scale(int x) {
    return clamp(x * 10);
}

int weight(const char *word) {
    return scale((int)strlen(word));
}

int countdown(int n) {
    if (n == 0) return 0;
    return 1 + countdown(n - 1);
}

void bail(int n) {
    if (n == 0) longjmp(escape, 1);
    bail(n - 1);
}

int guarded(int n) {
    if (setjmp(escape)) return -1;
    bail(n);
    return 0;
}

int apply(int (*f)(int), int x) {
    return f(x);
}

static void *worker(void *arg) {
    (void)arg;
    spawned = clamp(500);
    return NULL;
}

int spawn(void) {
    pthread_t thread;
    pthread_create(&thread, NULL, worker, NULL);
    pthread_join(thread, NULL);
    return spawned;
}

int total(const char **words, int count) {
    int sum = 0;
    for (int i = 0; i < count; i++) sum += weight(words[i]);
    return sum + countdown(2) + guarded(1) + spawn() + apply(clamp, 7);
}

int main(void) {
    const char *words[] = {"a", "bb"};
    printf("total %d\n", total(words, 2));
    printf("after %d %d\n", weight("ccc"), countdown(1));
    return 0;
}
