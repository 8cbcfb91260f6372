/* test_graph_text.c — saved graphs: C-built → save → load → save gives the same bytes for every
 * op with every attribute and every dtype of constant; a loaded graph runs to the same bits as
 * the one built in C; large constants travel in the .npz; and a table of malformed files, each
 * refused with the line and column it names, never a crash. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ndx_test.h"
#include "graph_support.h"
#include "ndx_graph.h"

#define U NDX_UNKNOWN

static char dir[] = "/tmp/ndx_graph_text_XXXXXX";

static const char *path_in_dir(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", dir, name);
    return buf;
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

/* A graph with every op, every attribute set away from its default somewhere, and constants of
 * every dtype (a large one too, for the .npz). Returns the outputs a run fetches. */
static ndx_graph *every_op(ndx_output *fetch, int *nfetch, ndx_output *x_out) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_scope_sub(ndx_graph_root(g), "all");
    ndx_spec xs = ndx_spec_make(NDX_FLOAT32, 2, SHAPE(U, 3));
    ndx_output x = ndx_op_placeholder(ndx_scope_named(s, "x"), &xs);
    *x_out = x;
    int n = 0;
    ndx_output idx = test_const(s, NDX_INT32, 2, SHAPE(2, 1), (int32_t[]){1, 0});
    ndx_gather_nd_attrs ga = {0, NDX_BAD_INDICES_IGNORE};
    fetch[n++] = ndx_op_gather_nd(s, x, idx, &ga);
    ndx_gather_nd_attrs gb = {1, NDX_BAD_INDICES_ERROR};
    ndx_output bidx = test_const(s, NDX_INT64, 2, SHAPE(2, 1), (int64_t[]){2, 0});
    ndx_output two_rows =
        ndx_op_gather_nd(s, x, test_const(s, NDX_INT32, 2, SHAPE(2, 1), (int32_t[]){0, 1}), NULL);
    fetch[n++] = ndx_op_gather_nd(s, two_rows, bidx, &gb);
    ndx_scatter_attrs ig = {NDX_BAD_INDICES_IGNORE};
    ndx_output shape = test_const(s, NDX_INT64, 1, SHAPE(2), (int64_t[]){4, 3});
    fetch[n++] = ndx_op_scatter_nd(s, idx, fetch[0], shape, &ig);
    for (int op = 0; op < 5; op++)
        fetch[n++] = ndx_op_tensor_scatter_nd(s, (ndx_scatter_op)op, x, idx, fetch[0],
                                              op == 2 ? &ig : NULL);
    ndx_output parts[3];
    ndx_output ids = ndx_op_cast(s, ndx_op_floor_mod(s, ndx_op_range(s, ndx_op_const_int(s, NDX_INT64, 0),
                                 ndx_op_size(s, x, NDX_INT64), ndx_op_const_int(s, NDX_INT64, 1)),
                                 ndx_op_const_int(s, NDX_INT64, 3)), NDX_INT16);
    ndx_output flat = ndx_op_gather_nd(s, x, test_const(s, NDX_INT32, 2, SHAPE(1, 0), (int32_t[]){0}), NULL); /* depth 0: [1, ?, 3] */
    (void)flat;
    ndx_output col = ndx_op_shape(s, x, NDX_INT32);
    fetch[n++] = col;
    ndx_output range12 = ndx_op_range(s, ndx_op_const_int(s, NDX_INT64, 0),
                                      ndx_op_size(s, x, NDX_INT64), ndx_op_const_int(s, NDX_INT64, 1));
    ndx_op_dynamic_partition(s, range12, ids, 3, parts);
    fetch[n++] = parts[2];
    ndx_output pos[3];
    ndx_op_dynamic_partition(s, range12, ids, 3, pos);
    fetch[n++] = ndx_op_dynamic_stitch(s, 3, pos, parts);
    fetch[n++] = ndx_op_parallel_dynamic_stitch(s, 3, pos, parts);
    ndx_sparse_output sp = ndx_op_dense_to_sparse(s, x);
    ndx_sparse_output sp2 = ndx_op_sparse_reorder(s, sp);
    ndx_sparse_output both[2] = {sp, sp2};
    ndx_sparse_output cat = ndx_op_sparse_concat(s, -1, 2, both, 1);
    fetch[n++] = cat.indices;
    fetch[n++] = cat.dense_shape;
    ndx_output dflt = ndx_op_const_float(s, NDX_FLOAT32, -7.5);
    fetch[n++] = ndx_op_sparse_to_dense(s, sp2, &dflt);
    fetch[n++] = ndx_op_sparse_to_dense(s, cat, NULL);
    fetch[n++] = ndx_op_equal(s, ndx_op_identity(s, x), ndx_op_const_float(s, NDX_FLOAT32, 2.0));
    fetch[n++] = ndx_op_not_equal(s, x, x);
    fetch[n++] = ndx_op_sub(s, ndx_op_mul(s, x, x), ndx_op_floor_div(s, x, ndx_op_const_float(s,
                            NDX_FLOAT32, 0.5)));
    /* constants of every dtype, values at the edges */
    ndx_scope k = ndx_scope_sub(s, "consts");
    test_const(k, NDX_BOOL, 1, SHAPE(2), (uint8_t[]){1, 0});
    test_const(k, NDX_INT8, 1, SHAPE(2), (int8_t[]){-128, 127});
    test_const(k, NDX_UINT64, 1, SHAPE(1), (uint64_t[]){UINT64_MAX});
    test_const(k, NDX_INT64, 0, SHAPE(0), (int64_t[]){INT64_MIN});
    test_const(k, NDX_FLOAT16, 1, SHAPE(2), (uint16_t[]){0x3c01, 0x8000});
    test_const(k, NDX_BFLOAT16, 1, SHAPE(1), (uint16_t[]){0x7f80});
    test_const(k, NDX_FLOAT64, 1, SHAPE(3), (double[]){0.1, -0.0, 1e-310});
    test_const(k, NDX_COMPLEX64, 1, SHAPE(1), (float[]){1.5f, -2.25f});
    test_const(k, NDX_FLOAT32, 1, SHAPE(2), (float[]){0.1f, 3.4e38f});
    ndx_tensor s3 = test_strings(4, 1, SHAPE(3), (const char *[]){"a\"b", "", "\\\n\x01"});
    ndx_op_const(k, &s3);
    test_tensor_free(&s3);
    ndx_tensor big = test_tensor(NDX_FLOAT64, 0, 2, SHAPE(10, 10));
    for (int i = 0; i < 100; i++) ((double *)big.data)[i] = i * 0.25 - 3;
    ndx_op_const(ndx_scope_named(k, "table"), &big);
    test_tensor_free(&big);
    test_const(k, NDX_FLOAT32, 1, SHAPE(1), (uint32_t[]){0x7fc00001}); /* NaN payload */
    *nfetch = n;
    return g;
}

