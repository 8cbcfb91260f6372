/* test_graph_kind_checks.c — the one list of kinds (kinds.def) and the schema's rules, each
 * checked by one function (kind_checks.c) for the text reader, ndx_op_by_type and the builders:
 * the counts of inputs TensorFlow's op definitions give, TensorFlow's attribute defaults, its
 * required attributes, and the values each attribute type takes, with the messages the callers
 * show. */
#include <stdio.h>

#include "ndx_test.h"

#include "graph_kind.h"

/* kinds.def expands to the enum and the table alike: every line's enum value is its position,
 * and the table gives that line's descriptor. */
static void the_list_is_the_table(void **state) {
    (void)state;
    static const struct {
        graph_kind kind;
        const graph_kind_desc *desc;
        const char *name;
    } listed[] = {
#define NDX_KIND(kind, name) {kind, &graph_kind_##name, #name},
#include "kinds.def"
    };
    assert_int_equal(sizeof listed / sizeof listed[0], GRAPH_KIND_COUNT);
    for (int k = 0; k < GRAPH_KIND_COUNT; k++) {
        assert_int_equal(listed[k].kind, k);
        if (graph_desc(listed[k].kind) != listed[k].desc) fail_msg("%s", listed[k].name);
        assert_int_equal(listed[k].desc->kind, k);
    }
}

/* 1 when graph_arity_ok accepts k inputs for the kind named `type`. */
static int takes(const char *type, int k) {
    char msg[160];
    return graph_arity_ok(graph_desc(graph_kind_named(type)), k, msg, sizeof msg);
}

static void input_counts_are_tensorflows(void **state) {
    (void)state;
    for (int k = 0; k <= 12; k++) {
        /* TensorFlow's op definitions: fixed counts, an optional input, and lists. */
        assert_int_equal(takes("Const", k), k == 0);
        assert_int_equal(takes("Where", k), k == 1);
        assert_int_equal(takes("AddV2", k), k == 2);
        assert_int_equal(takes("TensorScatterAdd", k), k == 3);
        assert_int_equal(takes("SparseToDense", k), k == 3 || k == 4); /* default_value optional */
        assert_int_equal(takes("DynamicStitch", k), k >= 2 && k % 2 == 0); /* N indices, N data */
        assert_int_equal(takes("SparseConcat", k), k >= 3 && k % 3 == 0); /* N of each part */
        assert_int_equal(takes("ConcatV2", k), k >= 2); /* N >= 1 values, then axis */
        assert_int_equal(takes("Pack", k), k >= 1);
    }
}

/* The refusal of k inputs for `type`, as the text reader and ndx_op_by_type show it. */
static void expect_arity_message(const char *type, int k, const char *want) {
    char msg[160] = "";
    assert_int_equal(graph_arity_ok(graph_desc(graph_kind_named(type)), k, msg, sizeof msg), 0);
    assert_string_equal(msg, want);
}

static void input_count_messages(void **state) {
    (void)state;
    expect_arity_message("AddV2", 3, "AddV2 takes 2 inputs, not 3");
    expect_arity_message("SparseToDense", 5, "SparseToDense takes 3 or 4 inputs, not 5");
    expect_arity_message("DynamicStitch", 3, "DynamicStitch takes an even number of inputs, not 3");
    expect_arity_message("SparseConcat", 4, "SparseConcat takes a multiple of 3 inputs, not 4");
    expect_arity_message("ConcatV2", 1, "ConcatV2 takes more than 1 inputs, not 1");
}

/* The attributes of `type` after graph_attrs_default, from garbage. */
static graph_attrs defaults_of(const char *type) {
    graph_attrs a;
    memset(&a, 0x5a, sizeof a);
    graph_attrs_default(graph_desc(graph_kind_named(type)), &a);
    return a;
}

static void defaults_are_tensorflows(void **state) {
    (void)state;
    graph_attrs a = defaults_of("GatherNd");
    assert_int_equal(a.batch_dims, 0);
    assert_int_equal(a.bad_indices, NDX_BAD_INDICES_ERROR); /* TensorFlow's CPU behaviour */
    assert_int_equal(a.count, 0x5a5a5a5a);                  /* not in its schema: untouched */
    assert_int_equal(defaults_of("Size").dtype, NDX_INT32); /* out_type */
    assert_int_equal(defaults_of("Shape").dtype, NDX_INT32);
    assert_int_equal(defaults_of("Sum").keep_dims, 0);
    assert_int_equal(defaults_of("Pack").axis, 0);
    assert_int_equal(defaults_of("SparseConcat").expand, 0);
    assert_int_equal(defaults_of("Squeeze").squeeze_dims, 0); /* every dim of size 1 */
    a = defaults_of("ResourceSparseApplyAdagradV2");
    assert_int_equal(a.update_slots, 1);
    assert_int_equal(a.sum_duplicates, 0);
    graph_attrs before;
    memset(&before, 0x5a, sizeof before);
    a = defaults_of("Const"); /* its value is a tensor, not an int of graph_attrs */
    assert_memory_equal(&a, &before, sizeof a);
}

