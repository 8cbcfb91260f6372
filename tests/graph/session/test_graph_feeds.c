/* test_graph_feeds.c — the feeding rule as a property over random graphs: a fed output replaces
 * its producer for the run, and everything downstream sees the fed value, whether the output is a
 * placeholder, a Const, a node folded at build time or one computed at run time. Each trial
 * builds a random program twice from the same seed: graph A as written, and the reference R in
 * which every output chosen for feeding is a Const holding the fed value (its producer is not
 * even built when all its outputs are fed). A is run with the chosen outputs fed random values
 * that fit their specs; R is built (folding what it can) and run. Both must succeed or both
 * fail, and every output they share must have the same bits. */
#include <stdio.h>

#include "contract.h"
#include "ndx_graph.h"

enum { ITERATIONS = 1200, MAX_SLOTS = 48, MAX_LEAVES = 16, MAX_OWNED = 32 };

/* One build of a program. */
typedef struct build {
    test_rng r;        /* the program's own generator: the same draws in both builds */
    ndx_graph *g;
    ndx_scope s;
    int reference;     /* 1: fed outputs are Consts */
    const ndx_tensor *const *fed; /* per slot: the value fed, or NULL */
    int slots;         /* outputs made so far */
    ndx_output out[MAX_SLOTS];
    int leaf_slot[MAX_LEAVES]; /* placeholders: their slot and the value they are fed */
    ndx_tensor leaf_value[MAX_LEAVES];
    int leaves;
    ndx_tensor owned[MAX_OWNED];
    int num_owned;
} build;

static ndx_output none(build *b) {
    ndx_output o = {{b->g, 0}, 0};
    return o;
}

/* 0 when the next n outputs are all replaced by Consts (the reference build only): then their
 * producer is not built. */
static int wanted(const build *b, int n) {
    if (!b->reference) return 1;
    for (int k = b->slots; k < b->slots + n; k++)
        if (k >= MAX_SLOTS || !b->fed[k]) return 1;
    return 0;
}

/* Records the next output; in the reference build a fed one becomes a Const of its value. */
static ndx_output at(build *b, ndx_output o) {
    int k = b->slots++;
    assert_true(k < MAX_SLOTS);
    if (b->reference && b->fed[k]) o = ndx_op_const(b->s, b->fed[k]);
    b->out[k] = o;
    return o;
}

static ndx_tensor *owned(build *b, ndx_dtype dt, int rank, const int64_t *shape) {
    assert_true(b->num_owned < MAX_OWNED);
    ndx_tensor *t = &b->owned[b->num_owned++];
    *t = test_tensor(dt, 0, rank, shape);
    return t;
}

/* An input of the program: a Const or a placeholder (with a random partial spec) fed x. */
static ndx_output leaf(build *b, const ndx_tensor *x) {
    int as_const = rng_below(&b->r, 3) == 0;
    ndx_spec spec = test_partial_spec(&b->r, x, 1);
    if (!wanted(b, 1)) return at(b, none(b));
    if (as_const) return at(b, ndx_op_const(b->s, x));
    assert_true(b->leaves < MAX_LEAVES);
    b->leaf_slot[b->leaves] = b->slots;
    b->leaf_value[b->leaves++] = *x;
    return at(b, ndx_op_placeholder(b->s, &spec));
}

static ndx_output scalar_leaf(build *b, int32_t v) {
    ndx_tensor *t = owned(b, NDX_INT32, 0, NULL);
    *(int32_t *)t->data = v;
    return leaf(b, t);
}

/* ---- the programs ------------------------------------------------------------------------- */

/* The example and its neighbours: y = c * 3, z = c * x, size(c), range(size(c)). */
static void arith_program(build *b) {
    int rank = (int)rng_below(&b->r, 2);
    int64_t n = rng_range(&b->r, 0, 4);
    ndx_tensor *cv = owned(b, NDX_INT32, rank, &n), *xv = owned(b, NDX_INT32, rank, &n);
    test_fill_indices(&b->r, cv, -3, 5);
    test_fill_indices(&b->r, xv, -3, 5);
    ndx_output c = leaf(b, cv), x = leaf(b, xv), three = scalar_leaf(b, 3);
    ndx_output zero = scalar_leaf(b, 0), one = scalar_leaf(b, 1);
    ndx_output y = at(b, wanted(b, 1) ? ndx_op_mul(b->s, c, three) : none(b));
    ndx_output z = at(b, wanted(b, 1) ? ndx_op_mul(b->s, c, x) : none(b));
    at(b, wanted(b, 1) ? ndx_op_sub(b->s, y, z) : none(b));
    ndx_output size = at(b, wanted(b, 1) ? ndx_op_size(b->s, c, NDX_INT32) : none(b));
    ndx_output r = at(b, wanted(b, 1) ? ndx_op_range(b->s, zero, size, one) : none(b));
    at(b, wanted(b, 1) ? ndx_op_add(b->s, r, size) : none(b));
    at(b, wanted(b, 1) ? ndx_op_floor_mod(b->s, y, three) : none(b));
}

