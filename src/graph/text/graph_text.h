/* graph_text.h — what the text form's writer (graph_text.c), reader (graph_parse.c) and files
 * (graph_file.c) share: a growing text buffer, the formats of specs and constant values, and the
 * limits every reader enforces. Private to the graph layer. */
#ifndef NDX_GRAPH_TEXT_H
#define NDX_GRAPH_TEXT_H

#include "graph_store.h"

#define GRAPH_TEXT_VERSION "ndx-graph 1"
/* Constants with at most this many elements are written inline; larger ones go to the .npz. */
#define GRAPH_INLINE_MAX 64
/* Limits of the reader: file size, nodes, inline elements, one string element's bytes. */
#define GRAPH_FILE_MAX ((size_t)256 << 20)
#define GRAPH_NODES_MAX 1000000
#define GRAPH_VALUES_MAX ((int64_t)1 << 20)
#define GRAPH_CONST_MAX_BYTES ((size_t)1 << 30)

typedef struct text_buf {
    char *p;
    size_t len, cap;
    int failed; /* out of memory: everything after is dropped */
} text_buf;

void tb_put(text_buf *b, const char *s, size_t n);
void tb_printf(text_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* "float32[2, ?]", "string(8)[*]": a spec as the text form writes it. */
void graph_format_spec(text_buf *b, const ndx_spec *s);
/* 1 when the constant can be written inline and read back to the same bits (few elements, NaNs
 * only the canonical one). */
int graph_value_inline(const ndx_tensor *t);
/* "[1, 2.5, nan]", "[\"a\", \"b\\x00c\"]", "[(1, -2)]": every element, in row-major order. */
void graph_format_value(text_buf *b, const ndx_tensor *t);

/* Writes g's canonical text (constants too large to inline as value=@NAME). */
void graph_write_text(const ndx_graph *g, text_buf *b);

/* The .npz path beside a graph file: "g.txt" -> "g.npz", other names get ".npz" appended. */
char *graph_npz_path(const char *path);

/* Reads the text form; `npz` is the archive value=@NAME refers to (NULL: none). `source` names
 * the text in messages and in the nodes' file:line. */
ndx_graph *graph_parse(const char *text, size_t len, const char *source, const char *npz,
                       ndx_error *err);

/* A scope that makes the next node's full name exactly `full` ("embed/GatherNd"). */
ndx_scope graph_scope_exact(ndx_graph *g, const char *full);

#endif /* NDX_GRAPH_TEXT_H */
