/* test_graph_by_type.c — ndx_op_by_type, the generic builder of language bindings: the replace -1
 * entries program built by type name gives the same text as the typed builders give (which
 * examples/graphs/replace_minus_one.txt records), attributes take their defaults and are checked
 * against the schema, and every refusal is a deferred build error at the caller's file:line. */
#include <stdio.h>
#include <stdlib.h>

#include "ndx_test.h"

#include "ndx_graph.h"

#define U NDX_UNKNOWN

/* The replace -1 entries program with ndx_op_by_type for every node but the constants and the
 * placeholder (the typed builders' version is examples/graph_replace_minus_one.c). */
static ndx_graph *replace_minus_one_by_type(void) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){U});
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &any);
    ndx_output minus_one = ndx_op_const_float(s, NDX_FLOAT32, -1.0);
    ndx_output in[4] = {x, minus_one};
    ndx_output ne = ndx_operation_output(ndx_op_by_type(s, "NotEqual", 2, in, 0, NULL), 0);
    ndx_attr to = {"to", NDX_INT32};
    ndx_output mask = ndx_operation_output(ndx_op_by_type(s, "Cast", 1, &ne, 1, &to), 0);
    ndx_attr parts = {"num_partitions", 2};
    in[0] = x;
    in[1] = mask;
    ndx_operation data = ndx_op_by_type(s, "DynamicPartition", 2, in, 1, &parts);
    in[0] = ndx_operation_output(data, 1);
    in[1] = ndx_op_const_float(s, NDX_FLOAT32, 1.0);
    ndx_output plus = ndx_operation_output(ndx_op_by_type(s, "AddV2", 2, in, 0, NULL), 0);
    ndx_output zero = ndx_op_const_int(s, NDX_INT32, 0), one = ndx_op_const_int(s, NDX_INT32, 1);
    ndx_attr out_type = {"out_type", NDX_INT32};
    ndx_output size = ndx_operation_output(ndx_op_by_type(s, "Size", 1, &x, 1, &out_type), 0);
    in[0] = zero;
    in[1] = size;
    in[2] = one;
    ndx_output where = ndx_operation_output(ndx_op_by_type(s, "Range", 3, in, 0, NULL), 0);
    in[0] = where;
    in[1] = mask;
    ndx_operation positions = ndx_op_by_type(s, "DynamicPartition", 2, in, 1, &parts);
    ndx_output stitch[4] = {ndx_operation_output(positions, 0), ndx_operation_output(positions, 1),
                            ndx_operation_output(data, 0), plus};
    ndx_op_by_type(ndx_scope_named(s, "y"), "DynamicStitch", 4, stitch, 0, NULL);
    return g;
}

/* The same program with the typed builders (examples/graph_replace_minus_one.c). */
static ndx_graph *replace_minus_one_typed(void) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){U});
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &any);
    ndx_output minus_one = ndx_op_const_float(s, NDX_FLOAT32, -1.0);
    ndx_output mask = ndx_op_cast(s, ndx_op_not_equal(s, x, minus_one), NDX_INT32);
    ndx_output data[2], positions[2];
    ndx_op_dynamic_partition(s, x, mask, 2, data);
    data[1] = ndx_op_add(s, data[1], ndx_op_const_float(s, NDX_FLOAT32, 1.0));
    ndx_output zero = ndx_op_const_int(s, NDX_INT32, 0), one = ndx_op_const_int(s, NDX_INT32, 1);
    ndx_output where = ndx_op_range(s, zero, ndx_op_size(s, x, NDX_INT32), one);
    ndx_op_dynamic_partition(s, where, mask, 2, positions);
    ndx_op_dynamic_stitch(ndx_scope_named(s, "y"), 2, positions, data);
    return g;
}

static char *text_of(ndx_graph *g) {
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    char *text;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    ndx_graph_free(g);
    return text;
}

/* A whole file as a NUL-terminated string. */
static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *buf = calloc(1, 1 << 16);
    assert_non_null(buf);
    size_t n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void same_text_as_typed_builders(void **state) {
    (void)state;
    char *text = text_of(replace_minus_one_by_type()), *want = text_of(replace_minus_one_typed());
    assert_string_equal(text, want);
    /* examples/graphs/replace_minus_one.txt is this program's text (tests/python/test_function.py compares
       the graph traced from Python with it) */
    char *saved = read_file(NDX_SOURCE_DIR "/examples/graphs/replace_minus_one.txt");
    assert_string_equal(text, saved);
    free(saved);
    assert_non_null(strstr(text, "DynamicPartition_1 = DynamicPartition(Range, Cast) num_partitions=2"));
    free(want);
    free(text);
}