static void round_trip_every_op(void **state) {
    (void)state;
    ndx_output fetch[32], x;
    int nfetch;
    ndx_graph *g = every_op(fetch, &nfetch, &x);
    ndx_error err;
    assert_ok(ndx_graph_status(g, &err), &err);
    char p1[256], p2[256], n1[256];
    assert_ok(ndx_graph_save(g, path_in_dir(p1, sizeof p1, "a.txt"), &err), &err);
    ndx_graph *h = ndx_graph_load(p1, &err);
    if (!h) fail_msg("load: %s", err.message);
    assert_ok(ndx_graph_save(h, path_in_dir(p2, sizeof p2, "b.txt"), &err), &err);
    size_t l1, l2;
    char *t1 = read_file(p1, &l1), *t2 = read_file(p2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(t1, t2, l1); /* save -> load -> save: the same bytes */
    assert_non_null(strstr(t1, "value=@all/consts/table"));
    assert_non_null(strstr(t1, "batch_dims=1"));
    assert_non_null(strstr(t1, "bad_indices=ignore"));
    assert_non_null(strstr(t1, "expand_nonconcat_dim=true"));
    assert_non_null(strstr(t1, "value=[\"a\\\"b\", \"\", \"\\\\\\n\\x01\"]"));
    assert_true(access(path_in_dir(n1, sizeof n1, "a.npz"), F_OK) == 0);
    /* the same graph from text in memory, up to the .npz reference */
    char *t3;
    size_t l3;
    assert_ok(ndx_graph_to_text(h, &t3, &l3, &err), &err);
    assert_int_equal(l3, l1);
    assert_memory_equal(t3, t1, l1);
    assert_null(ndx_graph_from_text(t3, l3, "mem", &err));
    assert_non_null(strstr(err.message, "refers to an .npz"));
    free(t1);
    free(t2);
    free(t3);
    /* load -> run gives the bits of the graph built in C */
    float xv[12];
    for (int i = 0; i < 12; i++) xv[i] = (float)(i % 5) - 1.5f;
    ndx_feed feed = {x, ndx_tensor_make(NDX_FLOAT32, 2, SHAPE(4, 3), xv)};
    ndx_graph_finish(g, &err);
    ndx_graph_finish(h, &err);
    ndx_session *sg = ndx_session_new(g, NULL, &err), *sh = ndx_session_new(h, NULL, &err);
    assert_non_null(sg);
    assert_non_null(sh);
    ndx_fetch fg[32], fh[32];
    for (int i = 0; i < nfetch; i++) {
        ndx_node node;
        ndx_node_info(fetch[i].op, &node, NULL);
        fg[i] = (ndx_fetch){fetch[i], NDX_FETCH_BORROW, {0}};
        fh[i] = (ndx_fetch){ndx_operation_output(ndx_graph_find(h, node.name), fetch[i].index),
                            NDX_FETCH_BORROW, {0}};
    }
    ndx_feed feed_h = {ndx_operation_output(ndx_graph_find(h, "all/x"), 0), feed.value};
    assert_ok(ndx_session_run(sg, 1, &feed, nfetch, fg, &err), &err);
    assert_ok(ndx_session_run(sh, 1, &feed_h, nfetch, fh, &err), &err);
    for (int i = 0; i < nfetch; i++) assert_tensor_eq(&fg[i].value, &fh[i].value);
    /* nodes keep the text's file:line */
    ndx_node node;
    ndx_node_info(ndx_graph_find(h, "all/x"), &node, NULL);
    assert_string_equal(node.file, p1);
    assert_int_equal(node.line, 2);
    ndx_session_free(sg);
    ndx_session_free(sh);
    ndx_graph_free(g);
    ndx_graph_free(h);
}

/* A hand-written file: comments, blank lines, spaces, CRLF, specs omitted where inferred. */
static void hand_written(void **state) {
    (void)state;
    const char *text = "# a comment\r\n\r\nndx-graph 1   # the version\r\n"
                       "a=Placeholder():int32[?]\n"
                       "  b = Const() value=[ 1 , 2 ] : int32[2]   # two\n"
                       "c = AddV2(a,b)\n"
                       "d = Size( c ) out_type=int64 : int64[]\n";
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(text, strlen(text), "hand", &err);
    if (!g) fail_msg("%s", err.message);
    char *t;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &t, &len, &err), &err);
    assert_string_equal(t, "ndx-graph 1\n"
                           "a = Placeholder() : int32[?]\n"
                           "b = Const() value=[1, 2] : int32[2]\n"
                           "c = AddV2(a, b) : int32[2]\n"
                           "d = Size(c) out_type=int64 : int64[]\n");
    free(t);
    /* c's spec was inferred from the text's shapes: a's unknown dim is b's 2 */
    ndx_node node;
    ndx_node_info(ndx_graph_find(g, "d"), &node, NULL);
    assert_non_null(ndx_output_constant(ndx_operation_output(ndx_graph_find(g, "d"), 0)));
    ndx_graph_free(g);
}

