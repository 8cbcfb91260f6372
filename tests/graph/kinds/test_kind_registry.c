/* test_kind_registry.c — the public registry of kinds (ndx_kind_count, ndx_kind_info,
 * ndx_kind_find) against what the graph layer does with the same kinds: every kind is found by
 * its own type name; ndx_op_by_type accepts exactly the counts of inputs the registry gives
 * (min and max accepted, one fewer or more refused as a count); an attribute given its
 * registry-described non-default value appears in the text form as the registry's type says it
 * is written, and a default one only when the registry says it is always written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ndx_test.h"

#include "ndx_graph.h"

/* The dtypes tried for a kind's inputs (all inputs one dtype, or index-named inputs int32):
 * the first that builds is used. */
static const ndx_dtype tried[] = {NDX_FLOAT32, NDX_INT32, NDX_BOOL};

static int index_named(const char *name) {
    static const char *const words[] = {"indices", "partitions", "shape", "dense_shape", "axis",
                                        "begin", "size", "dims", "s0", "s1", "start", "limit",
                                        "delta", "condition", "ids", "bags", "num_bags"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strcmp(name, words[i]) == 0) return 1;
    return 0;
}

/* The name input i of n has (the registry's rule). */
static const char *input_name(const ndx_kind *k, int n, int i) {
    if (!k->group) return k->input_names[i < k->num_input_names ? i : 0];
    /* (a count the kind refuses still gets a name: the last of its runs) */
    int per = (n - k->trailing) / k->group > 0 ? (n - k->trailing) / k->group : 1;
    int after = i - k->group * per;
    if (k->trailing && after >= 0) return k->input_names[k->group + (after < k->trailing ? after : 0)];
    return k->input_names[i / per < k->group ? i / per : k->group - 1];
}

/* Builds a node of kind k with n placeholder inputs (of unknown shape) and the attributes
 * given; `mix` picks the dtypes. Returns the graph (the caller frees it). */
static ndx_graph *build(const ndx_kind *k, int n, int mix, int num_attrs, const ndx_attr *attrs,
                        ndx_operation *op) {
    ndx_graph *g = ndx_graph_new();
    ndx_scope s = ndx_graph_root(g);
    ndx_output in[16];
    assert_true(n <= 16);
    for (int i = 0; i < n; i++) {
        const char *name = input_name(k, n, i);
        ndx_dtype dt = mix < 3 ? tried[mix] : index_named(name) ? NDX_INT32
                       : mix == 3 ? NDX_FLOAT32 : NDX_BOOL;
        if (strcmp(name, "condition") == 0 && mix == 4) dt = NDX_BOOL;
        ndx_spec spec = ndx_spec_make(dt, NDX_UNKNOWN, NULL);
        in[i] = ndx_op_placeholder(s, &spec);
    }
    *op = ndx_op_by_type(s, k->type, n, in, num_attrs, attrs);
    return g;
}

/* The required attributes at a value they accept. */
static int required_attrs(const ndx_kind *k, ndx_attr *attrs) {
    int m = 0;
    for (int j = 0; j < k->num_attrs; j++)
        if (k->attrs[j].required) {
            attrs[m].name = k->attrs[j].name;
            attrs[m++].value = k->attrs[j].lo > 0 ? k->attrs[j].lo : 1;
        }
    return m;
}

/* The dtype mix under which kind k builds with n inputs, or -1. */
static int mix_that_builds(const ndx_kind *k, int n, int num_attrs, const ndx_attr *attrs) {
    for (int mix = 0; mix < 5; mix++) {
        ndx_operation op;
        ndx_graph *g = build(k, n, mix, num_attrs, attrs, &op);
        int ok = ndx_graph_status(g, NULL) == NDX_OK;
        ndx_graph_free(g);
        if (ok) return mix;
    }
    return -1;
}

static void test_every_kind_is_found_by_its_name(void **state) {
    (void)state;
    int count = ndx_kind_count();
    assert_true(count > 60);
    for (int i = 0; i < count; i++) {
        ndx_kind k;
        assert_int_equal(ndx_kind_info(i, &k, NULL), NDX_OK);
        assert_non_null(k.type);
        assert_int_equal(ndx_kind_find(k.type), i);
        assert_true(k.num_attrs >= 0 && k.num_attrs <= NDX_KIND_MAX_ATTRS);
        assert_true(k.num_input_names <= NDX_KIND_MAX_INPUT_NAMES);
        assert_true(k.num_outputs >= 0 || (k.num_outputs == -1 && k.outputs_attr));
        for (int j = 0; j < k.num_attrs; j++) {
            const ndx_kind_attr *a = &k.attrs[j];
            assert_true(a->lo <= a->hi);
            if (a->type != NDX_KIND_ATTR_VALUE && !a->required)
                assert_true(a->def >= a->lo && a->def <= a->hi);
            assert_true(a->alias == NULL || a->type == NDX_KIND_ATTR_POLICY);
        }
    }
    assert_int_equal(ndx_kind_find("NoSuchOp"), -1);
    assert_int_equal(ndx_kind_find(NULL), -1);
    ndx_kind k;
    ndx_error err = {0};
    assert_int_equal(ndx_kind_info(count, &k, &err), NDX_E_INVALID_ARGUMENT);
    assert_non_null(strstr(err.message, "no kind"));
    assert_int_equal(ndx_kind_info(-1, &k, NULL), NDX_E_INVALID_ARGUMENT);
}

