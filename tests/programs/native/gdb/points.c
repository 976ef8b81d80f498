/* A small C program for the gdb backend tests: structs, a loop, a global to watch, output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct point {
    int x;
    int y;
};

struct shape {
    const char *name;
    struct point corners[2];
    struct point *origin;
};

int counter = 0;

int add(int a, int b) {
    int total = a + b; /* marker: add body */
    return total;
}

int scale(struct point *p, int factor) {
    p->x *= factor; /* marker: scale body */
    p->y *= factor;
    counter += 1; /* marker: counter write */
    return p->x + p->y;
}

int main(int argc, char **argv) {
    struct point origin = {1, 2};
    struct shape box = {"box", {{0, 0}, {3, 4}}, &origin};
    int sum = 0;
    printf("start %s\n", box.name);
    fflush(stdout);
    for (int i = 0; i < 5; i++) {
        sum = add(sum, i); /* marker: loop call */
    }
    int area = scale(&box.corners[1], 2); /* marker: scale call */
    printf("sum=%d area=%d counter=%d\n", sum, area, counter); /* marker: after scale */
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        int *nowhere = NULL;
        *nowhere = sum; /* marker: crash */
    }
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        getchar(); /* marker: wait */
    }
    return sum == 10 ? 0 : 3;
}
