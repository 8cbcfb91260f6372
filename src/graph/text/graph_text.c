/* graph_text.c — the text form of a graph, written (one line per node in build order:
 * `NAME = Op(inputs) attrs : output specs`), and saved graphs as files: the text, plus an .npz
 * beside it for constants too large to write inline. Reading is graph_parse.c (with graph_lex.c,
 * graph_parse_value.c and graph_parse_build.c). */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "graph_text.h"
#include "ndx_io.h"

static void write_ref(text_buf *b, const ndx_graph *g, ndx_output o) {
    tb_printf(b, "%s", graph_node_at(g, o.op.id)->name);
    if (o.index) tb_printf(b, ":%d", o.index);
}

/* A set of axes as a list: the non-negative ones ascending, then the negative ones (-1, -2,
 * ...). */
static void write_axes(text_buf *b, uint32_t mask) {
    tb_put(b, "[", 1);
    int first = 1;
    for (int bit = 0; bit < 2 * NDX_MAX_RANK; bit++) {
        if (!(mask >> bit & 1u)) continue;
        tb_printf(b, "%s%d", first ? "" : ", ", bit < NDX_MAX_RANK ? bit : NDX_MAX_RANK - 1 - bit);
        first = 0;
    }
    tb_put(b, "]", 1);
}

/* The attributes of n's kind's schema, in its order: those that differ from their defaults and
 * those always written. */
static void write_attrs(text_buf *b, const graph_node *n) {
    const graph_kind_desc *d = graph_desc(n->kind);
    for (int i = 0; i < d->num_attrs; i++) {
        const graph_attr_def *a = &d->attrs[i];
        if (a->type == GRAPH_ATTR_VALUE) {
            tb_printf(b, " %s=", a->name);
            if (graph_value_inline(&n->values[0]))
                graph_format_value(b, &n->values[0]);
            else
                tb_printf(b, "@%s", n->name);
            continue;
        }
        int v = graph_attr_get(&n->attrs, a);
        if (v == a->def && !(a->flags & GRAPH_ATTR_ALWAYS)) continue;
        tb_printf(b, " %s=", a->name);
        switch (a->type) {
        case GRAPH_ATTR_INT: tb_printf(b, "%d", v); break;
        case GRAPH_ATTR_BOOL: tb_printf(b, "%s", v ? "true" : "false"); break;
        case GRAPH_ATTR_POLICY: tb_printf(b, "%s", v ? "ignore" : "error"); break;
        case GRAPH_ATTR_AXES: write_axes(b, (uint32_t)v); break;
        default: tb_printf(b, "%s", ndx_dtype_name((ndx_dtype)v)); break;
        }
    }
}

void graph_write_text(const ndx_graph *g, text_buf *b) {
    tb_printf(b, "%s\n", GRAPH_TEXT_VERSION);
    for (uint32_t id = 1; id <= g->count; id++) {
        const graph_node *n = graph_node_at(g, id);
        tb_printf(b, "%s = %s(", n->name, graph_type_name(n));
        for (int i = 0; i < n->num_inputs; i++) {
            if (i) tb_put(b, ", ", 2);
            write_ref(b, g, n->inputs[i]);
        }
        tb_put(b, ")", 1);
        write_attrs(b, n);
        if (n->num_outputs) tb_put(b, " :", 2);
        for (int k = 0; k < n->num_outputs; k++) {
            tb_put(b, k ? ", " : " ", k ? 2 : 1);
            graph_format_spec(b, &n->specs[k]);
        }
        tb_put(b, "\n", 1);
    }
}

char *graph_npz_path(const char *path) {
    size_t len = strlen(path);
    int txt = len > 4 && strcmp(path + len - 4, ".txt") == 0;
    char *npz = malloc(len + 5);
    if (!npz) return NULL;
    memcpy(npz, path, len + 1);
    strcpy(npz + (txt ? len - 4 : len), ".npz");
    return npz;
}

/* ---- the public functions ----------------------------------------------------------------- */

static ndx_status graph_usable(const ndx_graph *g, const char *op, ndx_error *err) {
    ndx_error_clear(err);
    if (!g) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "%s: the graph is NULL", op);
    return ndx_graph_status(g, err);
}

ndx_status ndx_graph_to_text(const ndx_graph *g, char **text, size_t *len, ndx_error *err) {
    if (text) *text = NULL;
    if (len) *len = 0;
    NDX_TRY(graph_usable(g, "ndx_graph_to_text", err));
    if (!text) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_graph_to_text: text is NULL");
    text_buf b = {0};
    graph_write_text(g, &b);
    if (b.failed) {
        free(b.p);
        return ndx_fail(err, NDX_E_NO_MEMORY, "ndx_graph_to_text: out of memory");
    }
    *text = b.p;
    if (len) *len = b.len;
    return NDX_OK;
}