/* TensorFlow's facts the registry must state, independent of the table's layout. */
static void test_known_kinds(void **state) {
    (void)state;
    ndx_kind k;
    assert_int_equal(ndx_kind_info(ndx_kind_find("GatherNd"), &k, NULL), NDX_OK);
    assert_int_equal(k.min_inputs, 2);
    assert_int_equal(k.max_inputs, 2);
    assert_string_equal(k.input_names[0], "params");
    assert_string_equal(k.input_names[1], "indices");
    assert_int_equal(k.num_attrs, 2);
    assert_string_equal(k.attrs[0].name, "batch_dims");
    assert_int_equal(k.attrs[0].type, NDX_KIND_ATTR_INT);
    assert_int_equal(k.attrs[1].type, NDX_KIND_ATTR_POLICY);
    assert_string_equal(k.attrs[1].alias, "zero");
    assert_int_equal(k.attrs[1].def, NDX_BAD_INDICES_ERROR);
    assert_int_equal(ndx_kind_info(ndx_kind_find("TensorScatterAdd"), &k, NULL), NDX_OK);
    assert_string_equal(k.attrs[0].alias, "skip");
    assert_int_equal(ndx_kind_info(ndx_kind_find("DynamicPartition"), &k, NULL), NDX_OK);
    assert_int_equal(k.num_outputs, -1);
    assert_string_equal(k.outputs_attr, "num_partitions");
    assert_true(k.attrs[0].required);
    assert_int_equal(ndx_kind_info(ndx_kind_find("SparseConcat"), &k, NULL), NDX_OK);
    assert_int_equal(k.group, 3);
    assert_true(k.grouped_parts);
    assert_true(k.flags & NDX_KIND_SPARSE_OUTPUT);
    assert_int_equal(ndx_kind_info(ndx_kind_find("ConcatV2"), &k, NULL), NDX_OK);
    assert_int_equal(k.group, 1);
    assert_int_equal(k.trailing, 1);
    assert_int_equal(ndx_kind_info(ndx_kind_find("Variable"), &k, NULL), NDX_OK);
    assert_true(k.flags & NDX_KIND_OWN_BUILDER);
    assert_true(k.flags & NDX_KIND_STATEFUL);
    assert_int_equal(ndx_kind_info(ndx_kind_find("ResourceScatterNdAdd"), &k, NULL), NDX_OK);
    assert_true(k.flags & NDX_KIND_MUTATES);
    assert_int_equal(k.num_variables, 1);
    assert_int_equal(k.num_outputs, 0);
}

/* 1 when building kind k with n inputs is refused for its count of inputs. */
static int refused_as_count(const ndx_kind *k, int n) {
    ndx_attr attrs[NDX_KIND_MAX_ATTRS];
    int m = required_attrs(k, attrs);
    ndx_operation op;
    ndx_graph *g = build(k, n, 0, m, attrs, &op);
    ndx_error err = {0};
    int refused = ndx_graph_status(g, &err) != NDX_OK && strstr(err.message, " inputs, not ");
    ndx_graph_free(g);
    return refused;
}

static void test_counts_of_inputs_agree_with_by_type(void **state) {
    (void)state;
    for (int i = 0; i < ndx_kind_count(); i++) {
        ndx_kind k;
        assert_int_equal(ndx_kind_info(i, &k, NULL), NDX_OK);
        if (k.flags & NDX_KIND_OWN_BUILDER) continue;
        int lo = k.min_inputs, hi = k.group ? lo + k.group : k.max_inputs;
        if (refused_as_count(&k, lo) || refused_as_count(&k, hi))
            fail_msg("%s refuses %d or %d inputs", k.type, lo, hi);
        if (lo > 0 && !refused_as_count(&k, lo - 1))
            fail_msg("%s accepts %d inputs", k.type, lo - 1);
        if ((k.group != 1) && !refused_as_count(&k, hi + 1))
            fail_msg("%s accepts %d inputs", k.type, hi + 1);
    }
}

