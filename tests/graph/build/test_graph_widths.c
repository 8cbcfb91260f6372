/* test_graph_widths.c — strings of different widths in graphs. TensorFlow's strings have no
 * width, so a graph node whose string inputs share one type (dynamic_stitch's data, a
 * tensor_scatter's tensor and updates, sparse_concat's values, sparse_to_dense's values and
 * default) takes them at any widths: its output has the widest, the narrower strings NUL-padded.
 * A string placeholder may leave its width open; the width then comes from each run's feed.
 * The expected outputs are written out by hand from TensorFlow's semantics. */
#include <stdio.h>
#include <string.h>

#include "contract.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static ndx_output strings_placeholder(ndx_scope s, size_t width, int rank, const int64_t *shape) {
    ndx_spec sp = ndx_spec_make(NDX_STRING, rank, shape);
    sp.itemsize = width; /* 0: open */
    return ndx_op_placeholder(s, &sp);
}

static ndx_output int_placeholder(ndx_scope s, ndx_dtype dt, int rank, const int64_t *shape) {
    ndx_spec sp = ndx_spec_make(dt, rank, shape);
    return ndx_op_placeholder(s, &sp);
}

/* Checks a string result: its width, its count and its bytes. */
static void assert_strings(const ndx_tensor *t, size_t width, int64_t count, const char *bytes) {
    assert_int_equal(t->dtype, NDX_STRING);
    assert_int_equal(t->itemsize, width);
    assert_int_equal(ndx_tensor_count(t), count);
    assert_memory_equal(t->data, bytes, (size_t)count * width);
}

/* Finishes g, runs it once with the feeds and checks the fetched y (borrowed): `count` strings
 * of `width` bytes, `bytes`. Frees the session and g. */
static void run_once(ndx_graph *g, int nfeeds, const ndx_feed *feeds, ndx_output y, size_t width,
                     int64_t count, const char *bytes) {
    ndx_session *s = test_session(g, NULL);
    ndx_fetch f = {y, NDX_FETCH_BORROW, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(s, nfeeds, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, width, count, bytes);
    ndx_session_free(s);
    ndx_graph_free(g);
}

/* ---- dynamic_stitch ------------------------------------------------------------------------ */

/* indices [0, 2] and [1]; data ["ab", "c"] (wa bytes) and ["xyz"] (wb bytes). */
static ndx_graph *stitch_graph(size_t wa, size_t wb, ndx_output *i, ndx_output *d,
                               ndx_output *y) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    i[0] = int_placeholder(s, NDX_INT32, 1, SHAPE(2));
    i[1] = int_placeholder(s, NDX_INT32, 1, SHAPE(1));
    d[0] = strings_placeholder(s, wa, 1, SHAPE(2));
    d[1] = strings_placeholder(s, wb, 1, SHAPE(1));
    *y = ndx_op_dynamic_stitch(s, 2, i, d);
    return g;
}

/* Feeds for stitch_graph: indices [0, 2] and [1], data ["ab", "c"] (2 bytes) and ["xyz"] (3),
 * which stitch to "ab", "xyz", "c". */
static void stitch_feeds(const ndx_output *i, const ndx_output *d, ndx_feed feeds[4]) {
    static int32_t i0[2] = {0, 2}, i1[1] = {1};
    static char d0[2][2] = {{'a', 'b'}, {'c', 0}}, d1[1][3] = {{'x', 'y', 'z'}};
    feeds[0] = (ndx_feed){i[0], ndx_tensor_make(NDX_INT32, 1, SHAPE(2), i0)};
    feeds[1] = (ndx_feed){i[1], ndx_tensor_make(NDX_INT32, 1, SHAPE(1), i1)};
    feeds[2] = (ndx_feed){d[0], ndx_tensor_string(2, 1, SHAPE(2), d0)};
    feeds[3] = (ndx_feed){d[1], ndx_tensor_string(3, 1, SHAPE(1), d1)};
}

