/* Which axis of a stochastic map holds the queries, read from its sums
 * (attention.h: ar_axis_infer).  The faces' axis="auto" / --axis auto. */
#include "attnrank/attention.h"
#include "attnrank/bottleneck.h"

#include <math.h>
#include <stdio.h>

/* The line along axis whose sum is farthest from 1: its index and sum. */
typedef struct line_sum {
    size_t line;
    double sum;
    double defect; /* |sum - 1|; NaN never occurs (finite entries) */
} line_sum;

static line_sum worst_line(ar_cview p, ar_axis axis)
{
    line_sum worst = {0, 1.0, 0.0};
    for (size_t a = 0; a < p.rows; a++) {
        double s = 0.0;
        for (size_t b = 0; b < p.cols; b++)
            s += axis == AR_AXIS_ROW ? AR_VAT(p, a, b) : AR_VAT(p, b, a);
        if (fabs(s - 1.0) > worst.defect)
            worst = (line_sum){a, s, fabs(s - 1.0)};
    }
    return worst;
}

/* The sums of one map: which axes sum to 1 within the tolerance. */
typedef struct axis_fit {
    int row, col;
    line_sum worst_row, worst_col;
    double tol;
} axis_fit;

static int check_map(ar_cview p, const char *where, ar_error *err)
{
    if (ar_cview_check(p, err) != AR_OK)
        return ar_error_set(err, AR_EINVAL, "%sinvalid matrix view", where);
    if (p.rows == 0)
        return ar_error_set(err, AR_EINVAL, "%sempty map (0 x 0)", where);
    if (p.rows != p.cols)
        return ar_error_set(err, AR_ESIZE, "%sP must be square (n x n), got %zu x %zu", where,
                            p.rows, p.cols);
    for (size_t i = 0; i < p.rows; i++)
        for (size_t j = 0; j < p.cols; j++)
            if (!isfinite(AR_VAT(p, i, j)))
                return ar_error_set(err, AR_ENONFINITE, "%snon-finite entry %g at (%zu, %zu)",
                                    where, AR_VAT(p, i, j), i, j);
    return AR_OK;
}

static axis_fit fit_of(ar_cview p, ar_precision precision, double sum_tol)
{
    axis_fit f;
    f.tol = sum_tol >= 0.0 ? sum_tol : ar_bottleneck_default_sum_tol(p.rows, precision);
    f.worst_row = worst_line(p, AR_AXIS_ROW);
    f.worst_col = worst_line(p, AR_AXIS_COL);
    f.row = f.worst_row.defect <= f.tol;
    f.col = f.worst_col.defect <= f.tol;
    return f;
}

static int refuse_neither(const axis_fit *f, const char *where, ar_error *err)
{
    return ar_error_set(err, AR_EDOMAIN,
                        "%sneither the rows nor the columns sum to 1 (row %zu sums to %.17g, "
                        "column %zu to %.17g; tolerance %.3g): not a probability map along "
                        "either axis; check the input, or give {opt:axis=row} or {opt:axis=col} "
                        "for that axis's full check",
                        where, f->worst_row.line, f->worst_row.sum, f->worst_col.line,
                        f->worst_col.sum, f->tol);
}

static int refuse_both(const char *what, ar_error *err)
{
    return ar_error_set(err, AR_EINVAL,
                        "%s: the layout cannot be read from the sums; give {opt:axis=row} "
                        "(PyTorch layout, rows are queries) or {opt:axis=col} (the paper's "
                        "layout, columns are queries)",
                        what);
}

int ar_axis_infer(ar_cview p, ar_precision precision, double sum_tol, ar_axis *axis,
                  ar_error *err)
{
    return ar_axis_infer_stack(&p, 1, precision, sum_tol, axis, NULL, err);
}

int ar_axis_infer_stack(const ar_cview *maps, size_t count, ar_precision precision,
                        double sum_tol, ar_axis *axis, size_t *slice, ar_error *err)
{
    if (maps == NULL || axis == NULL || count == 0)
        return ar_error_set(err, AR_EINVAL, "no maps to read the axis from");
    char where[64] = "";
    /* The axes every slice so far sums to 1 along, and the first slice that
     * narrowed them to one (named when a later slice allows only the other). */
    int row = 1, col = 1;
    size_t decided = 0;
    for (size_t k = 0; k < count; k++) {
        if (slice != NULL)
            *slice = k;
        if (count > 1)
            snprintf(where, sizeof where, "slice %zu: ", k);
        int rc = check_map(maps[k], where, err);
        if (rc != AR_OK)
            return rc;
        axis_fit f = fit_of(maps[k], precision, sum_tol);
        if (!f.row && !f.col)
            return refuse_neither(&f, where, err);
        if (!(row && f.row) && !(col && f.col))
            return ar_error_set(err, AR_EDOMAIN,
                                "slice %zu is only %s-stochastic but slice %zu only "
                                "%s-stochastic: the maps of a stack share one layout; check "
                                "the stack, or give {opt:axis=row} or {opt:axis=col}",
                                decided, row ? "row" : "column", k, f.row ? "row" : "column");
        if (row && col && !(f.row && f.col))
            decided = k;
        row &= f.row;
        col &= f.col;
    }
    if (slice != NULL)
        *slice = 0;
    /* A 1 x 1 map is [1] along either axis, and both layouts are the same map. */
    if (row && col && maps[0].rows == 1) {
        *axis = AR_AXIS_COL;
        return AR_OK;
    }
    if (row && col)
        return refuse_both(count > 1 ? "in every slice rows and columns both sum to 1"
                                     : "rows and columns both sum to 1 (a doubly stochastic "
                                       "map, symmetric or a permutation, say)",
                           err);
    *axis = row ? AR_AXIS_ROW : AR_AXIS_COL;
    return AR_OK;
}
