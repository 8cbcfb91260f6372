/* test_graph_build.c — building graphs: names as TensorFlow makes them, deferred errors that name
 * the builder's line, shapes inferred on partial specs, and what constants add (folding,
 * range-checked indices, exact shapes for dynamic_partition and dynamic_stitch). */
#include <stdio.h>

#include "ndx_test.h"

#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static const char *name_of(ndx_output o) {
    ndx_node node;
    if (ndx_node_info(o.op, &node, NULL) != NDX_OK) return "(failed)";
    return node.name;
}

static void names_unique_per_scope(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope root = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, 3));
    ndx_output params = ndx_op_placeholder(root, &ps);
    ndx_output idx = test_const_i32(root, 2, SHAPE(1, 1), (int32_t[]){2});
    ndx_output a = ndx_op_gather_nd(root, params, idx, NULL);
    ndx_output b = ndx_op_gather_nd(root, params, idx, NULL);
    ndx_scope embed = ndx_scope_sub(root, "embed");
    ndx_output c = ndx_op_gather_nd(embed, params, idx, NULL);
    ndx_output d = ndx_op_gather_nd(ndx_scope_sub(embed, "inner"), params, idx, NULL);
    ndx_output e = ndx_op_gather_nd(ndx_scope_sub(root, "embed"), params, idx, NULL);
    assert_string_equal(name_of(params), "Placeholder");
    assert_string_equal(name_of(idx), "Const");
    assert_string_equal(name_of(a), "GatherNd");
    assert_string_equal(name_of(b), "GatherNd_1");
    assert_string_equal(name_of(c), "embed/GatherNd");
    assert_string_equal(name_of(d), "embed/inner/GatherNd");
    assert_string_equal(name_of(e), "embed_1/GatherNd");
    /* an exact name, found again by name */
    ndx_output f = ndx_op_identity(ndx_scope_named(embed, "rows"), a);
    assert_string_equal(name_of(f), "embed/rows");
    assert_int_equal(ndx_graph_find(g, "embed/rows").id, f.op.id);
    assert_int_equal(ndx_graph_find(g, "embed/GatherNd").id, c.op.id);
    assert_int_equal(ndx_graph_find(g, "embed").id, 0); /* a scope, not a node */
    assert_int_equal(ndx_graph_find(g, "nothing").id, 0);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    /* a name taken already is a build error, at this line */
    ndx_output dup = ndx_op_identity(ndx_scope_named(embed, "rows"), a);
    assert_false(ndx_output_ok(dup));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "\"embed/rows\" is already used");
    assert_non_null(strstr(err.message, "test_graph_build.c:"));
    ndx_graph_free(g);
}

static void bad_scope_names(void **state) {
    (void)state;
    const char *bad[] = {"", "a/b", "_x", "a b", NULL};
    for (int i = 0; i < 5; i++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_scope_sub(ndx_graph_root(g), bad[i]);
        ndx_output x = ndx_op_const_int(s, NDX_INT32, 1);
        assert_false(ndx_output_ok(x));
        ndx_error err;
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                     "is not a valid name");
        ndx_graph_free(g);
    }
}

/* The first error sticks, names the builder's file:line, the node and the dims; later builders
 * given failed handles fail quietly; a session refuses the graph with that same error. */
