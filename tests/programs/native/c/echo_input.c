/* Reads lines from its standard input and echoes them, then says how many there were. */
#include <stdio.h>
#include <string.h>

int main(void) {
    char line[256];
    int count = 0;
    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\n")] = '\0';
        printf("got: %s\n", line);
        count++;
    }
    printf("lines: %d\n", count);
    return 0;
}
