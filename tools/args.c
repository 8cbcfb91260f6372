/* args.c — strict value parsing and the option parser shared by every ndx command. */
#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses decimal digits s[0..len) into a value at most `limit`; 1 when every character was
 * used. */
static int parse_digits_n(const char *s, size_t len, uint64_t limit, uint64_t *out) {
    if (len == 0) return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (!isdigit((unsigned char)s[i])) return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (limit - d) / 10u) return 0;
        v = v * 10u + d;
    }
    *out = v;
    return 1;
}

/* Parses digits with an optional sign from s[0..len); 1 when every character was used. */
static int parse_i64_n(const char *s, size_t len, int64_t *out) {
    size_t i = 0;
    int negative = 0;
    if (i < len && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
    uint64_t v;
    if (!parse_digits_n(s + i, len - i, negative ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX,
                        &v))
        return 0;
    /* -2^63 has no positive twin: negate in unsigned arithmetic, then convert. */
    *out = negative ? (int64_t)(0u - v) : (int64_t)v;
    return 1;
}

int args_parse_i64(const char *s, int64_t *out) {
    return s != NULL && parse_i64_n(s, strlen(s), out);
}

int args_parse_u64(const char *s, uint64_t *out) {
    if (s == NULL) return 0;
    if (*s == '+') s++;
    return parse_digits_n(s, strlen(s), UINT64_MAX, out);
}

int args_parse_real(const char *s, double *out) {
    /* strtod would skip leading spaces and read a prefix; the whole string must be the number. */
    if (s == NULL || *s == '\0' || isspace((unsigned char)*s)) return 0;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*end != '\0' || (errno == ERANGE && isinf(v))) return 0;
    *out = v; /* an underflow (ERANGE with a tiny or zero result) is the nearest value */
    return 1;
}

int args_parse_int(const char *s, int *out) {
    int64_t v;
    if (!args_parse_i64(s, &v) || v < INT_MIN || v > INT_MAX) return 0;
    *out = (int)v;
    return 1;
}

int args_parse_size(const char *s, size_t *out) {
    if (s == NULL) return 0;
    size_t digits = 0;
    while (isdigit((unsigned char)s[digits])) digits++;
    if (digits == 0) return 0;
    int64_t n;
    if (!parse_i64_n(s, digits, &n)) return 0;
    const char *unit = s + digits;
    unsigned shift = 0;
    switch (toupper((unsigned char)*unit)) {
    case '\0': break;
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': shift = 0; break;
    default: return 0;
    }
    if (*unit) {
        const char *rest = unit + 1;
        if (toupper((unsigned char)*unit) == 'B') {
            if (*rest) return 0;
        } else if (!(*rest == '\0' || ((rest[0] == 'b' || rest[0] == 'B') && rest[1] == '\0') ||
                     (rest[0] == 'i' && (rest[1] == 'b' || rest[1] == 'B') && rest[2] == '\0'))) {
            return 0;
        }
    }
    uint64_t v = (uint64_t)n;
    if (shift && v > (UINT64_MAX >> shift)) return 0;
    v <<= shift;
    if (v > SIZE_MAX) return 0;
    *out = (size_t)v;
    return 1;
}

int args_parse_dims(const char *s, int max_rank, int *rank, int64_t *dims) {
    if (s == NULL) return 0;
    int r = 0;
    if (*s != '\0') {
        const char *p = s;
        for (;;) {
            const char *comma = strchr(p, ',');
            size_t len = comma ? (size_t)(comma - p) : strlen(p);
            if (r == max_rank || !parse_i64_n(p, len, &dims[r])) return 0;
            r++;
            if (!comma) break;
            p = comma + 1;
        }
    }
    *rank = r;
    return 1;
}

static const args_option *find_option(const args_option *opts, int nopts, const char *arg,
                                      size_t len) {
    for (int i = 0; i < nopts; i++) {
        const char *names[2] = {opts[i].name, opts[i].alias};
        for (int k = 0; k < 2; k++)
            if (names[k] && strlen(names[k]) == len && strncmp(names[k], arg, len) == 0)
                return &opts[i];
    }
    return NULL;
}

int args_parse(int argc, char **argv, const args_option *opts, int nopts, const char **pos,
               int *npos, int *help, char error[ARGS_ERROR_SIZE]) {
    int seen[64] = {0};
    *npos = 0;
    *help = 0;
    error[0] = '\0';
    if (nopts > 64) {
        snprintf(error, ARGS_ERROR_SIZE, "too many options declared");
        return 0;
    }
    int options_done = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (options_done || arg[0] != '-' || arg[1] == '\0') {
            pos[(*npos)++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            options_done = 1;
            continue;
        }
        if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
            *help = 1;
            return 1;
        }
        const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        const args_option *o = find_option(opts, nopts, arg, name_len);
        if (!o) {
            snprintf(error, ARGS_ERROR_SIZE, "unknown option '%.*s'", (int)name_len, arg);
            return 0;
        }
        int idx = (int)(o - opts);
        if (seen[idx]++) {
            snprintf(error, ARGS_ERROR_SIZE, "option %s is given more than once", o->name);
            return 0;
        }
        if (o->value == NULL) {
            if (eq) {
                snprintf(error, ARGS_ERROR_SIZE, "option %s takes no value", o->name);
                return 0;
            }
            *o->flag = 1;
            continue;
        }
        if (eq) {
            *o->value = eq + 1;
        } else if (i + 1 < argc) {
            *o->value = argv[++i];
        } else {
            snprintf(error, ARGS_ERROR_SIZE, "option %s needs a value", o->name);
            return 0;
        }
    }
    return 1;
}