static void stitch_of_two_widths(void **state) {
    (void)state;
    ndx_output i[2], d[2], y;
    ndx_graph *g = stitch_graph(2, 3, i, d, &y);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_spec ys = ndx_output_spec(y);
    assert_int_equal(ys.itemsize, 3); /* the widest, known at build time */
    ndx_session *s = test_session(g, NULL);
    ndx_feed feeds[4];
    stitch_feeds(i, d, feeds);
    /* all three fetch modes */
    ndx_fetch f = {y, NDX_FETCH_BORROW, {0}};
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, 3, 3, "ab\0xyzc\0\0");
    f.mode = NDX_FETCH_ALLOCATE;
    memset(&f.value, 0, sizeof f.value);
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, 3, 3, "ab\0xyzc\0\0");
    ndx_tensor_free(&f.value);
    char into[3][3];
    memset(into, '#', sizeof into);
    f.mode = NDX_FETCH_INTO;
    f.value = ndx_tensor_string(3, 1, SHAPE(3), into);
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_memory_equal(into, "ab\0xyzc\0\0", 9);
    /* a caller buffer of another width is refused, and left alone */
    char narrow[3][2];
    memset(narrow, '#', sizeof narrow);
    f.value = ndx_tensor_string(2, 1, SHAPE(3), narrow);
    assert_fails(ndx_session_run(s, 4, feeds, 1, &f, &err), &err, NDX_E_INVALID_ARGUMENT, "y");
    for (size_t k = 0; k < sizeof narrow; k++) assert_int_equal(((char *)narrow)[k], '#');
    ndx_session_free(s);
    ndx_graph_free(g);
}

/* Open widths: the width comes from each run's feeds, and may change from run to run. */
static void stitch_of_open_widths(void **state) {
    (void)state;
    ndx_output i[2], d[2], y;
    ndx_graph *g = stitch_graph(0, 0, i, d, &y);
    ndx_spec ys = ndx_output_spec(y);
    assert_int_equal(ys.itemsize, 0);
    ndx_session *s = test_session(g, NULL);
    ndx_feed feeds[4];
    stitch_feeds(i, d, feeds);
    ndx_fetch f = {y, NDX_FETCH_BORROW, {0}};
    ndx_error err;
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, 3, 3, "ab\0xyzc\0\0");
    /* the same plan, other widths: data[0] now the wider */
    char e0[2][5] = {{'h', 'e', 'l', 'l', 'o'}, {'w', 0}}, e1[1][1] = {{'!'}};
    feeds[2].value = ndx_tensor_string(5, 1, SHAPE(2), e0);
    feeds[3].value = ndx_tensor_string(1, 1, SHAPE(1), e1);
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, 5, 3, "hello!\0\0\0\0w\0\0\0\0");
    /* and one width: no widening at all */
    feeds[3].value = ndx_tensor_string(5, 1, SHAPE(1), "xyzzy");
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_strings(&f.value, 5, 3, "helloxyzzyw\0\0\0\0");
    ndx_session_free(s);
    ndx_graph_free(g);
}

/* No memory for the widened strings: a clean failure naming the node, the caller's buffer
 * untouched, and the next run with memory succeeds. */
static void widening_without_memory(void **state) {
    (void)state;
    ndx_output i[2], d[2], y;
    ndx_graph *g = stitch_graph(0, 0, i, d, &y);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    test_allocator a;
    test_allocator_init(&a);
    ndx_session_options so = {1, 0, &a.base};
    ndx_session *s = ndx_session_new(g, &so, &err);
    assert_non_null(s);
    ndx_feed feeds[4];
    stitch_feeds(i, d, feeds);
    char into[3][3];
    memset(into, '#', sizeof into);
    ndx_fetch f = {y, NDX_FETCH_INTO, ndx_tensor_string(3, 1, SHAPE(3), into)};
    a.refuse = 1;
    ndx_status st = ndx_session_run(s, 4, feeds, 1, &f, &err);
    assert_int_not_equal(st, NDX_OK);
    assert_non_null(strstr(err.message, "DynamicStitch"));
    for (size_t k = 0; k < sizeof into; k++) assert_int_equal(((char *)into)[k], '#');
    a.refuse = 0;
    assert_ok(ndx_session_run(s, 4, feeds, 1, &f, &err), &err);
    assert_memory_equal(into, "ab\0xyzc\0\0", 9);
    ndx_session_free(s);
    assert_int_equal(a.live, 0);
    ndx_graph_free(g);
}

