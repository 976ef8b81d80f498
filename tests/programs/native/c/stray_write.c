/* A record whose checksum is overwritten by a stray write: fill_scores writes one score past the end of
   scores[], over checksum. The reverse-execution tests find that write by running backwards from the report to
   a watchpoint on checksum. With an argument N it first spins N rounds (many instructions to record). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct account {
    char name[8];
    int scores[4];
    int checksum;
};

static struct account table;

static void fill_scores(int *scores, int count) {
    for (int i = 0; i <= count; i++) { /* the bug: <= writes scores[count] */
        scores[i] = i * 10; /* marker: stray write */
    }
}

static int total_of(const int *scores, int count) {
    int total = 0; /* marker: total body */
    for (int i = 0; i < count; i++) {
        total += scores[i];
    }
    return total;
}

static long spin(long rounds) {
    long sum = 0;
    for (long i = 0; i < rounds; i++) {
        sum += i % 7;
    }
    return sum;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 0;
    strcpy(table.name, "alice"); /* marker: start */
    table.checksum = 1234; /* marker: checksum set */
    fill_scores(table.scores, 4); /* marker: fill call */
    int total = total_of(table.scores, 4); /* marker: total call */
    long spun = spin(rounds); /* marker: spin call */
    printf("%s total=%d checksum=%d spun=%ld\n", table.name, total, table.checksum, spun); /* marker: report */
    return table.checksum == 1234 ? 0 : 1;
}