static void deferred_errors(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_scope_sub(ndx_graph_root(g), "embed");
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_spec is = ndx_spec_make(NDX_INT32, 2, SHAPE(U, 3));
    ndx_output params = ndx_op_placeholder(s, &ps);
    ndx_output indices = ndx_op_placeholder(s, &is);
    int line = __LINE__ + 1;
    ndx_output bad = ndx_op_gather_nd(s, params, indices, NULL); /* depth 3 > rank 2 */
    assert_false(ndx_output_ok(bad));
    ndx_error first;
    assert_fails(ndx_graph_status(g, &first), &first, NDX_E_INVALID_ARGUMENT, "gather_nd:");
    char where[64];
    snprintf(where, sizeof where, "test_graph_build.c:%d: embed/GatherNd: gather_nd:", line);
    assert_non_null(strstr(first.message, where));
    /* chains of builders on the failed handle: failed handles, the first error unchanged */
    ndx_output chain = ndx_op_add(s, bad, bad);
    chain = ndx_op_cast(s, chain, NDX_INT32);
    ndx_output parts[2];
    ndx_op_dynamic_partition(s, chain, chain, 2, parts);
    ndx_output st = ndx_op_dynamic_stitch(s, 2, parts, parts);
    ndx_sparse_output sp = ndx_op_dense_to_sparse(s, st);
    ndx_output dense = ndx_op_sparse_to_dense(s, sp, NULL);
    assert_false(ndx_output_ok(chain) || ndx_output_ok(parts[0]) || ndx_output_ok(parts[1]) ||
                 ndx_output_ok(st) || ndx_output_ok(sp.values) || ndx_output_ok(dense));
    ndx_error again;
    ndx_graph_status(g, &again);
    assert_string_equal(again.message, first.message);
    /* even good builders fail once the graph has failed */
    assert_false(ndx_output_ok(ndx_op_const_int(s, NDX_INT32, 1)));
    /* every inspector takes failed handles */
    ndx_node node;
    ndx_error err;
    assert_fails(ndx_node_info(bad.op, &node, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "failed handle");
    assert_int_equal(ndx_output_spec(bad).rank, NDX_UNKNOWN);
    assert_null(ndx_output_constant(bad));
    /* the session refuses, with the first error */
    assert_fails(ndx_graph_finish(g, &err), &err, NDX_E_INVALID_ARGUMENT, "gather_nd:");
    assert_null(ndx_session_new(g, NULL, &err));
    assert_string_equal(err.message, first.message);
    ndx_graph_free(g);
}

/* A handle made by hand, or from another graph, is refused with a message, not a crash. */
static void foreign_and_forged_handles(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new(), *h = ndx_graph_new();
    ndx_output other = ndx_op_const_int(ndx_graph_root(h), NDX_INT32, 1);
    ndx_output mine = ndx_op_const_int(ndx_graph_root(g), NDX_INT32, 1);
    ndx_error err;
    assert_false(ndx_output_ok(ndx_op_add(ndx_graph_root(g), mine, other)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "input 'y' comes from another graph");
    ndx_graph_free(g);
    g = ndx_graph_new();
    ndx_output forged = {{g, 42}, 0};
    assert_false(ndx_output_ok(ndx_op_identity(ndx_graph_root(g), forged)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "input 'x' is a failed handle");
    ndx_graph_free(g);
    ndx_graph_free(h);
    /* a NULL graph: every call still answers */
    ndx_scope none = ndx_graph_root(NULL);
    assert_false(ndx_output_ok(ndx_op_const_int(none, NDX_INT32, 1)));
    assert_fails(ndx_graph_status(NULL, &err), &err, NDX_E_NO_MEMORY, "out of memory");
    assert_int_equal(ndx_graph_node_count(NULL), 0);
    ndx_graph_free(NULL);
}

/* Partial shapes flow through the builders; node() tells name, type, inputs, specs, line. */
static void inference_and_node_info(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 3, SHAPE(U, 5, 7));
    ndx_spec is = ndx_spec_make(NDX_INT64, 2, SHAPE(U, 1));
    ndx_output params = ndx_op_placeholder(s, &ps);
    ndx_output indices = ndx_op_placeholder(s, &is);
    int line = __LINE__ + 1;
    ndx_output rows = ndx_op_gather_nd(s, params, indices, NULL);
    test_dims_are(rows, "[?, 5, 7]");
    ndx_node node;
    ndx_error err;
    assert_ok(ndx_node_info(rows.op, &node, &err), &err);
    assert_string_equal(node.name, "GatherNd");
    assert_string_equal(node.type, "GatherNd");
    assert_int_equal(node.line, line);
    assert_non_null(strstr(node.file, "test_graph_build.c"));
    assert_int_equal(node.num_inputs, 2);
    assert_int_equal(node.inputs[0].op.id, params.op.id);
    assert_int_equal(node.inputs[1].op.id, indices.op.id);
    assert_int_equal(node.num_outputs, 1);
    assert_int_equal(node.outputs[0].dtype, NDX_FLOAT32);
    /* scatter back, with an unknown-rank tensor: rank from indices and updates */
    ndx_spec ts = ndx_spec_make(NDX_FLOAT32, U, NULL);
    ndx_output t = ndx_op_placeholder(s, &ts);
    ndx_output upd = ndx_op_tensor_scatter_nd_add(s, t, indices, rows, NULL);
    test_dims_are(upd, "[?, 5, 7]");
    assert_ok(ndx_node_info(upd.op, &node, &err), &err);
    assert_string_equal(node.type, "TensorScatterAdd");
    /* dense ops: size and shape of a partly known tensor; shape is known in length only */
    test_dims_are(ndx_op_shape(s, params, NDX_INT32), "[3]");
    test_dims_are(ndx_op_size(s, params, NDX_INT64), "[]");
    assert_null(ndx_output_constant(ndx_op_size(s, params, NDX_INT64)));
    /* a dtype the op refuses, named at build time */
    ndx_output f = ndx_op_placeholder(s, &ps);
    ndx_output bad = ndx_op_gather_nd(s, params, f, NULL);
    assert_false(ndx_output_ok(bad));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "indices");
    ndx_graph_free(g);
}

/* Constants fold: values and exact shapes known at build time, through dynamic ops too. */
static void folding(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output x = test_const_i32(s, 1, SHAPE(6), (int32_t[]){10, 11, 12, 13, 14, 15});
    ndx_output ids = test_const_i32(s, 1, SHAPE(6), (int32_t[]){1, 0, 1, 1, 0, 1});
    ndx_output parts[2];
    ndx_op_dynamic_partition(s, x, ids, 2, parts);
    test_dims_are(parts[0], "[2]");
    test_dims_are(parts[1], "[4]");
    const ndx_tensor *p1 = ndx_output_constant(parts[1]);
    assert_non_null(p1);
    const int32_t want[4] = {10, 12, 13, 15};
    assert_memory_equal(p1->data, want, sizeof want);
    /* size → range → floor_mod, all at build time */
    ndx_output n = ndx_op_size(s, x, NDX_INT32);
    ndx_output r = ndx_op_range(s, ndx_op_const_int(s, NDX_INT32, 0), n,
                                ndx_op_const_int(s, NDX_INT32, 1));
    ndx_output m = ndx_op_floor_mod(s, r, ndx_op_const_int(s, NDX_INT32, 4));
    const ndx_tensor *mv = ndx_output_constant(m);
    assert_non_null(mv);
    const int32_t mods[6] = {0, 1, 2, 3, 0, 1};
    assert_memory_equal(mv->data, mods, sizeof mods);
    /* size of a placeholder with known dims folds without data */
    ndx_spec known = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(3, 4));
    const ndx_tensor *sz = ndx_output_constant(ndx_op_size(s, ndx_op_placeholder(s, &known),
                                                           NDX_INT64));
    assert_non_null(sz);
    assert_int_equal(*(int64_t *)sz->data, 12);
    /* dynamic_partition from constant partitions, data unknown: exact counts */
    ndx_spec any = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(6, U));
    ndx_output data = ndx_op_placeholder(s, &any);
    ndx_op_dynamic_partition(s, data, ids, 2, parts);
    test_dims_are(parts[0], "[2, ?]");
    test_dims_are(parts[1], "[4, ?]");
    /* dynamic_stitch from constant indices, data unknown: exact rows */
    ndx_output sidx[2] = {test_const_i32(s, 1, SHAPE(2), (int32_t[]){1, 4}),
                          test_const_i32(s, 1, SHAPE(1), (int32_t[]){2})};
    ndx_spec ds0 = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(2, U)), ds1 = ds0;
    ds1.shape[0] = 1;
    ndx_output sdata[2] = {ndx_op_placeholder(s, &ds0), ndx_op_placeholder(s, &ds1)};
    test_dims_are(ndx_op_dynamic_stitch(s, 2, sidx, sdata), "[5, ?]");
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    ndx_graph_free(g);
}

