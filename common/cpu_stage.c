/* cpu_stage.c: step00's loop seen as a stage, so build/step00 is the same program as the others. */
#include "reduce.h"

const struct stage_info STAGE = {.on_gpu = false}; /* --block is still validated like everywhere */

void reduce(elem_t *input, size_t n, unsigned int block_size, elem_t *sum)
{
    (void)block_size;
    *sum = reduce_cpu(input, n);
}
