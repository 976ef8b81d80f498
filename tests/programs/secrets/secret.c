/* Secrets in C strings and a struct (tests/integration/test_secrets.py); the literals stay out of the stop's
   excerpt. */
#include <stdio.h>

struct login {
    const char *user;
    const char *token;
};

static const char *PASSWORD = "hunter2-c-string";
static const char *TOKEN = "glpat-abcdefghij1234567890";
/* */
/* */

int main(void) {
    const char *password = PASSWORD;
    struct login login = {"bob", TOKEN};
    const char *passage = "an ordinary word";
    printf("%s %s %s\n", login.user, passage, password[0] ? "set" : "unset");  /* stop here */
    return 0;
}