/* Constant indices are range-checked against the dims that are known, with the op's message. */
static void constant_indices_checked(void **state) {
    (void)state;
    ndx_error err;
    {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, U));
        ndx_output params = ndx_op_placeholder(s, &ps);
        ndx_output idx = test_const_i32(s, 2, SHAPE(2, 2), (int32_t[]){1, 7, 5, 2});
        assert_false(ndx_output_ok(ndx_op_gather_nd(s, params, idx, NULL)));
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_OUT_OF_RANGE,
                     "GatherNd: gather_nd: indices[1] = [5, 2] is out of range for params of "
                     "shape [4, ?]");
        ndx_graph_free(g);
    }
    {   /* ignored bad indices are not an error */
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, U));
        ndx_output idx = test_const_i32(s, 2, SHAPE(1, 2), (int32_t[]){9, 0});
        ndx_gather_nd_attrs ignore = {0, NDX_BAD_INDICES_IGNORE};
        assert_true(ndx_output_ok(ndx_op_gather_nd(s, ndx_op_placeholder(s, &ps), idx, &ignore)));
        ndx_graph_free(g);
    }
    {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec ts = ndx_spec_make(NDX_INT32, 1, SHAPE(8));
        ndx_spec us = ndx_spec_make(NDX_INT32, 1, SHAPE(2));
        ndx_output idx = test_const_i32(s, 2, SHAPE(2, 1), (int32_t[]){4, -1});
        ndx_output upd = ndx_op_tensor_scatter_nd_add(s, ndx_op_placeholder(s, &ts), idx,
                                                      ndx_op_placeholder(s, &us), NULL);
        assert_false(ndx_output_ok(upd));
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_OUT_OF_RANGE,
                     "tensor_scatter_nd_add: indices[1] = [-1] has a negative index");
        ndx_graph_free(g);
    }
    {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec ds = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(3));
        ndx_output ids = test_const_i32(s, 1, SHAPE(3), (int32_t[]){0, 2, 1});
        ndx_op_dynamic_partition(s, ndx_op_placeholder(s, &ds), ids, 2, NULL);
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_OUT_OF_RANGE,
                     "dynamic_partition: partitions[1] = 2 is not in [0, 2)");
        ndx_graph_free(g);
    }
    {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        ndx_spec ds = ndx_spec_make(NDX_FLOAT32, 1, SHAPE(2));
        ndx_output ids = test_const_i32(s, 1, SHAPE(2), (int32_t[]){0, -3});
        ndx_output data = ndx_op_placeholder(s, &ds);
        ndx_op_dynamic_stitch(s, 1, &ids, &data);
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_OUT_OF_RANGE,
                     "dynamic_stitch: indices[0][1] = -3 is negative");
        ndx_graph_free(g);
    }
}