/* The constants that do not go inline, as the .npz's members. */
static ndx_status write_npz(const ndx_graph *g, const char *npz, ndx_error *err) {
    int count = 0;
    for (uint32_t id = 1; id <= g->count; id++) {
        const graph_node *n = graph_node_at(g, id);
        count += n->kind == GRAPH_CONST && !graph_value_inline(&n->values[0]);
    }
    if (count == 0) return NDX_OK;
    const char **keys = malloc((size_t)count * sizeof *keys);
    ndx_tensor *values = malloc((size_t)count * sizeof *values);
    ndx_status st = NDX_E_NO_MEMORY;
    if (keys && values) {
        int k = 0;
        for (uint32_t id = 1; id <= g->count; id++) {
            const graph_node *n = graph_node_at(g, id);
            if (n->kind != GRAPH_CONST || graph_value_inline(&n->values[0])) continue;
            keys[k] = n->name;
            values[k++] = n->values[0];
        }
        ndx_file_out o;
        st = ndx_file_out_open(&o, npz, err);
        if (st == NDX_OK) st = ndx_npz_write_arrays(o.f, count, keys, values, 0, npz, err);
        if (st == NDX_OK) st = ndx_file_out_commit(&o, err);
        else ndx_file_out_abort(&o);
    } else {
        ndx_fail(err, st, "ndx_graph_save: out of memory");
    }
    free(keys);
    free(values);
    return st;
}

ndx_status ndx_graph_save(const ndx_graph *g, const char *path, ndx_error *err) {
    NDX_TRY(graph_usable(g, "ndx_graph_save", err));
    if (!path) return ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_graph_save: path is NULL");
    char *npz = graph_npz_path(path);
    text_buf b = {0};
    graph_write_text(g, &b);
    ndx_status st = NDX_OK;
    if (b.failed || !npz) st = ndx_fail(err, NDX_E_NO_MEMORY, "ndx_graph_save: out of memory");
    /* The archive first: a text that refers to members is never left without them. */
    if (st == NDX_OK) st = write_npz(g, npz, err);
    ndx_file_out o;
    if (st == NDX_OK) st = ndx_file_out_open(&o, path, err);
    if (st == NDX_OK) {
        if (fwrite(b.p, 1, b.len, o.f) != b.len) {
            ndx_file_out_abort(&o);
            st = ndx_fail(err, NDX_E_IO, "%s: cannot write", path);
        } else {
            st = ndx_file_out_commit(&o, err);
        }
    }
    free(b.p);
    free(npz);
    return st;
}

/* Reads the whole text file, refusing what is larger than the reader takes. */
static ndx_status read_text(const char *path, char **text, size_t *len, ndx_error *err) {
    *text = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return ndx_fail(err, NDX_E_IO, "%s: cannot open", path);
    text_buf b = {0};
    char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
        if (b.len + got > GRAPH_FILE_MAX) {
            fclose(f);
            free(b.p);
            return ndx_fail(err, NDX_E_FORMAT, "%s: larger than the %zu bytes a graph may have",
                            path, (size_t)GRAPH_FILE_MAX);
        }
        tb_put(&b, chunk, got);
    }
    int bad = ferror(f);
    fclose(f);
    if (bad || b.failed) {
        free(b.p);
        return ndx_fail(err, bad ? NDX_E_IO : NDX_E_NO_MEMORY, "%s: cannot read", path);
    }
    *text = b.p;
    *len = b.len;
    return NDX_OK;
}

ndx_graph *ndx_graph_load(const char *path, ndx_error *err) {
    ndx_error_clear(err);
    if (!path) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_graph_load: path is NULL");
        return NULL;
    }
    char *text;
    size_t len;
    if (read_text(path, &text, &len, err) != NDX_OK) return NULL;
    char *npz = graph_npz_path(path);
    ndx_graph *g = NULL;
    if (!npz)
        ndx_fail(err, NDX_E_NO_MEMORY, "ndx_graph_load: out of memory");
    else
        g = graph_parse(text ? text : "", len, path, npz, err);
    free(npz);
    free(text);
    return g;
}

ndx_graph *ndx_graph_from_text(const char *text, size_t len, const char *source,
                               ndx_error *err) {
    ndx_error_clear(err);
    if (!text && len) {
        ndx_fail(err, NDX_E_INVALID_ARGUMENT, "ndx_graph_from_text: text is NULL");
        return NULL;
    }
    return graph_parse(text ? text : "", len, source ? source : "graph", NULL, err);
}
