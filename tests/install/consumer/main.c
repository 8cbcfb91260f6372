/* Uses an installed libndx: the slice example of tf.gather_nd's documentation on int32 data,
 * checked against the documented output. Exit 0 on success. */
#include <stdio.h>
#include <string.h>

#include <ndx.h>

int main(void) {
    int32_t params[4] = {1, 2, 3, 4}; /* [['a', 'b'], ['c', 'd']] as 1..4 */
    int64_t indices[2] = {1, 0};      /* [[1], [0]] */
    int64_t pshape[2] = {2, 2}, ishape[2] = {2, 1};
    ndx_tensor p = ndx_tensor_make(NDX_INT32, 2, pshape, params);
    ndx_tensor i = ndx_tensor_make(NDX_INT64, 2, ishape, indices);
    ndx_tensor out = {0};
    ndx_error err;
    if (ndx_gather_nd(&p, &i, 0, NULL, &out, &err) != NDX_OK) {
        fprintf(stderr, "consumer: %s\n", err.message);
        return 1;
    }
    const int32_t want[4] = {3, 4, 1, 2}; /* [['c', 'd'], ['a', 'b']] */
    int ok = out.rank == 2 && out.shape[0] == 2 && out.shape[1] == 2 &&
             memcmp(out.data, want, sizeof want) == 0;
    ndx_tensor_free(&out);
    printf("consumer: ndx %s, gather_nd %s\n", ndx_version(), ok ? "as documented" : "WRONG");
    return ok ? 0 : 1;
}