/* ids % shards -> dynamic_partition of data and of positions -> dynamic_stitch back. */
static void partition_program(build *b) {
    int64_t n = rng_range(&b->r, 0, 5), shape[2] = {n, rng_range(&b->r, 1, 2)};
    int shards = (int)rng_range(&b->r, 1, 3);
    ndx_tensor *data = owned(b, NDX_FLOAT32, 2, shape), *ids = owned(b, NDX_INT32, 1, &n);
    test_fill_random(&b->r, data);
    test_fill_indices(&b->r, ids, 0, 6);
    ndx_output d = leaf(b, data), i = leaf(b, ids), sh = scalar_leaf(b, shards);
    ndx_output zero = scalar_leaf(b, 0), one = scalar_leaf(b, 1);
    ndx_output m = at(b, wanted(b, 1) ? ndx_op_floor_mod(b->s, i, sh) : none(b));
    ndx_output parts[3], where[3];
    if (wanted(b, shards)) ndx_op_dynamic_partition(b->s, d, m, shards, parts);
    for (int k = 0; k < shards; k++) parts[k] = at(b, wanted(b, 1) ? parts[k] : none(b));
    ndx_output size = at(b, wanted(b, 1) ? ndx_op_size(b->s, i, NDX_INT32) : none(b));
    ndx_output pos = at(b, wanted(b, 1) ? ndx_op_range(b->s, zero, size, one) : none(b));
    if (wanted(b, shards)) ndx_op_dynamic_partition(b->s, pos, m, shards, where);
    for (int k = 0; k < shards; k++) where[k] = at(b, wanted(b, 1) ? where[k] : none(b));
    at(b, wanted(b, 1) ? ndx_op_dynamic_stitch(b->s, shards, where, parts) : none(b));
}

/* gather_nd and tensor_scatter_nd_add over the same index rows, and an identity. */
static void index_program(build *b) {
    int64_t rows = rng_range(&b->r, 1, 4), cols = rng_range(&b->r, 1, 3);
    int64_t nidx = rng_range(&b->r, 0, 3);
    int64_t pshape[2] = {rows, cols}, ishape[2] = {nidx, 1}, ushape[2] = {nidx, cols};
    ndx_tensor *params = owned(b, NDX_INT32, 2, pshape), *idx = owned(b, NDX_INT32, 2, ishape);
    ndx_tensor *upd = owned(b, NDX_INT32, 2, ushape);
    test_fill_indices(&b->r, params, -9, 9);
    test_fill_indices(&b->r, idx, 0, rows - 1);
    test_fill_indices(&b->r, upd, -9, 9);
    ndx_output p = leaf(b, params), i = leaf(b, idx), u = leaf(b, upd);
    ndx_output got = at(b, wanted(b, 1) ? ndx_op_gather_nd(b->s, p, i, NULL) : none(b));
    ndx_output same = at(b, wanted(b, 1) ? ndx_op_identity(b->s, p) : none(b));
    ndx_output sum = at(b, wanted(b, 1) ? ndx_op_tensor_scatter_nd_add(b->s, same, i, u, NULL)
                                        : none(b));
    at(b, wanted(b, 1) ? ndx_op_sub(b->s, sum, p) : none(b));
    at(b, wanted(b, 1) ? ndx_op_add(b->s, got, u) : none(b));
}

typedef void (*program_fn)(build *b);
static const program_fn programs[] = {arith_program, partition_program, index_program};

static void build_program(build *b, test_rng seed, int which, int reference,
                          const ndx_tensor *const *fed) {
    memset(b, 0, sizeof *b);
    b->r = seed;
    b->g = ndx_graph_new();
    b->s = ndx_graph_root(b->g);
    b->reference = reference;
    b->fed = fed;
    programs[which](b);
}

static void free_build(build *b) {
    for (int i = 0; i < b->num_owned; i++) test_tensor_free(&b->owned[i]);
    ndx_graph_free(b->g);
}

/* A random value that the spec admits (unknown dims 0 .. 3), small numbers: mostly valid as
 * indices, partitions and shapes. */
static ndx_tensor value_for(test_rng *r, const ndx_spec *spec) {
    int64_t shape[NDX_MAX_RANK];
    for (int i = 0; i < spec->rank; i++)
        shape[i] = spec->shape[i] >= 0 ? spec->shape[i] : rng_range(r, 0, 3);
    ndx_tensor t = test_tensor(spec->dtype, 0, spec->rank, shape);
    if (spec->dtype == NDX_FLOAT32)
        test_fill_random(r, &t);
    else
        test_fill_indices(r, &t, rng_below(r, 8) == 0 ? -1 : 0, 3);
    return t;
}

