/* fuzz_graph.c — the saved-graph reader on fuzz bytes, read as the text form
 * (ndx_graph_from_text). A rejected text: a status and a one-line message naming its line, nothing
 * left to free. An accepted one: its canonical text reads back to the same canonical text, and a
 * session runs it (no feeds, all outputs of its last node fetched, its first 8 updates of
 * variables as targets, under a memory cap), failing cleanly or giving outputs that its inferred
 * specs admit. When the last node's first output is float or complex, its gradients with respect
 * to the graph's float and complex constants are added first (ndx_graph_gradients) and fetched
 * too: they build, or fail with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "ndx_graph.h"

/* Adds the gradients of the last node's output 0 (when float or complex) with respect to up to
 * 4 float or complex constants; their dense forms go to grads[] (the count is returned). */
static int differentiate(ndx_graph *g, ndx_output *grads) {
    int n = ndx_graph_node_count(g), nx = 0;
    if (n == 0) return 0;
    ndx_output y = ndx_operation_output(ndx_graph_node(g, n - 1), 0), xs[4];
    ndx_dtype dt = ndx_output_spec(y).dtype;
    if (ndx_dtype_kind_of(dt) != NDX_KIND_FLOAT && ndx_dtype_kind_of(dt) != NDX_KIND_COMPLEX)
        return 0;
    for (int i = 0; i < n - 1 && nx < 4; i++) {
        ndx_output o = ndx_operation_output(ndx_graph_node(g, i), 0);
        ndx_dtype_kind k = ndx_dtype_kind_of(ndx_output_spec(o).dtype);
        if (ndx_output_constant(o) && (k == NDX_KIND_FLOAT || k == NDX_KIND_COMPLEX)) xs[nx++] = o;
    }
    ndx_gradient dx[4];
    ndx_error err;
    ndx_scope s = ndx_graph_root(g);
    if (ndx_graph_gradients(s, 1, &y, NULL, nx, xs, dx) != NDX_OK) {
        FZ_CHECK(ndx_graph_status(g, &err) != NDX_OK && err.message[0] != '\0',
                 "a failed gradient without the graph's error");
        return 0;
    }
    int k = 0;
    for (int j = 0; j < nx; j++)
        if (dx[j].form != NDX_GRADIENT_NONE) grads[k++] = ndx_gradient_to_dense(s, dx[j]);
    return ndx_graph_status(g, &err) == NDX_OK ? k : 0;
}

static void run_last_node(const ndx_graph *g, ndx_operation last, int ngrads,
                          const ndx_output *grads) {
    if (!ndx_operation_ok(last)) return;
    ndx_node node;
    FZ_CHECK(ndx_node_info(last, &node, NULL) == NDX_OK, "node_info of a live node failed");
    ndx_session_options opt = {1, (size_t)16 << 20, NULL};
    ndx_error err;
    ndx_session *s = ndx_session_new(g, &opt, &err);
    FZ_CHECK(s != NULL, "a finished graph without errors got no session: %s", err.message);
    ndx_fetch fetch[12];
    int k = node.num_outputs < 8 ? node.num_outputs : 8;
    for (int i = 0; i < k + ngrads; i++) {
        fetch[i].output = i < k ? ndx_operation_output(last, i) : grads[i - k];
        fetch[i].mode = NDX_FETCH_BORROW;
        memset(&fetch[i].value, 0, sizeof fetch[i].value);
    }
    k += ngrads;
    ndx_operation targets[8]; /* updates of variables (no outputs) run as targets */
    int t = 0, n = ndx_graph_node_count(g);
    for (int i = 0; i < n && t < 8; i++) {
        ndx_node other;
        ndx_node_info(ndx_graph_node(g, i), &other, NULL);
        if (other.num_outputs == 0) targets[t++] = ndx_graph_node(g, i);
    }
    if (ndx_session_run_targets(s, 0, NULL, k, fetch, t, targets, &err) == NDX_OK) {
        for (int i = 0; i < k; i++) {
            ndx_spec spec = ndx_output_spec(fetch[i].output);
            FZ_CHECK(ndx_spec_admits(&spec, &fetch[i].value), "output %d breaks its spec", i);
        }
    } else {
        FZ_CHECK(err.message[0] != '\0', "a failed run without a message");
        for (int i = 0; i < k; i++) FZ_CHECK(fetch[i].value.data == NULL, "a failed run fetched");
    }
    ndx_session_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ndx_error err;
    ndx_graph *g = ndx_graph_from_text((const char *)data, size, "fuzz", &err);
    if (!g) {
        FZ_CHECK(err.code != NDX_OK && err.message[0] != '\0', "a refusal without a message");
        FZ_CHECK(strchr(err.message, '\n') == NULL, "a message of more than one line");
        return 0;
    }
    char *text;
    size_t len;
    FZ_CHECK(ndx_graph_to_text(g, &text, &len, &err) == NDX_OK, "to_text failed: %s",
             err.message);
    ndx_graph *h = ndx_graph_from_text(text, len, "canonical", &err);
    /* A constant too large to inline is written as value=@NAME, which text alone cannot hold. */
    if (h) {
        char *again;
        size_t len2;
        FZ_CHECK(ndx_graph_to_text(h, &again, &len2, &err) == NDX_OK, "to_text failed");
        FZ_CHECK(len2 == len && memcmp(again, text, len) == 0,
                 "the canonical text did not read back to itself");
        free(again);
        ndx_graph_free(h);
    } else {
        FZ_CHECK(strstr(err.message, "refers to an .npz") != NULL,
                 "the canonical text was refused: %s", err.message);
    }
    free(text);
    int n = ndx_graph_node_count(g);
    ndx_operation last = n ? ndx_graph_node(g, n - 1) : (ndx_operation){g, 0};
    ndx_output grads[4];
    int ngrads = differentiate(g, grads);
    if (ndx_graph_finish(g, &err) == NDX_OK) run_last_node(g, last, ngrads, grads);
    ndx_graph_free(g);
    return 0;
}
