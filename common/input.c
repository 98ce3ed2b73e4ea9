/* input.c: reproducible input patterns (CPU only). */
#include "harness.h"

uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void input_fill(elem_t *input, size_t n, enum pattern pattern, uint64_t seed)
{
    uint64_t state = seed;
    size_t every = n > (1u << 24) ? (n - 1) / (1u << 24) + 1 : 1; /* PATTERN_QUARTERS's k */
    for (size_t i = 0; i < n; ++i) {
        uint64_t r = splitmix64(&state);
        switch (pattern) {
        case PATTERN_SMALL:
            input[i] = (elem_t)((int)(r % 33) - 16);
            break;
        case PATTERN_FULL_RANGE:
#ifdef REDUCE_FLOAT
            input[i] = (elem_t)((double)(int32_t)(uint32_t)r * 0x1p-8); /* wide, not inf */
#else
            input[i] = (elem_t)(int32_t)(uint32_t)r; /* two's complement: any int32 */
#endif
            break;
        case PATTERN_ALTERNATING:
            input[i] = (elem_t)((i % 2 ? -1 : 1) * (int)(1 + r % 1000));
            break;
        case PATTERN_QUARTERS:
#ifdef REDUCE_FLOAT
            input[i] = i % every ? 0.0f : r % 2 ? 0.25f : -0.25f;
#else
            input[i] = i % every ? 0 : r % 2 ? 1 : -1;
#endif
            break;
        }
    }
}
