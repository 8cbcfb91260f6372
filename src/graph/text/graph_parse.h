/* graph_parse.h — what the files of the text-form reader share: the parser's cursor, the
 * tokens (graph_lex.c), constant values (graph_parse_value.c), what a node's line says and
 * building its node (graph_parse_build.c); lines and nodes are read in graph_parse.c. Private to
 * the graph layer. */
#ifndef NDX_GRAPH_PARSE_H
#define NDX_GRAPH_PARSE_H

#include "graph_text.h"
#include "ndx_io.h"

/* Most inputs of one node (sparse_concat takes three per sparse input). */
#define PARSE_MAX_INPUTS (3 * NDX_GRAPH_MAX_ARITY)

typedef struct parser {
    const char *end;        /* of the whole text */
    const char *line_start; /* of the current line */
    const char *line_end;
    const char *p;          /* the cursor */
    int line;
    const char *source;
    const char *npz;
    ndx_graph *g;
    ndx_error *err;
} parser;

/* ---- tokens (graph_lex.c) ------------------------------------------------------------------ */

/* An NDX_E_FORMAT error "source:line:column: message", the column that of `at`. */
ndx_status gp_fail_at(parser *ps, const char *at, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void gp_skip_ws(parser *ps);
/* 1 at the end of the line's content (a '#' starts a comment). */
int gp_at_end(parser *ps);
/* Consumes c (after blanks) when it is next; 1 when it was. */
int gp_eat(parser *ps, char c);
ndx_status gp_expect(parser *ps, char c, const char *what);
/* A run of name characters at the cursor; its length (0: none). */
size_t gp_scan(parser *ps, int with_slash);
/* A node name (GRAPH_NAME_MAX + 1 bytes in buf), each '/'-separated part a valid name. */
ndx_status gp_read_name(parser *ps, char *buf, const char *what);
ndx_status gp_read_int(parser *ps, int64_t lo, int64_t hi, int64_t *v, const char *what);
ndx_status gp_read_dtype(parser *ps, ndx_dtype *dt);
/* dtype ["(" width ")"] "[" ("*" | dim {"," dim}) "]" with dims integers or "?". */
ndx_status gp_read_spec(parser *ps, ndx_spec *s);

/* ---- constant values (graph_parse_value.c) ------------------------------------------------- */

/* value=[e, e, ...]: exactly the declared spec's elements, in row-major order, into *owned. */
ndx_status gp_read_inline(parser *ps, const ndx_spec *s, ndx_tensor *t, void **owned);
/* value=@member: a member of the graph's .npz, of exactly the declared spec. */
ndx_status gp_read_member(parser *ps, const char *at, const char *member, const ndx_spec *s,
                          ndx_array *a);

/* ---- one node ------------------------------------------------------------------------------ */

/* What a line says. */
typedef struct node_line {
    char name[GRAPH_NAME_MAX + 1];
    char op[64];
    const char *op_at;
    ndx_output *inputs;
    int num_inputs, cap_inputs;
    ndx_spec *specs;         /* one per output: as many as a DynamicPartition has */
    int num_specs, cap_specs;
    graph_kind kind;
    graph_attrs attrs;       /* the schema's defaults, then what the line gives */
    unsigned given;          /* bit i: the kind's attribute i was given */
    const char *value_at;    /* value=: where it starts; NULL when absent */
} node_line;

/* Builds the node a line describes as the builders of ndx_graph.h do (graph_parse_build.c). */
ndx_status gp_build_line(parser *ps, node_line *nl);
/* A Const: its value from the line or the .npz, of its one complete declared spec
 * (graph_parse_value.c). */
ndx_status gp_build_const(parser *ps, node_line *nl);

#endif /* NDX_GRAPH_PARSE_H */
