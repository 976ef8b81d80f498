/* A watched global written by the C library (memcpy), not by the program's own code. */
#include <stdio.h>
#include <string.h>

char buffer[64];

static void fill(const char *source, size_t length) {
    memcpy(buffer, source, length); /* marker: memcpy call */
}

int main(void) {
    char text[64] = "written by memcpy, not by a line of this program";
    fill(text, sizeof text);
    printf("%s\n", buffer);
    return 0;
}
