/* A program that learns: matrix factorisation of a ratings table with a known answer. Hidden
 * factors U* (users x rank) and V* (items x rank) make the ratings r = sum(U*[u] * V*[i]) of a
 * random set of (user, item) pairs; the model's tables U and V start small and random, and each
 * step feeds a batch of pairs and their ratings, computes the squared error, takes its gradients
 * with ndx_graph_gradients (rows of U and V: slices, never a dense table) and applies them with
 * sparse Adagrad. The loss over all ratings must fall below THRESHOLD (exit 0 only if it does).
 * NDX_THREADS=n runs the session on n threads; NDX_SAVE=path writes the learned tables there
 * (.npz: U.npy, V.npy and the accumulators), which tests/python compares with
 * examples/train_embedding.py's. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <ndx_graph.h>

enum { USERS = 500, ITEMS = 400, RANK = 16, BATCH = 1024, BATCHES = 32, EPOCHS = 30 };
#define RATINGS (BATCH * BATCHES)
#define THRESHOLD 0.0001 /* a thousandth of where it starts */

static uint64_t rng_state = 42;
static float uniform(float lo, float hi) { /* our own generator: the same numbers everywhere */
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return lo + (hi - lo) * (float)(rng_state >> 40) / (float)(1 << 24);
}

static float u_true[USERS][RANK], v_true[ITEMS][RANK], u_init[USERS][RANK], v_init[ITEMS][RANK];
static int32_t users[RATINGS], items[RATINGS];
static float ratings[RATINGS];

static void make_data(void) {
    for (int u = 0; u < USERS; u++)
        for (int k = 0; k < RANK; k++) u_true[u][k] = uniform(-0.5f, 0.5f);
    for (int i = 0; i < ITEMS; i++)
        for (int k = 0; k < RANK; k++) v_true[i][k] = uniform(-0.5f, 0.5f);
    for (int n = 0; n < RATINGS; n++) {
        users[n] = (int32_t)uniform(0, USERS);
        items[n] = (int32_t)uniform(0, ITEMS);
        float r = 0;
        for (int k = 0; k < RANK; k++) r += u_true[users[n]][k] * v_true[items[n]][k];
        ratings[n] = r;
    }
    for (int u = 0; u < USERS; u++)
        for (int k = 0; k < RANK; k++) u_init[u][k] = uniform(-0.1f, 0.1f);
    for (int i = 0; i < ITEMS; i++)
        for (int k = 0; k < RANK; k++) v_init[i][k] = uniform(-0.1f, 0.1f);
}

/* A float32 table of `rows` x RANK held in a Variable named `name`, initialised from `init`. */
static ndx_output table(ndx_scope s, const char *name, int64_t rows, float *init) {
    ndx_tensor value = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){rows, RANK}, init);
    return ndx_op_variable(ndx_scope_named(s, name), ndx_op_const(s, &value));
}

