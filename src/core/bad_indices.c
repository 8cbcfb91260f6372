/* bad_indices.c — ndx_bad_indices_parse: the words for a bad-index policy, the one vocabulary of
 * the CLI's --bad-indices, Python's bad_indices= and the graph text form's bad_indices=. */
#include <stdio.h>

#include "core.h"

/* A word in a message: quoted, and cut to its first 64 bytes. */
#define SHOWN_MAX 64

ndx_status ndx_bad_indices_parse(const char *word, const char *alias, ndx_bad_indices *out,
                                 ndx_error *err) {
    ndx_error_clear(err);
    if (alias && !*alias) alias = NULL;
    char words[160];
    if (alias)
        snprintf(words, sizeof words, "'error', 'ignore' or '%.*s' (the same as 'ignore')",
                 SHOWN_MAX, alias);
    else
        snprintf(words, sizeof words, "'error' or 'ignore'");
    if (!out) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "bad_indices: out is NULL");
    if (!word)
        return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "bad_indices is NULL; it must be %s", words);
    if (strcmp(word, "error") == 0) {
        *out = NDX_BAD_INDICES_ERROR;
        return NDX_OK;
    }
    if (strcmp(word, "ignore") == 0 || (alias && strcmp(word, alias) == 0)) {
        *out = NDX_BAD_INDICES_IGNORE;
        return NDX_OK;
    }
    return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "bad_indices must be %s, not '%.*s'%s", words,
                    SHOWN_MAX, word, strlen(word) > SHOWN_MAX ? "..." : "");
}
