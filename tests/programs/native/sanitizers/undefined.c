/* Undefined behaviour UBSan reports: a signed overflow. */
#include <limits.h>
#include <stdio.h>

static int next(int value) {
    return value + 1; /* overflows */
}

int main(void) {
    printf("%d\n", next(INT_MAX));
    return 0;
}
