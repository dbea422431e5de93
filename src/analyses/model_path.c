/* The analyses of a model on disk: open its tensors (a directory, a
 * .safetensors file or an index), read the config.json beside them unless
 * told not to, and run the weights or circuits analysis of the opened model.
 * Both faces start from a path; the opening, the config rule and the order
 * of the checks are written here once. */
#include <string.h>

#include "weights_internal.h"
#include "attnrank/circuits_model.h"

/* The model at path and, when read_config, the config.json beside it
 * (*found 1) or none (*found 0, cfg zeroed). *st is the caller's to close,
 * also on failure (NULL when opening failed). */
static int open_model(const char *path, int read_config, ar_safetensors **st,
                      ar_model_config *cfg, int *found, ar_error *err)
{
    *st = NULL;
    *found = 0;
    memset(cfg, 0, sizeof *cfg);
    if (path == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL model path");
    int rc = ar_safetensors_open(st, path, err);
    if (rc == AR_OK && read_config)
        rc = ar_model_config_read_beside(ar_safetensors_dir(*st), cfg, found, err);
    return rc;
}

int ar_weights_analyze_path(const char *path, int read_config, const ar_weights_opts *opts,
                            ar_weights_report *rep, ar_error *err)
{
    if (rep == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(rep, 0, sizeof *rep);
    /* the options first: a bad option is reported before any file is read */
    int rc = ar_weights_opts_check(opts, err);
    ar_safetensors *st = NULL;
    ar_model_config cfg;
    int found = 0;
    if (rc == AR_OK)
        rc = open_model(path, read_config, &st, &cfg, &found, err);
    if (rc == AR_OK)
        rc = ar_weights_analyze_model(st, found ? &cfg : NULL, opts, rep, err);
    ar_safetensors_close(st);
    return ar_error_printable(err, rc);
}

int ar_circuits_analyze_path(const char *path, int read_config, const ar_circuits_opts *opts,
                             ar_circuits_report *rep, ar_error *err)
{
    if (rep == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    memset(rep, 0, sizeof *rep);
    ar_safetensors *st = NULL;
    ar_model_config cfg;
    int found = 0;
    int rc = open_model(path, read_config, &st, &cfg, &found, err);
    if (rc == AR_OK)
        rc = ar_circuits_analyze_model(st, found ? &cfg : NULL, opts, rep, err);
    ar_safetensors_close(st);
    return ar_error_printable(err, rc);
}
