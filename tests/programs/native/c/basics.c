/* Breakpoints, stepping, locals, structs, globals, watchpoints and memory for the lldb-dap tests. */
#include <stdio.h>
#include <string.h>

struct point {
    int x;
    int y;
};

int counter = 0;           /* watched: written in bump() */
char greeting[16] = "hello, native";

int add(int a, int b) {
    int total = a + b;     /* in add */
    return total;
}

void bump(int by) {
    counter += by;         /* writes counter */
}

int scale(struct point *p, int factor) {
    p->x *= factor;        /* in scale */
    p->y *= factor;
    return p->x + p->y;
}

int main(void) {
    struct point origin = {3, 4};
    int sum = 0;
    for (int i = 0; i < 5; i++) {
        sum = add(sum, i); /* loop body */
    }
    int scaled = scale(&origin, 2);
    bump(7);
    bump(35);
    printf("%s sum=%d scaled=%d counter=%d\n", greeting, sum, scaled, counter);
    return 0;              /* before exit */
}
