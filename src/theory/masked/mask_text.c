/* A mask as a face's option names it: a kind of the mask syntax, checked
 * at the map's size, or one of the two names that only make sense with a
 * map ("auto": infer it from the map's exact zeros; "file:PATH": a 0/1
 * pattern the caller reads).  The CLI's --mask, Python's mask= and check's
 * configurations read their text here, so the refusals are worded once. */
#include <stdio.h>
#include <string.h>

#include "attnrank/mask.h"

/* Replace err's message by prefix + ": " + the message (prefix a format
 * with one %s, the text). */
static int prefixed(ar_error *err, int rc, const char *text)
{
    if (err == NULL)
        return rc;
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return text != NULL ? ar_error_set(err, rc, "{opt:mask=%.100s}: %s", text, msg)
                        : ar_error_set(err, rc, "{opt:mask}: %s", msg);
}

int ar_mask_from_text(const char *text, size_t n, int for_map, ar_mask *mask,
                      ar_mask_text_kind *kind, ar_error *err)
{
    if (text == NULL || mask == NULL)
        return ar_error_set(err, AR_EINVAL, "NULL argument");
    *mask = ar_mask_none();
    ar_mask_text_kind k = strcmp(text, "auto") == 0         ? AR_MASK_TEXT_AUTO
                          : strncmp(text, "file:", 5) == 0 ? AR_MASK_TEXT_FILE
                                                            : AR_MASK_TEXT_NAMED;
    if (kind != NULL)
        *kind = k;
    if (k != AR_MASK_TEXT_NAMED && !for_map) {
        char kinds[256];
        ar_mask_syntax_list(kinds, sizeof kinds, 0);
        return ar_error_set(err, AR_EINVAL,
                            "{opt:mask=%.100s} needs an attention map; here give a kind (%s)",
                            text, kinds);
    }
    if (k == AR_MASK_TEXT_FILE && text[5] == '\0')
        return ar_error_set(err, AR_EINVAL, "{opt:mask=file:} needs a path (file:PATH)");
    if (k != AR_MASK_TEXT_NAMED)
        return AR_OK;
    int rc = ar_mask_parse(text, mask, err);
    if (rc != AR_OK)
        return prefixed(err, rc, NULL);
    if (n > 0 && (rc = ar_mask_check_size(mask, n, err)) != AR_OK) {
        ar_mask_free(mask);
        return prefixed(err, rc, text);
    }
    return AR_OK;
}
