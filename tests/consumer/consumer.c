/* A C program built against the installed attnrank (pkg-config only). */
#include "consumer_checks.h"

int main(void)
{
    int failed = consumer_run();
    printf("C consumer: %d failed\n", failed);
    return failed != 0;
}
