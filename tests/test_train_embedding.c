/* examples/train_embedding.c run as it is, at 1 and at 2 threads: it must learn (exit 0) both
 * times, and the tables it learned must be the same bits. The example is compiled in with its
 * session's creation and release redirected here, which is how the thread count gets in and the
 * tables get out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
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

#define ndx_session_new(g, opt, err) session_at_threads(g, err)
#define ndx_session_free(s) free_after_reading(s)
#define main train_embedding_main
#include "../examples/train_embedding.c"
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(learns_the_same_bits_at_1_and_2_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
