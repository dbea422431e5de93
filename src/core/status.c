#include "attnrank/status.h"
#include "attnrank/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const status_text[AR_NSTATUS] = {
    [AR_OK] = "success",
    [AR_EINVAL] = "invalid argument",
    [AR_ENOMEM] = "out of memory",
    [AR_ENONFINITE] = "non-finite value (NaN or Inf) in input",
    [AR_ENOCONV] = "iteration did not converge",
    [AR_EIO] = "input/output error",
    [AR_EFORMAT] = "malformed file",
    [AR_EUNSUPPORTED] = "unsupported format or layout",
    [AR_EDOMAIN] = "input outside the domain of the computation",
    [AR_ELAPACK] = "LAPACK rejected an argument (internal error)",
    [AR_ESIZE] = "operand sizes do not agree",
};

const char *ar_strerror(int status)
{
    if (status < 0 || status >= AR_NSTATUS || status_text[status] == NULL)
        return "unknown status";
    return status_text[status];
}

int ar_error_set(ar_error *err, int status, const char *fmt, ...)
{
    if (err != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return status;
}

int ar_error_printable(ar_error *err, int rc)
{
    if (err != NULL && rc != AR_OK)
        for (char *p = err->msg; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f)
                *p = '?';
    return rc;
}

/* ---- option tokens (status.h) ---- */

/* Longest name and value a token may carry; longer ones are not tokens. */
enum { TOKEN_NAME_MAX = 48, TOKEN_VALUE_MAX = 256 };

typedef struct option_token {
    int is_switch;                   /* {flag:NAME} */
    char name[TOKEN_NAME_MAX + 1];
    char value[TOKEN_VALUE_MAX + 1]; /* "" when the token has none */
    int has_value;
    size_t length;                   /* characters of the token in the text */
} option_token;

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

/* Parse a token at text (which starts with '{'); 0 when it is one. */
static int parse_token(const char *text, option_token *t)
{
    const char *p;
    memset(t, 0, sizeof *t);
    if (strncmp(text, "{opt:", 5) == 0)
        p = text + 5;
    else if (strncmp(text, "{flag:", 6) == 0)
        p = text + 6, t->is_switch = 1;
    else
        return -1;
    size_t n = 0;
    while (name_char(p[n]) && n < TOKEN_NAME_MAX)
        n++;
    if (n == 0 || (p[n] != '}' && p[n] != '='))
        return -1;
    memcpy(t->name, p, n);
    p += n;
    if (*p == '=') {
        if (t->is_switch)
            return -1;
        const char *close = strchr(++p, '}');
        if (close == NULL || (size_t)(close - p) > TOKEN_VALUE_MAX)
            return -1;
        memcpy(t->value, p, (size_t)(close - p));
        t->has_value = 1;
        p = close;
    }
    t->length = (size_t)(p + 1 - text);
    return 0;
}

/* A value Python shows bare: a decimal number, or a metavariable such as EPS
 * or PATH (capitals, digits and '_', from a capital). */
static int python_bare(const char *v)
{
    if (v[0] >= 'A' && v[0] <= 'Z') {
        for (const char *c = v; *c; c++)
            if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
                return 0;
        return 1;
    }
    if (v[0] == '\0' || strspn(v, "0123456789.eE+-") != strlen(v))
        return 0;
    char *end = NULL;
    (void)strtod(v, &end);
    return end != v && *end == '\0';
}

/* The token's spelling in style, into out (at most cap characters plus NUL;
 * never longer than the token itself, see ar_option_render). */
static void spell_token(const option_token *t, ar_option_style style, char *out, size_t cap)
{
    if (style != AR_OPTION_STYLE_PYTHON) {
        snprintf(out, cap + 1, "--%s%s%s", t->name, t->has_value ? " " : "", t->value);
        return;
    }
    char name[TOKEN_NAME_MAX + 1];
    size_t k = 0;
    for (; t->name[k]; k++)
        name[k] = t->name[k] == '-' ? '_' : t->name[k];
    name[k] = '\0';
    if (t->is_switch)
        snprintf(out, cap + 1, "%s=True", name);
    else if (!t->has_value || python_bare(t->value))
        snprintf(out, cap + 1, "%s=%s", name, t->value);
    else
        snprintf(out, cap + 1, "%s='%s'", name, t->value);
}

char *ar_option_render(char *text, ar_option_style style)
{
    if (text == NULL)
        return NULL;
    /* Every spelling is shorter than its token (the 6 or 7 characters of
     * "{opt:" "=" "}" or "{flag:" "}" against at most "--" " ", "=" and two
     * quotes, or "=True"), so the write position never passes the read
     * position and the text is rewritten front to back in place. */
    size_t r = 0, w = 0;
    while (text[r] != '\0') {
        option_token t;
        if (text[r] == '{' && parse_token(text + r, &t) == 0) {
            char spelled[TOKEN_NAME_MAX + TOKEN_VALUE_MAX + 16];
            spell_token(&t, style, spelled, t.length);
            size_t len = strlen(spelled);
            memmove(text + w, spelled, len);
            w += len;
            r += t.length;
        } else {
            text[w++] = text[r++];
        }
    }
    text[w] = '\0';
    return text;
}

const char *ar_error_message(ar_error *err, int status, ar_option_style style)
{
    if (err == NULL || err->msg[0] == '\0')
        return ar_strerror(status);
    return ar_option_render(err->msg, style);
}

const char *ar_version(void)
{
    return AR_VERSION_STRING;
}

int ar_version_number(void)
{
    return AR_VERSION_NUMBER;
}
