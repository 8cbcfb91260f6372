/* Check a gather_nd before its data exists, then run it: infer works on partial shapes. */
#include <ndx.h>
#include <stdio.h>

int main(void) {
    /* params: float32 [?, 3] (rows unknown until run time); indices: int64 [?, 1]. */
    ndx_spec params = ndx_spec_make(NDX_FLOAT32, 2, (int64_t[]){NDX_UNKNOWN, 3});
    ndx_spec indices = ndx_spec_make(NDX_INT64, 2, (int64_t[]){NDX_UNKNOWN, 1});
    ndx_spec out_spec;
    ndx_error err;
    if (ndx_gather_nd_infer(&params, &indices, 0, &out_spec, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    char dims[64];
    ndx_format_spec_dims(dims, sizeof dims, &out_spec);
    printf("gather_nd will give %s %s\n", ndx_dtype_name(out_spec.dtype), dims); /* [?, 3] */

    /* An index depth larger than params' rank is refused without any data. */
    ndx_spec deep = ndx_spec_make(NDX_INT64, 2, (int64_t[]){NDX_UNKNOWN, 3});
    if (ndx_gather_nd_infer(&params, &deep, 0, &out_spec, &err) != NDX_OK)
        printf("refused at build time: %s\n", err.message);

    /* Run time: the data arrives, and the result fits the inferred spec. */
    float p[6] = {1, 2, 3, 4, 5, 6};
    int64_t i[2] = {1, 0};
    ndx_tensor pt = ndx_tensor_make(NDX_FLOAT32, 2, (int64_t[]){2, 3}, p);
    ndx_tensor it = ndx_tensor_make(NDX_INT64, 2, (int64_t[]){2, 1}, i);
    ndx_tensor out = {0};
    if (ndx_gather_nd(&pt, &it, 0, NULL, &out, &err) != NDX_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    ndx_gather_nd_infer(&params, &indices, 0, &out_spec, &err);
    const float *o = out.data;
    printf("result [[%g, %g, %g], [%g, %g, %g]] fits the spec: %s\n", o[0], o[1], o[2], o[3],
           o[4], o[5], ndx_spec_admits(&out_spec, &out) ? "yes" : "no");
    ndx_tensor_free(&out);
    return 0;
}
