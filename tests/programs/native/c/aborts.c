/* A failed assert: the debugger must stop at the assert, not inside abort(). */
#include <assert.h>
#include <stdio.h>

int checked_ratio(int total, int count) {
    assert(count > 0);     /* assert fails */
    return total / count;
}

int main(void) {
    printf("ratio %d\n", checked_ratio(10, 2));
    printf("ratio %d\n", checked_ratio(10, 0));
    return 0;
}