/* The feeds of one build: the chosen outputs (graph A only) and every placeholder not chosen. */
static int feeds_of(const build *b, const ndx_tensor *const *fed, int with_fed, ndx_feed *feeds) {
    int n = 0;
    for (int k = 0; with_fed && k < b->slots; k++)
        if (fed[k]) {
            feeds[n].output = b->out[k];
            feeds[n++].value = *fed[k];
        }
    for (int l = 0; l < b->leaves; l++)
        if (!fed[b->leaf_slot[l]]) {
            feeds[n].output = b->out[b->leaf_slot[l]];
            feeds[n++].value = b->leaf_value[l];
        }
    return n;
}

static ndx_status run_all(const build *b, int num_feeds, const ndx_feed *feeds, ndx_fetch *f,
                          int threads, ndx_session **sess, ndx_error *err) {
    *sess = NULL;
    ndx_status st = ndx_graph_finish(b->g, err);
    if (st != NDX_OK) return st;
    ndx_session_options opt = {threads, 0, NULL};
    *sess = ndx_session_new(b->g, &opt, err);
    assert_non_null(*sess);
    for (int k = 0; k < b->slots; k++) {
        f[k].output = b->out[k];
        f[k].mode = NDX_FETCH_BORROW;
        memset(&f[k].value, 0, sizeof f[k].value);
    }
    return ndx_session_run(*sess, num_feeds, feeds, b->slots, f, err);
}

static void random_feeds(void **state) {
    (void)state;
    test_rng r = {20261126};
    int outcomes[3] = {0, 0, 0}; /* A not built, both failed, both ran */
    int fed_kinds[3] = {0, 0, 0}; /* Consts, folded nodes, nodes run, fed in trials that ran */
    for (int it = 0; it < ITERATIONS; it++) {
        test_rng seed = {rng_next(&r)};
        int which = it % (int)(sizeof programs / sizeof programs[0]);
        build a, ref;
        const ndx_tensor *none_fed[MAX_SLOTS] = {0};
        build_program(&a, seed, which, 0, none_fed);
        if (ndx_graph_status(a.g, NULL) != NDX_OK) {
            outcomes[0]++;
            free_build(&a);
            continue;
        }
        /* Choose outputs to feed, with values their specs admit. */
        ndx_tensor values[MAX_SLOTS];
        const ndx_tensor *fed[MAX_SLOTS] = {0};
        int kinds[3] = {0, 0, 0};
        for (int k = 0; k < a.slots; k++) {
            ndx_spec spec = ndx_output_spec(a.out[k]);
            if (spec.rank == NDX_UNKNOWN || rng_below(&r, 3) != 0) continue;
            values[k] = value_for(&r, &spec);
            fed[k] = &values[k];
            ndx_node node;
            ndx_node_info(a.out[k].op, &node, NULL);
            int kind = !ndx_output_constant(a.out[k]) ? 2 : strcmp(node.type, "Const") ? 1 : 0;
            kinds[kind]++;
        }
        build_program(&ref, seed, which, 1, fed);
        assert_int_equal(ref.slots, a.slots);
        ndx_feed fa[2 * MAX_SLOTS], fr[2 * MAX_SLOTS];
        int na = feeds_of(&a, fed, 1, fa), nr = feeds_of(&ref, fed, 0, fr);
        ndx_fetch ga[MAX_SLOTS], gr[MAX_SLOTS];
        ndx_session *sa, *sr;
        ndx_error ea, er;
        int threads = (int)rng_range(&r, 1, 2);
        ndx_status sta = run_all(&a, na, fa, ga, threads, &sa, &ea);
        ndx_status str = run_all(&ref, nr, fr, gr, threads, &sr, &er);
        if ((sta == NDX_OK) != (str == NDX_OK))
            fail_msg("iteration %d (program %d): fed graph %s (%s), reference %s (%s)", it, which,
                     ndx_status_name(sta), sta ? ea.message : "", ndx_status_name(str),
                     str ? er.message : "");
        if (sta == NDX_OK) {
            for (int k = 0; k < a.slots; k++) assert_tensor_eq(&ga[k].value, &gr[k].value);
            for (int j = 0; j < 3; j++) fed_kinds[j] += kinds[j];
        }
        outcomes[sta == NDX_OK ? 2 : 1]++;
        ndx_session_free(sa);
        ndx_session_free(sr);
        for (int k = 0; k < a.slots; k++)
            if (fed[k]) test_tensor_free(&values[k]);
        free_build(&a);
        free_build(&ref);
    }
    print_message("%d not built, %d failed in both, %d ran in both; fed %d Consts, %d folded "
                  "nodes, %d nodes run\n", outcomes[0], outcomes[1], outcomes[2], fed_kinds[0],
                  fed_kinds[1], fed_kinds[2]);
    /* Most trials run, and every kind of output is fed often in them. */
    assert_true(outcomes[2] > ITERATIONS / 3);
    for (int j = 0; j < 3; j++) assert_true(fed_kinds[j] > ITERATIONS / 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(random_feeds)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
