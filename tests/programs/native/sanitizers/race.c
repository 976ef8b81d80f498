/* Two threads increment one counter without a lock: a data race ThreadSanitizer reports. */
#include <pthread.h>
#include <stdio.h>

static int counter;

static void *work(void *unused) {
    for (int i = 0; i < 1000; i++) {
        counter++; /* races */
    }
    return unused;
}

int main(void) {
    pthread_t a, b;
    pthread_create(&a, NULL, work, NULL);
    pthread_create(&b, NULL, work, NULL);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("%d\n", counter);
    return 0;
}
