/* graph_store.h — the inside of ndx_graph, shared by graph.c (names, scopes, handles) and
 * graph_build.c (adding nodes). Private to the graph layer. */
#ifndef NDX_GRAPH_STORE_H
#define NDX_GRAPH_STORE_H

#include "graph_internal.h"

/* Longest full node name (ndx_graph.h): builders refuse longer ones, and the text reader holds a
 * name in a buffer of this size, so that every graph saved can be read. */
#define GRAPH_NAME_MAX NDX_GRAPH_NAME_MAX

/* Every full name in use (nodes and scopes share TensorFlow's one namespace): an open-addressing
 * set; per name the next suffix to try and the node that has it (0: a scope, or none yet). */
typedef struct graph_names {
    char **keys;
    uint32_t *next;
    uint32_t *node;
    size_t cap;
    size_t used;
} graph_names;

struct ndx_graph {
    graph_node **nodes; /* id i + 1 is nodes[i]; build order is a valid run order */
    uint32_t count, cap;
    char **strings;     /* interned: scope prefixes ("embed/"), exact names, file names */
    uint32_t nstrings, strings_cap;
    uint32_t *intern;   /* open-addressing table of string ids (0: empty; "" is id 0) */
    size_t intern_cap;
    graph_names names;
    ndx_error first;
    int failed;
    int finished;
    int64_t values;     /* outputs over all nodes */
    int max_inputs, max_outputs;
};

/* A new unique name from `base`: base itself, or base_1, base_2, ... (stored; NULL: no memory). */
char *graph_unique_name(ndx_graph *g, const char *base);
/* `name` itself, stored, or NULL when it is taken (or memory runs out: see graph_name_taken). */
char *graph_exact_name(ndx_graph *g, const char *name);
int graph_name_taken(const ndx_graph *g, const char *name);
/* Records that node `id` has the stored name `name`. */
void graph_name_node(ndx_graph *g, const char *name, uint32_t id);
int graph_valid_name(const char *name);

/* Interned copy of s (the same id for equal strings); 0 when memory runs out (id 0 is ""). */
uint32_t graph_intern(ndx_graph *g, const char *s);
const char *graph_string(const ndx_graph *g, uint32_t id);

/* Sets the graph's first error unless it has one. */
void graph_record_error(ndx_graph *g, const ndx_error *e);
void graph_record(ndx_graph *g, ndx_status code, const char *file, int line, const char *name,
                  const char *msg);

/* Builds a node of `kind` with these attributes (NULL: all 0; a grouped kind's count is
 * num_inputs / group) and inputs, as every builder does: its id, or 0 with the graph's first
 * error set (graph_build.c). The builders of ndx_graph.h and the text reader both build here. */
uint32_t graph_build(const char *file, int line, ndx_scope s, graph_kind kind,
                     const graph_attrs *attrs, int num_inputs, const ndx_output *inputs);

/* An op chosen by an enum value outside its enum: the error on the would-be node (of its
 * family's first kind, typed `type`), and the failed output (graph_build.c). */
ndx_output graph_refuse_variant(ndx_scope s, const char *file, int line, graph_kind first,
                                const char *type, const char *msg);

/* Appends a finished node (it gets id count + 1); 0 when memory runs out. */
int graph_append(ndx_graph *g, graph_node *n);
void graph_free_node(graph_node *n);

#endif /* NDX_GRAPH_STORE_H */
