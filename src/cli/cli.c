#include "cli.h"

#include <flint/flint.h>
#include <stdio.h>
#include <string.h>

typedef struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} cli_command;

/* One line per subcommand; the order is the order of `attnrank --help`. */
static const cli_command commands[] = {
    {"spectrum", cmd_spectrum, "singular spectrum, numerical rank and rank metrics"},
    {"heads", cmd_heads, "head-size bound and low-rank bottleneck of a layer"},
    {"params", cmd_params, "BERT-style parameter counts; the paper's fifteen configurations"},
    {"represent", cmd_represent, "can one head produce this attention matrix? exact minimal head size"},
    {"softmax-bottleneck", cmd_softmax_bottleneck, "can an output layer of width d express P? (Yang et al. 2018)"},
    {"weights", cmd_weights, "QK-circuit spectra and head-size verdicts of a model's safetensors weights"},
    {"circuits", cmd_circuits, "OV copying scores, QK spectra and composition scores of a model's heads"},
    {"seprank", cmd_seprank, "separation rank of self-attention by grid tensors (exact and float)"},
    {"depthwidth", cmd_depthwidth, "depth/width allocation from the transition law; refit it"},
    {"collapse", cmd_collapse, "rank collapse of attention across depth (Dong et al. 2021)"},
    {"check", cmd_check, "gate a model configuration on theorem conditions (for CI)"},
    {"verify", cmd_verify, "re-verify the toolkit's theoretical claims (report, JSON, JUnit)"},
};

static void print_main_help(void)
{
    printf("usage: attnrank SUBCOMMAND [options]\n\n"
           "Exact linear algebra for the rank and expressivity of attention.\n\n"
           "subcommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        printf("  %-20s %s\n", commands[i].name, commands[i].summary);
    printf("\nglobal options:\n  --help      show this help\n  --version   print the version\n"
           "\n`attnrank SUBCOMMAND --help` describes each subcommand.\n"
           "Exit status: 0 ok, 1 a checked condition failed, 2 bad input, 3 internal error.\n");
}

/* The subcommand list as data, for scripts/gen-man. */
static int print_main_help_json(void)
{
    json_t *list = json_array();
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        json_array_append_new(list, json_pack("{s:s, s:s}", "name", commands[i].name, "summary",
                                              commands[i].summary));
    return cli_json_print(json_pack("{s:s, s:s, s:o}", "version", ar_version(), "summary",
                                    "Exact linear algebra for the rank and expressivity of "
                                    "attention.",
                                    "subcommands", list));
}

int ar_cli_main(int argc, char **argv)
{
    cli_setup_process();
    if (argc < 2)
        return cli_usage_error(NULL, "missing SUBCOMMAND (see attnrank --help)");
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        print_main_help();
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--help-json") == 0)
        return print_main_help_json();
    if (strcmp(name, "--version") == 0) {
        printf("attnrank %s\n", ar_version());
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(name, commands[i].name) == 0) {
            int rc = commands[i].run(argc - 1, argv + 1);
            fflush(stdout);
            /* FLINT keeps per-thread caches until told otherwise; release
             * them so every run ends with nothing allocated. */
            flint_cleanup();
            return rc;
        }
    return cli_usage_error(NULL, "unknown subcommand '%s' (see attnrank --help)", name);
}