/* A builder called from a file with a long path keeps the op's whole message: the one the op's
 * own infer function gives for the same specs. The location gives way instead. */
static void messages_never_cut(void **state) {
    (void)state;
    char file[200];
    memset(file, 'd', sizeof file);
    memcpy(file + 130, "/some/deep/dir/program_file.c", 30); /* 160 bytes in all */
    ndx_spec ps = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(4, 3));
    ndx_spec is = ndx_spec_make(NDX_INT32, 3, SHAPE(2, 2, 3));
    ndx_spec out;
    ndx_error want, err;
    assert_int_equal(ndx_gather_nd_infer(&ps, &is, 2, &out, &want), NDX_E_INVALID_ARGUMENT);
    assert_true(strlen(want.message) > 100);
    char longer[201];
    memset(longer, 'x', 200);
    longer[200] = '\0';
    const char *scopes[4] = {NULL, "embed", "a_rather_long_scope_name_for_the_embedding_lookup_of_"
                                            "the_model_that_goes_on_and_on_and_on", longer};
    for (int k = 0; k < 4; k++) {
        ndx_graph *g = ndx_graph_new();
        ndx_scope s = ndx_graph_root(g);
        if (scopes[k]) s = ndx_scope_sub(s, scopes[k]);
        ndx_output p = ndx_op_placeholder(s, &ps), i = ndx_op_placeholder(s, &is);
        ndx_gather_nd_attrs attrs = {2, NDX_BAD_INDICES_ERROR};
        assert_false(ndx_output_ok(ndx_op_gather_nd_at(file, 77, s, p, i, &attrs)));
        assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, want.message);
        /* the message is the error's end, whole; the location before it is shortened */
        size_t len = strlen(err.message), wl = strlen(want.message);
        assert_string_equal(err.message + len - wl, want.message);
        assert_non_null(strstr(err.message, "program_file.c:77: "));
        assert_null(strstr(err.message, "dddd"));
        if (k == 1) assert_non_null(strstr(err.message, ":77: embed/GatherNd: "));
        if (k == 3) { /* the scope's name gives up its beginning */
            assert_non_null(strstr(err.message, "program_file.c:77: ...xxx"));
            assert_non_null(strstr(err.message, "xxx/GatherNd: gather_nd: "));
        }
        ndx_graph_free(g);
    }
}

