/* half.c — the public float16 / bfloat16 conversions, over the inline ones the ops use. */
#include "core.h"
#include "half.h"

float ndx_float16_to_float(uint16_t bits) { return ndx_half_to_float(bits); }
uint16_t ndx_float_to_float16(float value) { return ndx_float_to_half(value); }
float ndx_bfloat16_to_float(uint16_t bits) { return ndx_bf16_to_float(bits); }
uint16_t ndx_float_to_bfloat16(float value) { return ndx_float_to_bf16(value); }
