/* Dereferences a null pointer: the debugger must stop here with SIGSEGV. */
#include <stdio.h>

struct node {
    int value;
    struct node *next;
};

int second_value(struct node *head) {
    struct node *next = head->next;
    return next->value;    /* faults: next is NULL */
}

int main(void) {
    struct node only = {42, NULL};
    printf("about to crash\n");
    fflush(stdout);
    return second_value(&only);
}