/* Attributes not given take the schema's defaults; given ones land in the node. */
static void attributes(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 3, (const int64_t[]){2, 5, 3});
    ndx_spec is = ndx_spec_make(NDX_INT64, 3, (const int64_t[]){2, 4, 1});
    ndx_output in[2] = {ndx_op_placeholder(s, &ps), ndx_op_placeholder(s, &is)};
    ndx_attr a[2] = {{"batch_dims", 1}, {"bad_indices", NDX_BAD_INDICES_IGNORE}};
    ndx_operation op = ndx_op_by_type(s, "GatherNd", 2, in, 2, a);
    ndx_operation plain = ndx_op_by_type(s, "GatherNd", 2, in, 0, NULL);
    ndx_node node;
    ndx_error err;
    assert_ok(ndx_node_info(op, &node, &err), &err);
    assert_int_equal(node.outputs[0].rank, 3); /* [2, 4, 3]: batch_dims 1 took */
    assert_int_equal(node.outputs[0].shape[1], 4);
    assert_int_equal(node.outputs[0].shape[2], 3);
    assert_ok(ndx_node_info(plain, &node, &err), &err); /* the default batch_dims 0 */
    assert_int_equal(node.outputs[0].rank, 4);         /* [2, 4, 5, 3] */
    ndx_graph_free(g);
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    in[0] = ndx_op_placeholder(s, &ps);
    in[1] = ndx_op_placeholder(s, &is);
    ndx_attr b[2] = {{"batch_dims", 1}, {"bad_indices", NDX_BAD_INDICES_IGNORE}};
    assert_true(ndx_operation_ok(ndx_op_by_type(s, "GatherNd", 2, in, 2, b)));
    char *text;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &text, &len, &err), &err);
    assert_non_null(strstr(text, "GatherNd(Placeholder, Placeholder_1) batch_dims=1 bad_indices=ignore"));
    free(text);
    ndx_graph_free(g);
}

/* Each refusal: a failed handle, the graph's first error at this file's line, naming the op. */
static void expect_refusal(const char *type, int ni, int na, const ndx_attr *attrs,
                           const char *needle) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec f = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){U});
    ndx_output x = ndx_op_placeholder(s, &f);
    ndx_output in[3] = {x, x, x};
    int line = __LINE__ + 1;
    ndx_operation op = ndx_op_by_type(s, type, ni, in, na, attrs);
    assert_false(ndx_operation_ok(op));
    ndx_error err;
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, needle);
    char where[64];
    snprintf(where, sizeof where, "test_graph_by_type.c:%d:", line);
    if (!strstr(err.message, where)) fail_msg("'%s' lacks '%s'", err.message, where);
    /* a builder given the failed handle passes failure on; the first error stays */
    assert_false(ndx_output_ok(ndx_op_neg(s, ndx_operation_output(op, 0))));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, needle);
    ndx_graph_free(g);
}

static void refusals(void **state) {
    (void)state;
    ndx_attr parts = {"num_partitions", 2}, zero_parts = {"num_partitions", 0};
    ndx_attr bad_dtype = {"to", NDX_DTYPE_COUNT}, bad_bool = {"keep_dims", 2};
    ndx_attr bad_policy = {"bad_indices", 7}, nameless = {NULL, 0};
    ndx_attr twice[2] = {{"to", NDX_INT32}, {"to", NDX_INT64}};
    expect_refusal("NoSuchOp", 1, 0, NULL, "unknown op type 'NoSuchOp'");
    expect_refusal(NULL, 1, 0, NULL, "unknown op type '(null)'");
    expect_refusal("Const", 0, 0, NULL, "Const has its own builder (ndx_op_const)");
    expect_refusal("Placeholder", 0, 0, NULL, "ndx_op_placeholder");
    expect_refusal("Variable", 1, 0, NULL, "ndx_op_variable");
    expect_refusal("AddV2", 3, 0, NULL, "AddV2 takes 2 inputs, not 3");
    expect_refusal("DynamicStitch", 3, 0, NULL, "DynamicStitch takes an even number of inputs, not 3");
    expect_refusal("DynamicPartition", 2, 0, NULL, "DynamicPartition needs the attribute num_partitions");
    expect_refusal("DynamicPartition", 2, 1, &zero_parts, "num_partitions = 0 is not in [1,");
    expect_refusal("AddV2", 2, 1, &parts, "AddV2 takes no attribute 'num_partitions'");
    expect_refusal("Cast", 1, 1, &bad_dtype, "is not an ndx_dtype");
    expect_refusal("Cast", 1, 2, twice, "attribute 'to' is given twice");
    expect_refusal("Sum", 2, 1, &bad_bool, "keep_dims = 2 is not a bool");
    expect_refusal("GatherNd", 2, 1, &bad_policy, "is neither NDX_BAD_INDICES_ERROR nor");
    expect_refusal("Neg", 1, 1, &nameless, "Neg takes no attribute '(null)'");
    expect_refusal("AddV2", -1, 0, NULL, "a negative count");
    /* an op's own error: the dtypes of x and y differ (shape errors come from graph_build) */
    ndx_attr to = {"to", NDX_INT32};
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec f = ndx_spec_make(NDX_FLOAT32, 1, (const int64_t[]){3});
    ndx_output x = ndx_op_placeholder(s, &f);
    ndx_output in[2] = {x, ndx_operation_output(ndx_op_by_type(s, "Cast", 1, &x, 1, &to), 0)};
    assert_false(ndx_operation_ok(ndx_op_by_type(s, "AddV2", 2, in, 0, NULL)));
    ndx_error err;
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "AddV2");
    ndx_graph_free(g);
    /* a NULL graph's scope: nothing happens */
    ndx_scope none = {NULL, 0, 0};
    assert_false(ndx_operation_ok(ndx_op_by_type(none, "AddV2", 0, NULL, 0, NULL)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(same_text_as_typed_builders),
        cmocka_unit_test(attributes),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
