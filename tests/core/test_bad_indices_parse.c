/* test_bad_indices_parse.c — ndx_bad_indices_parse, the one reader of the bad-index words (the
 * CLI's --bad-indices, Python's and the text form's bad_indices=): every accepted word with and
 * without the op's alias, words it refuses and what the refusal says, and that a refusal leaves
 * *out as it was. */
#include <stdio.h>

#include "ndx_test.h"

/* The policy read from `word`, which must be accepted. */
static ndx_bad_indices accepted(const char *word, const char *alias) {
    ndx_bad_indices out = (ndx_bad_indices)99;
    ndx_error err = {NDX_E_IO, "stale"};
    assert_int_equal(ndx_bad_indices_parse(word, alias, &out, &err), NDX_OK);
    assert_int_equal(err.code, NDX_OK); /* a success clears a stale error */
    assert_string_equal(err.message, "");
    return out;
}

/* Refuses `word`, leaving out alone, with exactly message `want`. */
static void refused(const char *word, const char *alias, const char *want) {
    ndx_bad_indices out = (ndx_bad_indices)99;
    ndx_error err;
    assert_int_equal(ndx_bad_indices_parse(word, alias, &out, &err), NDX_E_INVALID_ARGUMENT);
    assert_int_equal(err.code, NDX_E_INVALID_ARGUMENT);
    assert_int_equal((int)out, 99);
    assert_string_equal(err.message, want);
}

static void error_and_ignore_with_every_alias(void **state) {
    (void)state;
    const char *aliases[] = {NULL, "", "zero", "skip"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(accepted("error", aliases[i]), NDX_BAD_INDICES_ERROR);
        assert_int_equal(accepted("ignore", aliases[i]), NDX_BAD_INDICES_IGNORE);
    }
}

static void the_alias_reads_as_ignore(void **state) {
    (void)state;
    assert_int_equal(accepted("zero", "zero"), NDX_BAD_INDICES_IGNORE);
    assert_int_equal(accepted("skip", "skip"), NDX_BAD_INDICES_IGNORE);
}

static void another_ops_alias_is_refused(void **state) {
    (void)state;
    refused("skip", "zero",
            "bad_indices must be 'error', 'ignore' or 'zero' (the same as 'ignore'), not 'skip'");
    refused("zero", "skip",
            "bad_indices must be 'error', 'ignore' or 'skip' (the same as 'ignore'), not 'zero'");
    refused("zero", NULL, "bad_indices must be 'error' or 'ignore', not 'zero'");
    refused("skip", "", "bad_indices must be 'error' or 'ignore', not 'skip'");
}

static void words_are_exact(void **state) {
    (void)state;
    refused("", NULL, "bad_indices must be 'error' or 'ignore', not ''");
    refused("", "", "bad_indices must be 'error' or 'ignore', not ''");
    refused("Error", "zero",
            "bad_indices must be 'error', 'ignore' or 'zero' (the same as 'ignore'), not 'Error'");
    refused("IGNORE", NULL, "bad_indices must be 'error' or 'ignore', not 'IGNORE'");
    refused("ignore ", NULL, "bad_indices must be 'error' or 'ignore', not 'ignore '");
    refused("err", NULL, "bad_indices must be 'error' or 'ignore', not 'err'");
    refused("zeros", "zero",
            "bad_indices must be 'error', 'ignore' or 'zero' (the same as 'ignore'), not 'zeros'");
    refused("1", NULL, "bad_indices must be 'error' or 'ignore', not '1'");
}

static void null_and_long_words(void **state) {
    (void)state;
    refused(NULL, "skip", "bad_indices is NULL; it must be 'error', 'ignore' or 'skip' (the same "
                          "as 'ignore')");
    refused(NULL, NULL, "bad_indices is NULL; it must be 'error' or 'ignore'");
    char longer[200], want[300];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    snprintf(want, sizeof want, "bad_indices must be 'error' or 'ignore', not '%.64s'...", longer);
    refused(longer, NULL, want);
    /* No error struct: the status alone. No out: refused. */
    ndx_bad_indices out = NDX_BAD_INDICES_ERROR;
    assert_int_equal(ndx_bad_indices_parse("ignore", "zero", &out, NULL), NDX_OK);
    assert_int_equal(out, NDX_BAD_INDICES_IGNORE);
    assert_int_equal(ndx_bad_indices_parse("nope", "zero", &out, NULL), NDX_E_INVALID_ARGUMENT);
    assert_int_equal(out, NDX_BAD_INDICES_IGNORE);
    ndx_error err;
    assert_int_equal(ndx_bad_indices_parse("error", NULL, NULL, &err), NDX_E_INVALID_ARGUMENT);
    assert_string_equal(err.message, "bad_indices: out is NULL");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(error_and_ignore_with_every_alias),
        cmocka_unit_test(the_alias_reads_as_ignore),
        cmocka_unit_test(another_ops_alias_is_refused),
        cmocka_unit_test(words_are_exact),
        cmocka_unit_test(null_and_long_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