/* Bad scope names are errors at the caller's line, like the builders'. */
static void scope_errors_name_the_caller(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    int line = __LINE__ + 1;
    ndx_scope sub = ndx_scope_sub(ndx_scope_sub(ndx_graph_root(g), "embed"), "a b");
    ndx_output x = ndx_op_const_int(sub, NDX_INT32, 1);
    assert_false(ndx_output_ok(x));
    ndx_error err;
    char want[160];
    snprintf(want, sizeof want, "test_graph_build.c:%d: embed/: ndx_scope_sub: \"a b\" is not a "
             "valid name", line);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, want);
    ndx_graph_free(g);
    g = ndx_graph_new();
    line = __LINE__ + 1;
    ndx_scope named = ndx_scope_named(ndx_graph_root(g), "_y");
    assert_false(ndx_output_ok(ndx_op_const_int(named, NDX_INT32, 1)));
    snprintf(want, sizeof want, "test_graph_build.c:%d: ndx_scope_named: \"_y\" is not a valid "
             "name", line);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, want);
    ndx_graph_free(g);
}

/* Names of any length up to NDX_GRAPH_NAME_MAX bytes in all; counts up to NDX_GRAPH_MAX_ARITY;
 * past them, errors that name the limit. */
static void limits(void **state) {
    (void)state;
    size_t max = NDX_GRAPH_NAME_MAX;
    char *name = malloc(max + 2);
    assert_non_null(name);
    memset(name, 'a', max + 1);
    name[150] = '\0';
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_scope_sub(ndx_graph_root(g), name); /* 150 characters: TensorFlow's rule */
    ndx_output one = ndx_op_const_int(ndx_scope_named(s, name), NDX_INT32, 1);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    assert_int_equal(strlen(name_of(one)), 301);
    ndx_graph_free(g);
    name[150] = 'a';
    for (int over = 0; over < 2; over++) {
        name[max + (size_t)over] = '\0';
        g = ndx_graph_new();
        one = ndx_op_const_int(ndx_scope_named(ndx_graph_root(g), name), NDX_INT32, 1);
        if (!over) {
            assert_ok(ndx_graph_status(g, &err), &err);
            assert_int_equal(strlen(name_of(one)), max);
        } else {
            assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                         "is 4097 bytes, longer than 4096 (the limit of a node's full name)");
        }
        ndx_graph_free(g);
        name[max + (size_t)over] = 'a';
    }
    free(name);
    /* more than 65,536 partitions and stitch inputs */
    enum { N = 70000 };
    g = ndx_graph_new();
    s = ndx_graph_root(g);
    ndx_spec xs = ndx_spec_make(NDX_INT32, 1, SHAPE(U));
    ndx_output x = ndx_op_placeholder(s, &xs);
    ndx_output *parts = malloc(N * sizeof *parts), *ids = malloc(N * sizeof *ids);
    assert_non_null(parts);
    assert_non_null(ids);
    ndx_op_dynamic_partition(s, x, x, N, parts);
    for (int i = 0; i < N; i++) ids[i] = x;
    ndx_output y = ndx_op_dynamic_stitch(s, N, ids, parts);
    assert_ok(ndx_graph_status(g, &err), &err);
    assert_true(ndx_output_ok(parts[N - 1]) && ndx_output_ok(y));
    ndx_op_dynamic_partition(s, x, x, NDX_GRAPH_MAX_ARITY + 1, NULL);
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT,
                 "num_partitions = 715827883 is not in [1, 715827882] (715827882: the most a "
                 "node can have");
    free(parts);
    free(ids);
    ndx_graph_free(g);
}

/* After ndx_graph_finish no builder may add a node. */
static void finished_graph_is_frozen(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output one = ndx_op_const_int(s, NDX_INT32, 1);
    ndx_error err;
    assert_ok(ndx_graph_finish(g, &err), &err);
    assert_false(ndx_output_ok(ndx_op_add(s, one, one)));
    assert_fails(ndx_graph_status(g, &err), &err, NDX_E_INVALID_ARGUMENT, "the graph is finished");
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_unique_per_scope),
        cmocka_unit_test(bad_scope_names),
        cmocka_unit_test(deferred_errors),
        cmocka_unit_test(foreign_and_forged_handles),
        cmocka_unit_test(inference_and_node_info),
        cmocka_unit_test(folding),
        cmocka_unit_test(constant_indices_checked),
        cmocka_unit_test(finished_graph_is_frozen),
        cmocka_unit_test(messages_never_cut),
        cmocka_unit_test(scope_errors_name_the_caller),
        cmocka_unit_test(limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
