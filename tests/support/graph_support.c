/* graph_support.c — see graph_support.h. */
#include "graph_support.h"

#include "ndx_test.h"

void test_dims_are(ndx_output o, const char *want) {
    char dims[NDX_DIMS_TEXT];
    ndx_spec spec = ndx_output_spec(o);
    ndx_format_spec_dims(dims, sizeof dims, &spec);
    assert_string_equal(dims, want);
}

ndx_output test_const(ndx_scope s, ndx_dtype dt, int rank, const int64_t *shape,
                      const void *values) {
    ndx_tensor t = ndx_tensor_make(dt, rank, shape, (void *)values);
    return ndx_op_const(s, &t);
}

ndx_output test_const_f32(ndx_scope s, int rank, const int64_t *shape, const float *values) {
    return test_const(s, NDX_FLOAT32, rank, shape, values);
}

ndx_output test_const_i32(ndx_scope s, int rank, const int64_t *shape, const int32_t *values) {
    return test_const(s, NDX_INT32, rank, shape, values);
}

ndx_session *test_session(ndx_graph *g, const ndx_session_options *opt) {
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    ndx_session *s = ndx_session_new(g, opt, &err);
    if (!s) fail_msg("ndx_session_new: %s", err.message);
    return s;
}

ndx_graph *test_graph_reads_back(const char *text, const char *name) {
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(text, strlen(text), name, &err);
    assert_non_null(g);
    char *again;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &again, &len, &err), &err);
    assert_string_equal(again, text);
    free(again);
    return g;
}

ndx_tensor test_run_one(ndx_graph *g, ndx_output o, int num_feeds, const ndx_feed *feeds) {
    ndx_error err;
    ndx_session *s = ndx_session_new(g, NULL, &err);
    assert_non_null(s);
    ndx_fetch f = {o, NDX_FETCH_ALLOCATE, {0}};
    assert_ok(ndx_session_run(s, num_feeds, feeds, 1, &f, &err), &err);
    ndx_session_free(s);
    return f.value;
}
