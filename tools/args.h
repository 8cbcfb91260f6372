/* args.h — strict parsing of command-line values and a small option parser for the ndx command.
 * Every parser takes the whole string or nothing: no spaces, no trailing characters, no overflow. */
#ifndef NDX_TOOLS_ARGS_H
#define NDX_TOOLS_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* A decimal integer with an optional sign ("-3", "+7", "42"). 1 on success. */
int args_parse_i64(const char *s, int64_t *out);
/* Decimal digits with an optional "+" ("0", "18446744073709551615"). 1 on success. */
int args_parse_u64(const char *s, uint64_t *out);
/* A real number as strtod reads it ("-1.5", "1e-3", "inf", "nan"), with nothing before or after
 * it. A number too large for a double fails; one too small is rounded (to a subnormal or 0). */
int args_parse_real(const char *s, double *out);
/* A decimal integer limited to the range of int. */
int args_parse_int(const char *s, int *out);
/* A byte count: digits with an optional unit K, M, G or T (powers of 1024, any case, optionally
 * followed by "B" or "iB"): "4096", "512M", "4G", "1GiB". 1 on success. */
int args_parse_size(const char *s, size_t *out);
/* A comma-separated list of at most max_rank integers: "2,3,4" (or "" for none). 1 on
 * success. Values are not range-checked here: a negative dimension is the op's error. */
int args_parse_dims(const char *s, int max_rank, int *rank, int64_t *dims);

/* One option a command accepts. Long names start with "--"; `alias` is a short form such as
 * "-o" or NULL. An option with a value stores a pointer to it in *value; a flag sets *flag. */
typedef struct args_option {
    const char *name;
    const char *alias;
    const char **value; /* NULL for a flag */
    int *flag;          /* NULL for an option with a value */
} args_option;

#define ARGS_ERROR_SIZE 256

/* Parses argv[1..argc): options (as "--name value", "--name=value" or "-o value") anywhere,
 * everything else positional ("--" ends options; a lone "-" is positional). An option given
 * twice is an error. "-h"/"--help" sets *help and stops. `pos` must have room for argc entries.
 * Returns 1, or 0 with a one-line reason in `error`. */
int args_parse(int argc, char **argv, const args_option *opts, int nopts, const char **pos,
               int *npos, int *help, char error[ARGS_ERROR_SIZE]);

#endif /* NDX_TOOLS_ARGS_H */