/* A known and an open width: the output's width is open until a run. */
static void stitch_of_known_and_open_width(void **state) {
    (void)state;
    ndx_output i[2], d[2], y;
    ndx_graph *g = stitch_graph(4, 0, i, d, &y);
    ndx_spec ys = ndx_output_spec(y);
    assert_int_equal(ys.itemsize, 0);
    ndx_graph_free(g);
}

/* Everything constant: the node is folded at build time, widened the same way. */
static void stitch_folded(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    int32_t i0[2] = {0, 2}, i1[1] = {1};
    ndx_tensor ti0 = ndx_tensor_make(NDX_INT32, 1, SHAPE(2), i0);
    ndx_tensor ti1 = ndx_tensor_make(NDX_INT32, 1, SHAPE(1), i1);
    ndx_tensor td0 = ndx_tensor_string(1, 1, SHAPE(2), "pq");
    ndx_tensor td1 = ndx_tensor_string(4, 1, SHAPE(1), "long");
    ndx_output i[2] = {ndx_op_const(s, &ti0), ndx_op_const(s, &ti1)};
    ndx_output d[2] = {ndx_op_const(s, &td0), ndx_op_const(s, &td1)};
    ndx_output y = ndx_op_dynamic_stitch(s, 2, i, d);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    const ndx_tensor *c = ndx_output_constant(y);
    assert_non_null(c);
    assert_strings(c, 4, 3, "p\0\0\0longq\0\0\0");
    ndx_graph_free(g);
}

/* The direct op still wants one width, and says that it is the width that differs. */
static void direct_stitch_names_the_width(void **state) {
    (void)state;
    int32_t i0[1] = {0}, i1[1] = {1};
    ndx_tensor idx[2] = {ndx_tensor_make(NDX_INT32, 1, SHAPE(1), i0),
                         ndx_tensor_make(NDX_INT32, 1, SHAPE(1), i1)};
    ndx_tensor data[2] = {ndx_tensor_string(1, 1, SHAPE(1), "a"),
                          ndx_tensor_string(2, 1, SHAPE(1), "bc")};
    ndx_tensor out = {0};
    ndx_error err;
    assert_fails(ndx_dynamic_stitch(2, idx, data, NULL, &out, &err), &err,
                 NDX_E_INVALID_ARGUMENT, "string width");
}

/* ---- tensor_scatter ------------------------------------------------------------------------ */

/* tensor ["ab", "cd", "ef"], updates ["WXYZ"] at [1]; the tensor is either a placeholder or
 * the result of a gather (an intermediate the scatter would update in place). */
static void tensor_scatter_wider_updates(void **state) {
    (void)state;
    for (int through_gather = 0; through_gather < 2; through_gather++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_output t = strings_placeholder(s, 2, 1, SHAPE(3));
        ndx_output idx = int_placeholder(s, NDX_INT64, 2, SHAPE(1, 1));
        ndx_output upd = strings_placeholder(s, 4, 1, SHAPE(1));
        ndx_output tensor = t;
        if (through_gather) {
            int64_t all[3][1] = {{0}, {1}, {2}};
            ndx_tensor ta = ndx_tensor_make(NDX_INT64, 2, SHAPE(3, 1), all);
            tensor = ndx_op_gather_nd(s, t, ndx_op_const(s, &ta), NULL);
        }
        ndx_output y = ndx_op_tensor_scatter_nd_update(s, tensor, idx, upd, NULL);
        ndx_spec ys = ndx_output_spec(y);
        assert_int_equal(ys.itemsize, 4);
        int64_t at[1][1] = {{1}};
        ndx_feed feeds[3] = {{t, ndx_tensor_string(2, 1, SHAPE(3), "abcdef")},
                             {idx, ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), at)},
                             {upd, ndx_tensor_string(4, 1, SHAPE(1), "WXYZ")}};
        run_once(g, 3, feeds, y, 4, 3, "ab\0\0WXYZef\0\0");
    }
}

/* The tensor wider than the updates: updated in place when it can be, the updates widened. */
static void tensor_scatter_narrower_updates(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output t = strings_placeholder(s, 0, 1, SHAPE(U));
    int64_t all[2][1] = {{0}, {1}}, at[1][1] = {{0}};
    ndx_tensor ta = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 1), all);
    ndx_tensor tat = ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), at);
    ndx_output tensor = ndx_op_gather_nd(s, t, ndx_op_const(s, &ta), NULL);
    ndx_output upd = strings_placeholder(s, 0, 1, SHAPE(1));
    ndx_output y = ndx_op_tensor_scatter_nd_update(s, tensor, ndx_op_const(s, &tat), upd, NULL);
    ndx_feed feeds[2] = {{t, ndx_tensor_string(3, 1, SHAPE(2), "abcdef")},
                         {upd, ndx_tensor_string(1, 1, SHAPE(1), "Z")}};
    run_once(g, 2, feeds, y, 3, 2, "Z\0\0def");
}

