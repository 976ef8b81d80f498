/* Secrets in C strings and a struct (tests/integration/test_secrets.py). */
#include <stdio.h>

struct login {
    const char *user;
    const char *token;
};

int main(void) {
    const char *password = "hunter2-c-string";
    struct login login = {"bob", "glpat-abcdefghij1234567890"};
    const char *passage = "an ordinary word";
    printf("%s %s %s\n", login.user, passage, password[0] ? "set" : "unset");  /* stop here */
    return 0;
}
