/* examples/train_embedding.c run as it is, at 1 and at 2 threads: it must learn (exit 0) both
 * times, and the tables it learned must be the same bits; and at 1 thread the tables must be
 * what the same training written as plain loops learns (so the example's .expected loss curve
 * is the loops' curve too). The example is compiled in with its
 * session's creation and release redirected here, which is how the thread count gets in and the
 * tables get out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <string.h>

#include <cmocka.h>

#include <ndx_graph.h>

static int threads;
static const ndx_graph *graph;
static float learned_u[500 * 16], learned_v[400 * 16];

static ndx_session *session_at_threads(const ndx_graph *g, ndx_error *err) {
    ndx_session_options options = {.num_threads = threads};
    graph = g;
    return ndx_session_new(g, &options, err);
}

static void read_table(ndx_session *s, const char *name, int64_t rows, float *into) {
    ndx_tensor t = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){rows, 16}, into);
    ndx_error err;
    assert_int_equal(ndx_session_read_variable(s, ndx_graph_find(graph, name), &t, &err), NDX_OK);
}

static void free_after_reading(ndx_session *s) {
    read_table(s, "U", 500, learned_u);
    read_table(s, "V", 400, learned_v);
    ndx_session_free(s);
}

#define ndx_session_new(g, opt, err) ((void)(opt), session_at_threads(g, err))
#define ndx_session_free(s) free_after_reading(s)
#define main train_embedding_main
#include "train_embedding.c"
#undef main
#undef ndx_session_new
#undef ndx_session_free
_Static_assert(USERS == 500 && ITEMS == 400 && RANK == 16, "the tables' sizes above");

static void learns_the_same_bits_at_1_and_2_threads(void **state) {
    (void)state;
    static float u1[500 * 16], v1[400 * 16];
    threads = 1;
    rng_state = 42;
    assert_int_equal(train_embedding_main(), 0);
    memcpy(u1, learned_u, sizeof u1);
    memcpy(v1, learned_v, sizeof v1);
    threads = 2;
    rng_state = 42;
    memset(learned_u, 0, sizeof learned_u);
    assert_int_equal(train_embedding_main(), 0);
    assert_memory_equal(u1, learned_u, sizeof u1);
    assert_memory_equal(v1, learned_v, sizeof v1);
}

/* The same training written as plain loops, independent of the graph, its gradients and the
 * apply op: per batch, pred = sum_k U[u][k] * V[i][k], d loss / d pred = 2 (pred - r), the rows'
 * gradients from the start-of-step tables, then Keras's Adagrad (V1) step: each row's gradient
 * summed over the batch entries naming it (from zero, in batch order), then one step per row. */
static float ref_u[USERS][RANK], ref_v[ITEMS][RANK], acc_u[USERS][RANK], acc_v[ITEMS][RANK];

static void adagrad_row(float *var, float *acc, const float *g) {
    for (int k = 0; k < RANK; k++) {
        acc[k] += g[k] * g[k];
        var[k] -= 0.1f * g[k] * (1.0f / sqrtf(acc[k]));
    }
}

/* One step on the rows `ids` names (a batch): each distinct row once, with the sum of its
 * entries' gradient rows. */
static void sum_and_step(float *table, float *acc, const int32_t *ids, float (*g)[RANK]) {
    static float sum[USERS > ITEMS ? USERS : ITEMS][RANK];
    static int touched[USERS > ITEMS ? USERS : ITEMS];
    for (int n = 0; n < BATCH; n++) {
        int r = ids[n];
        if (!touched[r]) memset(sum[r], 0, sizeof sum[r]);
        touched[r] = 1;
        for (int k = 0; k < RANK; k++) sum[r][k] += g[n][k];
    }
    for (int n = 0; n < BATCH; n++) {
        int r = ids[n];
        if (!touched[r]) continue;
        touched[r] = 0;
        adagrad_row(table + r * RANK, acc + r * RANK, sum[r]);
    }
}

static void train_with_loops(void) {
    static float gu[BATCH][RANK], gv[BATCH][RANK];
    memcpy(ref_u, u_init, sizeof ref_u);
    memcpy(ref_v, v_init, sizeof ref_v);
    for (int r = 0; r < USERS; r++)
        for (int k = 0; k < RANK; k++) acc_u[r][k] = 0.1f;
    for (int r = 0; r < ITEMS; r++)
        for (int k = 0; k < RANK; k++) acc_v[r][k] = 0.1f;
    for (int epoch = 0; epoch < EPOCHS; epoch++)
        for (int b = 0; b < BATCHES; b++) {
            int at = b * BATCH;
            for (int n = 0; n < BATCH; n++) {
                const float *u = ref_u[users[at + n]], *v = ref_v[items[at + n]];
                float pred = 0;
                for (int k = 0; k < RANK; k++) pred += u[k] * v[k];
                float d = 2 * (pred - ratings[at + n]);
                for (int k = 0; k < RANK; k++) {
                    gu[n][k] = d * v[k];
                    gv[n][k] = d * u[k];
                }
            }
            sum_and_step(&ref_u[0][0], &acc_u[0][0], users + at, gu);
            sum_and_step(&ref_v[0][0], &acc_v[0][0], items + at, gv);
        }
}

static void learns_what_plain_loops_learn(void **state) {
    (void)state;
    threads = 1;
    rng_state = 42;
    assert_int_equal(train_embedding_main(), 0);
    rng_state = 42;
    make_data(); /* the same data again, for the loops */
    train_with_loops();
    double worst = 0, loss = 0;
    for (int r = 0; r < USERS * RANK; r++)
        worst = fmax(worst, fabs((double)learned_u[r] - (double)(&ref_u[0][0])[r]));
    for (int r = 0; r < ITEMS * RANK; r++)
        worst = fmax(worst, fabs((double)learned_v[r] - (double)(&ref_v[0][0])[r]));
    for (int n = 0; n < RATINGS; n++) { /* the loss of ndx's tables, by a loop */
        double pred = 0;
        for (int k = 0; k < RANK; k++)
            pred += (double)learned_u[users[n] * RANK + k] * learned_v[items[n] * RANK + k];
        loss += (pred - ratings[n]) * (pred - ratings[n]) / RATINGS;
    }
    print_message("largest difference from the loops' tables %.3g; loss %.3g\n", worst, loss);
    assert_true(worst < 1e-4);
    assert_true(loss < THRESHOLD);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learns_the_same_bits_at_1_and_2_threads),
        cmocka_unit_test(learns_what_plain_loops_learn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