/* graph_attrs_complete for `type` given the attributes in `given` (a bit per schema entry). */
static int complete(const char *type, unsigned given, char *msg) {
    return graph_attrs_complete(graph_desc(graph_kind_named(type)), given, msg, 160);
}

static void required_attributes(void **state) {
    (void)state;
    char msg[160] = "";
    assert_int_equal(complete("Cast", 0, msg), 0);
    assert_string_equal(msg, "Cast needs the attribute to");
    assert_int_equal(complete("DynamicPartition", 0, msg), 0);
    assert_string_equal(msg, "DynamicPartition needs the attribute num_partitions");
    const graph_kind_desc *sc = graph_desc(GRAPH_SPARSE_CONCAT);
    int axis = graph_attr_find(sc, "axis"), expand = graph_attr_find(sc, "expand_nonconcat_dim");
    assert_true(axis >= 0 && expand >= 0 && axis != expand);
    assert_int_equal(graph_attr_find(sc, "concat_dim"), -1);
    assert_int_equal(complete("SparseConcat", 1u << expand, msg), 0); /* concat_dim is required */
    assert_string_equal(msg, "SparseConcat needs the attribute axis");
    assert_int_equal(complete("SparseConcat", 1u << axis, msg), 1);
    assert_int_equal(complete("Cast", 1u, msg), 1);
    assert_int_equal(complete("GatherNd", 0, msg), 1); /* batch_dims and bad_indices default */
    assert_int_equal(complete("AddV2", 0, msg), 1);
}

/* The fault graph_attr_value_ok finds in value v of `type`'s attribute `name` ("" when none). */
static const char *value_fault(const char *type, const char *name, int64_t v) {
    static char msg[160];
    const graph_kind_desc *d = graph_desc(graph_kind_named(type));
    int i = graph_attr_find(d, name);
    assert_true(i >= 0);
    strcpy(msg, "unset");
    if (graph_attr_value_ok(&d->attrs[i], v, msg, sizeof msg)) return "";
    return msg;
}

static void attribute_values(void **state) {
    (void)state;
    /* INT: the schema's range, both ends included. */
    assert_string_equal(value_fault("GatherNd", "batch_dims", 0), "");
    assert_string_equal(value_fault("GatherNd", "batch_dims", NDX_MAX_RANK), "");
    char want[160];
    snprintf(want, sizeof want, "batch_dims = -1 is not in [0, %d]", NDX_MAX_RANK);
    assert_string_equal(value_fault("GatherNd", "batch_dims", -1), want);
    snprintf(want, sizeof want, "num_partitions = 0 is not in [1, %d]", NDX_GRAPH_MAX_ARITY);
    assert_string_equal(value_fault("DynamicPartition", "num_partitions", 0), want);
    snprintf(want, sizeof want, "num_partitions = %lld is not in [1, %d]",
             (long long)NDX_GRAPH_MAX_ARITY + 1, NDX_GRAPH_MAX_ARITY);
    assert_string_equal(
        value_fault("DynamicPartition", "num_partitions", (int64_t)NDX_GRAPH_MAX_ARITY + 1), want);
    /* BOOL, POLICY, DTYPE, AXES. */
    assert_string_equal(value_fault("Sum", "keep_dims", 1), "");
    assert_string_equal(value_fault("Sum", "keep_dims", 2), "keep_dims = 2 is not a bool (0 or 1)");
    assert_string_equal(value_fault("ScatterNd", "bad_indices", NDX_BAD_INDICES_IGNORE), "");
    assert_string_equal(value_fault("ScatterNd", "bad_indices", 7),
                        "bad_indices = 7 is neither NDX_BAD_INDICES_ERROR nor "
                        "NDX_BAD_INDICES_IGNORE");
    assert_string_equal(value_fault("Cast", "to", NDX_DTYPE_COUNT - 1), "");
    snprintf(want, sizeof want, "to = %d is not an ndx_dtype", (int)NDX_DTYPE_COUNT);
    assert_string_equal(value_fault("Cast", "to", NDX_DTYPE_COUNT), want);
    assert_string_equal(value_fault("Cast", "to", -1), "to = -1 is not an ndx_dtype");
    assert_string_equal(value_fault("Squeeze", "squeeze_dims", UINT32_MAX), "");
    assert_string_equal(value_fault("Squeeze", "squeeze_dims", (int64_t)UINT32_MAX + 1),
                        "squeeze_dims = 4294967296 is not a set of axes (a bit mask of 32 bits)");
    /* VALUE: a Const's value is never an int. */
    assert_string_equal(value_fault("Const", "value", 0),
                        "value is a Const's value: build constants with ndx_op_const");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_list_is_the_table),
        cmocka_unit_test(input_counts_are_tensorflows),
        cmocka_unit_test(input_count_messages),
        cmocka_unit_test(defaults_are_tensorflows),
        cmocka_unit_test(required_attributes),
        cmocka_unit_test(attribute_values),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
