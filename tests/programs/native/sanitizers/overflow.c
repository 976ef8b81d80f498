/* A heap buffer overflow (ASan) and, with "free" as its argument, a use after free. */
#include <stdlib.h>
#include <string.h>

static char *make(size_t size) {
    return malloc(size); /* allocated here */
}

int main(int argc, char **argv) {
    char *name = make(10);
    strcpy(name, "short");
    if (argc > 1 && strcmp(argv[1], "free") == 0) {
        free(name); /* freed here */
        return name[0] == 's'; /* reads freed memory */
    }
    name[10] = 'x'; /* writes past the end */
    free(name);
    return 0;
}
