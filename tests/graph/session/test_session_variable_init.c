/* A Variable's initial value is computed once, by ndx_session_new, and never by a run: a run
 * that reads a variable with a 20 MiB Fill as its init asks the session's allocator for far less
 * than 20 MiB, and the variable keeps what an update made of it (a run that recomputed the init
 * would also hand the Fill's block to the pool). And a Reshape of known dims is a view: fetching
 * it gives the values of its input. A Variable node in the middle of a run does not let go of a
 * block it never read (its init's, from the run that made the session). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include <ndx_graph.h>

#include "counting_allocator.h"

enum { ROWS = 2048, COLS = 2560 }; /* 20 MiB of float32: past folding's 16 MiB */

static void a_run_does_not_compute_the_init_again(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    int64_t dims[2] = {ROWS, COLS};
    ndx_tensor dims_t = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, dims);
    ndx_output init =
        ndx_op_fill(s, ndx_op_const(s, &dims_t), ndx_op_const_float(s, NDX_FLOAT32, 1));
    ndx_output table = ndx_op_variable(ndx_scope_named(s, "table"), init);
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, (int64_t[]){1, 1});
    ndx_output ids = ndx_op_placeholder(s, &ids_spec);
    ndx_output row = ndx_op_gather_nd(s, table, ids, NULL);
    int64_t flat_dims[1] = {COLS};
    ndx_tensor flat_t = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){1}, flat_dims);
    ndx_output flat = ndx_op_reshape(s, row, ndx_op_const(s, &flat_t));
    ndx_spec grad_spec = ndx_spec_make(NDX_FLOAT32, 2, (int64_t[]){1, COLS});
    ndx_output grad = ndx_op_placeholder(s, &grad_spec);
    ndx_operation step =
        ndx_op_apply_sgd(s, table, ndx_op_const_float(s, NDX_FLOAT32, 1), grad, ids);
    ndx_error err;
    assert_int_equal(ndx_graph_finish(g, &err), NDX_OK);
    ndx_counter c = {0};
    ndx_allocator a = ndx_counting_allocator(&c);
    ndx_session_options opt = {.num_threads = 1, .allocator = &a};
    ndx_session *sess = ndx_session_new(g, &opt, &err);
    assert_non_null(sess);

    static float ones[COLS], got[COLS];
    for (int j = 0; j < COLS; j++) ones[j] = 1;
    int32_t id = 7;
    ndx_feed feeds[2] = {{ids, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){1, 1}, &id)},
                         {grad, ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){1, COLS}, ones)}};
    ndx_fetch fetch = {flat, NDX_FETCH_INTO,
                       ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){COLS}, got)};
    for (int run = 0; run < 3; run++) {
        long long before = c.bytes;
        assert_int_equal(ndx_session_run_targets(sess, 2, feeds, 1, &fetch, 1, &step, &err),
                         NDX_OK);
        assert_true(c.bytes - before < (long long)ROWS * COLS * 4 / 4);
        for (int j = 0; j < COLS; j++) assert_true(got[j] == 1.0f - (float)run); /* 1, 0, -1 */
    }
    ndx_session_free(sess);
    ndx_graph_free(g);
}

/* a = x * 2, then the Variable (its init computed when the session was made), then values
 * that could take a's block if the Variable let it go: d = a + (a + 1) * 3 must hold. */
static void a_variable_lets_go_of_nothing(void **state) {
    (void)state;
    enum { N = 1 << 16 };
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec x_spec = ndx_spec_make(NDX_FLOAT32, 1, (int64_t[]){N});
    ndx_output x = ndx_op_placeholder(s, &x_spec);
    ndx_output a = ndx_op_mul(s, x, ndx_op_const_float(s, NDX_FLOAT32, 2));
    int64_t dims[2] = {ROWS, COLS};
    ndx_tensor dims_t = ndx_tensor_make(NDX_INT64, 1, (int64_t[]){2}, dims);
    ndx_output table = ndx_op_variable(
        ndx_scope_named(s, "table"),
        ndx_op_fill(s, ndx_op_const(s, &dims_t), ndx_op_const_float(s, NDX_FLOAT32, 1)));
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, (int64_t[]){1, 1});
    ndx_output ids = ndx_op_placeholder(s, &ids_spec);
    ndx_output row = ndx_op_gather_nd(s, table, ids, NULL);
    ndx_output b = ndx_op_add(s, a, ndx_op_const_float(s, NDX_FLOAT32, 1));
    ndx_output c3 = ndx_op_mul(s, b, ndx_op_const_float(s, NDX_FLOAT32, 3));
    ndx_output d = ndx_op_add(s, a, c3);
    ndx_error err;
    assert_int_equal(ndx_graph_finish(g, &err), NDX_OK);
    ndx_session_options opt = {.num_threads = 1};
    ndx_session *sess = ndx_session_new(g, &opt, &err);
    assert_non_null(sess);
    static float xs[N], got[N], got_row[COLS];
    for (int i = 0; i < N; i++) xs[i] = (float)(i % 100);
    int32_t id = 3;
    ndx_feed feeds[2] = {{x, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){N}, xs)},
                         {ids, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){1, 1}, &id)}};
    ndx_fetch fetch[2] = {
        {d, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){N}, got)},
        {row, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){1, COLS}, got_row)}};
    for (int run = 0; run < 3; run++) {
        assert_int_equal(ndx_session_run(sess, 2, feeds, 2, fetch, &err), NDX_OK);
        for (int i = 0; i < N; i++) assert_true(got[i] == xs[i] * 2 + (xs[i] * 2 + 1) * 3);
        assert_true(got_row[0] == 1.0f);
    }
    ndx_session_free(sess);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_does_not_compute_the_init_again),
        cmocka_unit_test(a_variable_lets_go_of_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