/* ---- sparse_concat and sparse_to_dense ----------------------------------------------------- */

static void sparse_concat_of_two_widths(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    int64_t ia[1][1] = {{0}}, ib[2][1] = {{0}, {1}}, sa[1] = {2}, sb[1] = {2};
    ndx_tensor tia = ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), ia);
    ndx_tensor tib = ndx_tensor_make(NDX_INT64, 2, SHAPE(2, 1), ib);
    ndx_tensor tsa = ndx_tensor_make(NDX_INT64, 1, SHAPE(1), sa);
    ndx_tensor tsb = ndx_tensor_make(NDX_INT64, 1, SHAPE(1), sb);
    ndx_output va = strings_placeholder(s, 1, 1, SHAPE(1));
    ndx_output vb = strings_placeholder(s, 0, 1, SHAPE(2));
    ndx_sparse_output in[2] = {{ndx_op_const(s, &tia), va, ndx_op_const(s, &tsa)},
                               {ndx_op_const(s, &tib), vb, ndx_op_const(s, &tsb)}};
    ndx_sparse_output y = ndx_op_sparse_concat(s, 0, 2, in, 0);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_feed feeds[2] = {{va, ndx_tensor_string(1, 1, SHAPE(1), "a")},
                         {vb, ndx_tensor_string(3, 1, SHAPE(2), "bcdefg")}};
    run_once(g, 2, feeds, y.values, 3, 3, "a\0\0bcdefg");
}

static void sparse_to_dense_wider_default(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    int64_t ix[1][1] = {{1}}, shape[1] = {3};
    ndx_tensor tix = ndx_tensor_make(NDX_INT64, 2, SHAPE(1, 1), ix);
    ndx_tensor tsh = ndx_tensor_make(NDX_INT64, 1, SHAPE(1), shape);
    ndx_tensor tdef = ndx_tensor_string(5, 0, NULL, "empty");
    ndx_output v = strings_placeholder(s, 2, 1, SHAPE(1));
    ndx_sparse_output sp = {ndx_op_const(s, &tix), v, ndx_op_const(s, &tsh)};
    ndx_output def = ndx_op_const(s, &tdef);
    ndx_output y = ndx_op_sparse_to_dense(s, sp, &def);
    ndx_spec ys = ndx_output_spec(y);
    assert_int_equal(ys.itemsize, 5);
    ndx_feed feed = {v, ndx_tensor_string(2, 1, SHAPE(1), "hi")};
    run_once(g, 1, &feed, y, 5, 3, "emptyhi\0\0\0empty");
}

/* ---- what stays an error ------------------------------------------------------------------- */

/* Strings and numbers still do not mix. */
static void mixing_stays_checked(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output i[2] = {int_placeholder(s, NDX_INT32, 1, SHAPE(1)),
                       int_placeholder(s, NDX_INT32, 1, SHAPE(1))};
    ndx_output d[2] = {strings_placeholder(s, 2, 1, SHAPE(1)),
                       int_placeholder(s, NDX_INT32, 1, SHAPE(1))};
    ndx_output y = ndx_op_dynamic_stitch(s, 2, i, d);
    assert_false(ndx_output_ok(y));
    ndx_error err;
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "dtype");
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(stitch_of_two_widths),
        cmocka_unit_test(stitch_of_open_widths),
        cmocka_unit_test(widening_without_memory),
        cmocka_unit_test(stitch_of_known_and_open_width),
        cmocka_unit_test(stitch_folded),
        cmocka_unit_test(direct_stitch_names_the_width),
        cmocka_unit_test(tensor_scatter_wider_updates),
        cmocka_unit_test(tensor_scatter_narrower_updates),
        cmocka_unit_test(sparse_concat_of_two_widths),
        cmocka_unit_test(sparse_to_dense_wider_default),
        cmocka_unit_test(mixing_stays_checked),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