int main(void) {
    make_data();
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output U = table(s, "U", USERS, &u_init[0][0]), V = table(s, "V", ITEMS, &v_init[0][0]);

    /* a batch: user ids and item ids int32 [BATCH, 1], ratings float32 [BATCH] */
    ndx_spec ids_spec = ndx_spec_make(NDX_INT32, 2, (int64_t[]){BATCH, 1});
    ndx_spec r_spec = ndx_spec_make(NDX_FLOAT32, 1, (int64_t[]){BATCH});
    ndx_output user = ndx_op_placeholder(ndx_scope_named(s, "user"), &ids_spec);
    ndx_output item = ndx_op_placeholder(ndx_scope_named(s, "item"), &ids_spec);
    ndx_output rating = ndx_op_placeholder(ndx_scope_named(s, "rating"), &r_spec);

    /* pred = sum(U[u] * V[i]) over the rank; loss = sum((pred - r)^2) over the batch */
    ndx_output rows_u = ndx_op_gather_nd(s, U, user, NULL);
    ndx_output rows_v = ndx_op_gather_nd(s, V, item, NULL);
    ndx_output pred = ndx_op_reduce_sum(s, ndx_op_mul(s, rows_u, rows_v),
                                        ndx_op_const_int(s, NDX_INT32, 1), 0);
    ndx_output diff = ndx_op_sub(s, pred, rating);
    ndx_output loss = ndx_op_reduce_sum(ndx_scope_named(s, "loss"), ndx_op_mul(s, diff, diff),
                                        ndx_op_const_int(s, NDX_INT32, 0), 0);

    /* d loss / d U and d V: slices (the rows the batch gathered), applied by sparse Adagrad */
    ndx_output tables[2] = {U, V};
    ndx_gradient grads[2];
    ndx_graph_gradients(s, 1, &loss, NULL, 2, tables, grads);
    static float accum_init[USERS > ITEMS ? USERS : ITEMS][RANK];
    for (int r = 0; r < USERS; r++)
        for (int k = 0; k < RANK; k++) accum_init[r][k] = 0.1f;
    ndx_output accum_u = table(s, "accum_U", USERS, &accum_init[0][0]);
    ndx_output accum_v = table(s, "accum_V", ITEMS, &accum_init[0][0]);
    ndx_output lr = ndx_op_const_float(s, NDX_FLOAT32, 0.1);
    /* Keras's step (ndx.optimizers.Adagrad's): a row the batch names twice is stepped once,
     * with its gradient rows summed */
    int flags = NDX_APPLY_UPDATE_SLOTS | NDX_APPLY_SUM_DUPLICATES;
    ndx_operation steps[2] = {
        ndx_op_apply_adagrad(s, U, accum_u, lr, NULL, grads[0].values, grads[0].indices, flags),
        ndx_op_apply_adagrad(s, V, accum_v, lr, NULL, grads[1].values, grads[1].indices, flags)};

    ndx_error err;
    ndx_session *session = NULL;
    const char *threads_env = getenv("NDX_THREADS"), *save = getenv("NDX_SAVE");
    ndx_session_options options = {.num_threads = threads_env ? atoi(threads_env) : 0};
    if (ndx_graph_finish(g, &err) != NDX_OK || !(session = ndx_session_new(g, &options, &err))) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    printf("%d users, %d items, rank %d, %d ratings, batches of %d, sparse Adagrad\n", USERS,
           ITEMS, RANK, RATINGS, BATCH);

    float batch_loss;
    ndx_fetch fetch = {loss, NDX_FETCH_INTO, ndx_tensor_make(NDX_FLOAT32, 0, NULL, &batch_loss)};
    double epoch_loss = 0;
    for (int epoch = 0; epoch <= EPOCHS; epoch++) {
        /* the last pass only measures: the loss over all ratings, no update */
        int train = epoch < EPOCHS;
        epoch_loss = 0;
        for (int b = 0; b < BATCHES; b++) {
            int64_t at = (int64_t)b * BATCH;
            ndx_feed feeds[3] = {
                {user, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){BATCH, 1}, users + at)},
                {item, ndx_tensor_make(NDX_INT32, 2, (int64_t[]){BATCH, 1}, items + at)},
                {rating, ndx_tensor_make(NDX_FLOAT32, 1, (int64_t[]){BATCH}, ratings + at)}};
            if (ndx_session_run_targets(session, 3, feeds, 1, &fetch, train ? 2 : 0, steps,
                                        &err) != NDX_OK) {
                fprintf(stderr, "%s\n", err.message);
                return 1;
            }
            epoch_loss += batch_loss / RATINGS;
        }
        if (epoch % 5 == 0 || !train)
            printf("%s %2d: loss %.6f\n", train ? "epoch" : "after", epoch, epoch_loss);
    }
    int learned = epoch_loss < THRESHOLD;
    printf("loss %s %g\n", learned ? "below" : "NOT below", THRESHOLD);
    if (save && ndx_session_save_variables(session, save, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }

    ndx_session_free(session);
    ndx_graph_free(g);
    return learned ? 0 : 1;
}
