/* The attnrank executable: all behaviour lives in ar_cli_main so tests and
 * fuzzers can call it in-process. */
#include "cli.h"

int main(int argc, char **argv)
{
    return ar_cli_main(argc, argv);
}