/* How the text form writes value v of attribute a. */
static void format_attr(const ndx_kind_attr *a, int64_t v, char *buf, size_t cap) {
    switch (a->type) {
    case NDX_KIND_ATTR_BOOL: snprintf(buf, cap, " %s=%s", a->name, v ? "true" : "false"); break;
    case NDX_KIND_ATTR_POLICY: snprintf(buf, cap, " %s=%s", a->name, v ? "ignore" : "error"); break;
    case NDX_KIND_ATTR_DTYPE:
        snprintf(buf, cap, " %s=%s", a->name, ndx_dtype_name((ndx_dtype)v));
        break;
    case NDX_KIND_ATTR_AXES: snprintf(buf, cap, " %s=[0]", a->name); break;
    default: snprintf(buf, cap, " %s=%lld", a->name, (long long)v); break;
    }
}

/* A value of a other than its default (the set {0} for axes, int32 <-> int64 for dtypes). */
static int64_t other_value(const ndx_kind_attr *a) {
    switch (a->type) {
    case NDX_KIND_ATTR_AXES: return 1;
    case NDX_KIND_ATTR_DTYPE: return a->def == NDX_INT32 ? NDX_INT64 : NDX_INT32;
    default: return a->def + 1 <= a->hi ? a->def + 1 : a->lo;
    }
}

static char *node_text(ndx_graph *g) {
    char *text = NULL;
    size_t len;
    assert_int_equal(ndx_graph_to_text(g, &text, &len, NULL), NDX_OK);
    return text;
}

static void test_attributes_are_written_as_described(void **state) {
    (void)state;
    int checked = 0;
    for (int i = 0; i < ndx_kind_count(); i++) {
        ndx_kind k;
        assert_int_equal(ndx_kind_info(i, &k, NULL), NDX_OK);
        /* (kinds that read a variable need a Variable node: their own tests write them) */
        if (k.flags & (NDX_KIND_OWN_BUILDER | NDX_KIND_MUTATES) || k.num_variables > 0 ||
            k.num_attrs == 0)
            continue;
        ndx_attr attrs[NDX_KIND_MAX_ATTRS];
        int m = required_attrs(&k, attrs);
        int mix = mix_that_builds(&k, k.min_inputs, m, attrs);
        if (mix < 0) fail_msg("%s builds with no dtype tried", k.type);
        /* Defaults: written only when required or always written. */
        ndx_operation op;
        ndx_graph *g = build(&k, k.min_inputs, mix, m, attrs, &op);
        char *text = node_text(g);
        for (int j = 0; j < k.num_attrs; j++) {
            const ndx_kind_attr *a = &k.attrs[j];
            char want[96];
            snprintf(want, sizeof want, " %s=", a->name);
            int shown = strstr(text, want) != NULL;
            if (shown != (a->required || a->always_written))
                fail_msg("%s: %s is %swritten at its default:\n%s", k.type, a->name,
                         shown ? "" : "not ", text);
        }
        free(text);
        ndx_graph_free(g);
        /* Each attribute in turn at another value: written as its type says. */
        for (int j = 0; j < k.num_attrs; j++) {
            const ndx_kind_attr *a = &k.attrs[j];
            ndx_attr given[NDX_KIND_MAX_ATTRS];
            int n = 0;
            for (int r = 0; r < m; r++)
                if (strcmp(attrs[r].name, a->name) != 0) given[n++] = attrs[r];
            int64_t v = other_value(a);
            given[n++] = (ndx_attr){a->name, v};
            g = build(&k, k.min_inputs, mix, n, given, &op);
            ndx_error err = {0};
            if (ndx_graph_status(g, &err) != NDX_OK)
                fail_msg("%s %s=%lld: %s", k.type, a->name, (long long)v, err.message);
            text = node_text(g);
            char want[96];
            format_attr(a, v, want, sizeof want);
            if (!strstr(text, want)) fail_msg("%s: no '%s' in\n%s", k.type, want, text);
            free(text);
            ndx_graph_free(g);
            checked++;
        }
    }
    assert_true(checked >= 15);
}

/* The registry's policy alias is the word the text form reads as ignore. */
static void test_policy_alias_reads_as_ignore(void **state) {
    (void)state;
    ndx_kind k;
    assert_int_equal(ndx_kind_info(ndx_kind_find("GatherNd"), &k, NULL), NDX_OK);
    char text[256];
    snprintf(text, sizeof text,
             "ndx-graph 1\np = Placeholder() : float32[3]\ni = Placeholder() : int32[1, 1]\n"
             "g = GatherNd(p, i) bad_indices=%s : float32[1]\n", k.attrs[1].alias);
    ndx_error err = {0};
    ndx_graph *g = ndx_graph_from_text(text, strlen(text), "alias", &err);
    if (!g) fail_msg("%s", err.message);
    char *out = node_text(g);
    assert_non_null(strstr(out, "bad_indices=ignore"));
    free(out);
    ndx_graph_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_kind_is_found_by_its_name),
        cmocka_unit_test(test_known_kinds),
        cmocka_unit_test(test_counts_of_inputs_agree_with_by_type),
        cmocka_unit_test(test_attributes_are_written_as_described),
        cmocka_unit_test(test_policy_alias_reads_as_ignore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