/* Malformed files: each refused with a message naming the line (and column), never a crash. */
static void malformed_table(void **state) {
    (void)state;
    static const struct {
        const char *text, *needle;
    } cases[] = {
        {"", "empty"},
        {"# only a comment\n", "empty"},
        {"ndx-graph 2\n", "hand:1:1: expected 'ndx-graph 1'"},
        {"ndx-graph 1 extra\n", "unsupported version"},
        {"x = Placeholder() : float32[?]\n", "hand:1:1: expected 'ndx-graph 1' first"},
        {"ndx-graph 1\nx = Placeholder(", "hand:2:17: expected an input"},
        {"ndx-graph 1\nx = Placeholder() : float32[2", "expected ',' or ']'"},
        {"ndx-graph 1\ny = Identity(x) : float32[?]\nx = Placeholder() : float32[?]\n",
         "hand:2:14: no node named 'x' before this line"},
        {"ndx-graph 1\nx = Identity(x)\n", "no node named 'x'"},
        {"ndx-graph 1\nx = Placeholder() : int32[]\nx = Identity(x)\n",
         "hand:3:1: the name 'x' is already used"},
        {"ndx-graph 1\nx = Placeholder() : int32[]\ny = AddV2(x)\n",
         "hand:3:5: AddV2 takes 2 inputs, not 1"},
        {"ndx-graph 1\nx = Placeholder() : int32[]\ny = DynamicStitch(x, x, x)\n",
         "an even number of inputs"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Cast(x) too=int64\n",
         "hand:3:13: Cast takes no attribute 'too'"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Cast(x)\n", "Cast needs the attribute to"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Cast(x) to=int33\n", "expected a dtype"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Cast(x) to=int8 to=int8\n", "given twice"},
        {"ndx-graph 1\nx = Placeholder() : int32[2, 1]\ny = GatherNd(x, x) bad_indices=maybe\n",
         "bad_indices is error, ignore or zero"},
        {"ndx-graph 1\nx = Placeholder() : int32[9223372036854775807, 2]\n", "too large"},
        {"ndx-graph 1\nx = Placeholder() : int32[-1]\n", "a dim must be an integer"},
        {"ndx-graph 1\nx = Placeholder() : int32[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]\n",
         "more than 16 dims"},
        {"ndx-graph 1\nx = Placeholder()\n", "a Placeholder declares one spec"},
        {"ndx-graph 1\nc = Const() value=[1, 2, 3] : int32[2]\n", "more values than the 2"},
        {"ndx-graph 1\nc = Const() value=[1] : int32[2]\n", "1 values for a constant of 2"},
        {"ndx-graph 1\nc = Const() value=[300] : int8[1]\n", "'300' is not a int8 value"},
        {"ndx-graph 1\nc = Const() value=[\"abc\"] : string(2)[1]\n", "longer than its width"},
        {"ndx-graph 1\nc = Const() value=[\"ab] : string(2)[1]\n", "not closed"},
        {"ndx-graph 1\nc = Const() value=[1] : int32[?]\n", "a Const needs a complete spec"},
        {"ndx-graph 1\nc = Const() value=@table : int32[2]\n", "refers to an .npz"},
        {"ndx-graph 1\nc = Const() value=[1] : int32[1048577]\n", "an inline value holds at most"},
        {"ndx-graph 1\nc = Const() value=[\"a\"] : string(1073741824)[2]\n",
         "an inline value holds at most 1048576 elements and 1073741824 bytes"},
        {"ndx-graph 1\nx = Placeholder() : float32[2, 3]\ny = GatherNd(x, x)\n",
         "hand:3: y: gather_nd:"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Identity(x) : float32[2]\n",
         "output 0 is declared float32[2] but is int32[2]"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = Identity(x:1)\n", "'x' has no output 1"},
        {"ndx-graph 1\nx = Frobnicate()\n", "hand:2:5: unknown op 'Frobnicate'"},
        {"ndx-graph 1\n_x = Placeholder() : int32[2]\n", "is not a valid name"},
        {"ndx-graph 1\na//b = Placeholder() : int32[2]\n", "is not a valid name"},
        {"ndx-graph 1\nx = Placeholder() : int32[2] junk\n", "hand:2:30: unexpected text 'junk'"},
        {"ndx-graph 1\nx = Placeholder() : int32(4)[2]\n", "only a string dtype has a width"},
        {"ndx-graph 1\nx = Placeholder() : int32[2]\ny = DynamicPartition(x, x) num_partitions=0\n",
         "num_partitions must be an integer from 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ndx_error err;
        ndx_graph *g = ndx_graph_from_text(cases[i].text, strlen(cases[i].text), "hand", &err);
        if (g) fail_msg("case %zu was accepted: %s", i, cases[i].text);
        if (!strstr(err.message, cases[i].needle))
            fail_msg("case %zu: message \"%s\" lacks \"%s\"", i, err.message, cases[i].needle);
    }
    /* a NUL byte, a truncated file at every length: refused or read, never a crash */
    const char nul[] = "ndx-graph 1\nx = Placeholder() : int32[2]\0\n";
    ndx_error err;
    assert_null(ndx_graph_from_text(nul, sizeof nul - 1, "hand", &err));
    assert_non_null(strstr(err.message, "NUL"));
    const char *good = "ndx-graph 1\nx = Placeholder() : int32[?]\nc = Const() value=[1, 2] : "
                       "int32[2]\ny = GatherNd(c, x) : int32[?]\n";
    for (size_t n = 0; n <= strlen(good); n++) {
        ndx_graph *g = ndx_graph_from_text(good, n, "cut", &err);
        ndx_graph_free(g);
    }
}

/* The .npz beside a graph: a missing member, one of the wrong shape, a missing archive. */
/* The bad-index policy's names: error and ignore, and the CLI's zero (gathers) and skip
 * (scatters) for ignore; the canonical text writes ignore. */
static void bad_index_policy_names(void **state) {
    (void)state;
    const char *text = "ndx-graph 1\n"
                       "p = Placeholder() : float32[4]\n"
                       "i = Placeholder() : int32[2, 1]\n"
                       "u = Placeholder() : float32[2]\n"
                       "g = GatherNd(p, i) bad_indices=zero : float32[2]\n"
                       "s = TensorScatterAdd(p, i, u) bad_indices=skip : float32[4]\n"
                       "sh = Placeholder() : int32[1]\n"
                       "n = ScatterNd(i, u, sh) bad_indices=skip\n"
                       "e = GatherNd(p, i) bad_indices=error : float32[2]\n";
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(text, strlen(text), "policies", &err);
    if (!g) fail_msg("%s", err.message);
    char *canon;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &canon, &len, &err), &err);
    assert_non_null(strstr(canon, "g = GatherNd(p, i) bad_indices=ignore :"));
    assert_non_null(strstr(canon, "s = TensorScatterAdd(p, i, u) bad_indices=ignore :"));
    assert_non_null(strstr(canon, "n = ScatterNd(i, u, sh) bad_indices=ignore :"));
    assert_non_null(strstr(canon, "e = GatherNd(p, i) :"));
    free(canon);
    ndx_graph_free(g);
    /* each alias belongs to its family */
    const char *wrong[2] = {"ndx-graph 1\np = Placeholder() : float32[4]\n"
                            "i = Placeholder() : int32[2, 1]\ng = GatherNd(p, i) bad_indices=skip\n",
                            "ndx-graph 1\np = Placeholder() : float32[4]\n"
                            "i = Placeholder() : int32[2, 1]\n"
                            "s = TensorScatterAdd(p, i, p) bad_indices=zero\n"};
    const char *needle[2] = {"bad_indices is error, ignore or zero", "error, ignore or skip"};
    for (int k = 0; k < 2; k++) {
        assert_null(ndx_graph_from_text(wrong[k], strlen(wrong[k]), "policies", &err));
        assert_non_null(strstr(err.message, needle[k]));
    }
}

/* Limits that TensorFlow does not have are gone from the text form: a DynamicPartition of
 * 70,000 outputs (more than 64 specs, more than 65,536 partitions) and a node name of 150
 * characters round-trip; a name of NDX_GRAPH_NAME_MAX bytes is read and one byte more is
 * refused naming the limit; a long source path never cuts the message. */
static void text_limits(void **state) {
    (void)state;
    enum { PARTS = 70000 };
    char *big = malloc(16 * (size_t)PARTS + 512), name[151];
    assert_non_null(big);
    size_t blen = (size_t)sprintf(big, "ndx-graph 1\nx = Placeholder() : int32[?]\n"
                                       "y = DynamicPartition(x, x) num_partitions=%d :", PARTS);
    for (int i = 0; i < PARTS; i++) blen += (size_t)sprintf(big + blen, "%s int32[?]", i ? "," : "");
    memset(name, 'n', 150);
    name[150] = '\0';
    blen += (size_t)sprintf(big + blen, "\n%s = Identity(y:%d) : int32[?]\n", name, PARTS - 1);
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(big, blen, "limits", &err);
    if (!g) fail_msg("%s", err.message);
    ndx_operation last = ndx_graph_find(g, name);
    assert_true(ndx_operation_ok(last));
    char *canon;
    size_t len;
    assert_ok(ndx_graph_to_text(g, &canon, &len, &err), &err);
    assert_int_equal(len, blen);
    assert_memory_equal(canon, big, len);
    free(canon);
    ndx_graph_free(g);
    free(big);
    /* names at the limit and one byte past it */
    size_t max = NDX_GRAPH_NAME_MAX;
    char *text = malloc(max + 64);
    assert_non_null(text);
    for (int over = 0; over < 2; over++) {
        memcpy(text, "ndx-graph 1\n", 12);
        memset(text + 12, 'a', max + (size_t)over);
        int n = 12 + (int)max + over;
        n += sprintf(text + n, " = Placeholder() : int32[]\n");
        g = ndx_graph_from_text(text, (size_t)n, "limits", &err);
        if (!over) {
            if (!g) fail_msg("%s", err.message);
            ndx_graph_free(g);
        } else {
            assert_null(g);
            assert_non_null(strstr(err.message, "longer than 4096 bytes (the limit of a node's "
                                                "full name)"));
        }
    }
    free(text);
    /* a source named by a long path: the message is whole, the path shortened */
    char source[300];
    memset(source, 'd', sizeof source);
    memcpy(source + 280, "/graph.txt", 11);
    const char *bad = "ndx-graph 1\nx = Placeholder() : int32[2]\ny = Identity(zzz)\n";
    assert_null(ndx_graph_from_text(bad, strlen(bad), source, &err));
    assert_non_null(strstr(err.message, "graph.txt:3:14: no node named 'zzz' before this line (a "
                                        "node is defined before it is used)"));
}

/* Numbers are read whatever their spelling's length: 200 leading zeros are still 42 and 1.5. */
static void long_numbers(void **state) {
    (void)state;
    char text[1024];
    int n = sprintf(text, "ndx-graph 1\ni = Const() value=[");
    n += sprintf(text + n, "%0200d", 42);
    n += sprintf(text + n, "] : int32[1]\nf = Const() value=[%0200.1f] : float64[1]\n", 1.5);
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text(text, (size_t)n, "long", &err);
    if (!g) fail_msg("%s", err.message);
    const ndx_tensor *i = ndx_output_constant(ndx_operation_output(ndx_graph_find(g, "i"), 0));
    const ndx_tensor *f = ndx_output_constant(ndx_operation_output(ndx_graph_find(g, "f"), 0));
    assert_non_null(i);
    assert_non_null(f);
    assert_int_equal(*(const int32_t *)i->data, 42);
    assert_true(*(const double *)f->data == 1.5);
    ndx_graph_free(g);
}

static void npz_members_checked(void **state) {
    (void)state;
    ndx_graph *g = ndx_graph_new();
    ndx_tensor big = test_tensor(NDX_INT32, 0, 1, SHAPE(100));
    ndx_op_const(ndx_scope_named(ndx_graph_root(g), "big"), &big);
    test_tensor_free(&big);
    char p[256], q[256], npz[256];
    ndx_error err;
    assert_ok(ndx_graph_save(g, path_in_dir(p, sizeof p, "m.txt"), &err), &err);
    ndx_graph_free(g);
    size_t len;
    char *text = read_file(p, &len);
    /* the declared shape no longer matches the member */
    char *wrong = malloc(len + 8);
    snprintf(wrong, len + 8, "%.*s", (int)len, text);
    char *at = strstr(wrong, "[100]");
    assert_non_null(at);
    memcpy(at, "[99] ", 5);
    FILE *f = fopen(path_in_dir(q, sizeof q, "m2.txt"), "wb");
    fputs(wrong, f);
    fclose(f);
    rename(path_in_dir(npz, sizeof npz, "m.npz"), (snprintf(p, sizeof p, "%s/m2.npz", dir), p));
    assert_null(ndx_graph_load(q, &err));
    assert_non_null(strstr(err.message, "is int32[100], not the declared int32[99]"));
    /* a member that is not there */
    memcpy(at, "[100]", 5);
    char *member = strstr(wrong, "@big");
    memcpy(member, "@bog", 4);
    f = fopen(q, "wb");
    fputs(wrong, f);
    fclose(f);
    assert_null(ndx_graph_load(q, &err));
    assert_non_null(strstr(err.message, "has no member 'bog.npy'"));
    /* no archive at all */
    unlink(p);
    assert_null(ndx_graph_load(q, &err));
    assert_int_equal(err.code, NDX_E_FORMAT);
    assert_null(ndx_graph_load(path_in_dir(p, sizeof p, "none.txt"), &err));
    assert_int_equal(err.code, NDX_E_IO);
    free(wrong);
    free(text);
}

static int setup(void **state) {
    (void)state;
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state) {
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(round_trip_every_op),
        cmocka_unit_test(hand_written),
        cmocka_unit_test(malformed_table),
        cmocka_unit_test(npz_members_checked),
        cmocka_unit_test(long_numbers),
        cmocka_unit_test(bad_index_policy_names),
        cmocka_unit_test(text_limits),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
