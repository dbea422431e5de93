/* The depth-width law a command applies: the paper's, a refit from the
 * user's transition points (--fit), or one read back from a JSON file
 * (--law, e.g. what `depthwidth --fit --json` printed).  Shared by
 * `depthwidth` and `check`, so both read the same files the same way. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

void cli_law_init(cli_law *law)
{
    memset(law, 0, sizeof *law);
    law->law = ar_dw_law_paper();
    law->source = "paper";
}

int cli_law_fit(const char *cmd, const char *path, cli_law *law)
{
    /* Transition points are a CSV matrix of 2 or 3 columns; malformed
     * content is a format error whatever the CSV layer called it ("no data
     * rows" included), I/O and memory failures keep their codes. */
    ar_array arr = {0};
    ar_error err = {{0}};
    int rc = ar_csv_read(path, &arr, &err);
    if (rc != AR_OK) {
        ar_array_free(&arr);
        return cli_status_error(cmd, rc == AR_EIO || rc == AR_ENOMEM ? rc : AR_EFORMAT, &err,
                                NULL);
    }
    rc = ar_dw_fit_table(ar_array_slice(&arr, 0), &law->fit, &err);
    ar_array_free(&arr);
    if (rc == AR_ESIZE)
        rc = AR_EFORMAT;
    if (rc != AR_OK)
        return cli_status_error(cmd, rc, &err, path);
    law->law.intercept = law->fit.intercept;
    law->law.slope = law->fit.slope;
    law->have_fit = 1;
    law->fit_file = path;
    law->source = "fit";
    return -1;
}

int cli_law_read(const char *cmd, const char *path, cli_law *law)
{
    ar_error err = {{0}};
    int rc = ar_dw_law_read_file(path, &law->law, &err);
    if (rc != AR_OK)
        return cli_status_error(cmd, rc, &err, NULL);
    law->source = path;
    return -1;
}

void cli_law_file_into_fit(json_t *record, const char *file)
{
    json_t *fit = json_object_get(record, "fit");
    if (fit != NULL)
        json_object_set_new(record, "fit",
                            cli_json_prepend("file", json_string(file), json_incref(fit)));
}
