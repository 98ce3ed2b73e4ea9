/* depth.h: a counting type, `depth`, whose + counts roundings instead of adding numbers. A stage's
 * own code compiled on it (-DREDUCE_DEPTH makes elem_t a depth: reduce.h) and run yields the depth
 * d of its order of additions, which Higham's bound needs (harness.h): the most rounded additions
 * on any element's path to the sum. Only make accuracy builds the stages so (measure_depth,
 * depth.cu); why a measured d, not one worked out by hand, and how: FLOAT.md.
 *
 * C++ (nvcc, or g++ for host-side tests): it overloads +, and on the GPU atomicAdd, the loads
 * __ldg and __ldcg and the four warp shuffles, so that a stage's code compiles unchanged. The
 * programs and tests never use it, so a stage that uses anything else still builds and passes them.
 */
#ifndef DEPTH_H
#define DEPTH_H

#ifndef __cplusplus
#error "depth.h is C++: compile it with nvcc, or with g++ for host code"
#endif

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define DEPTH_HD __host__ __device__
#else
#define DEPTH_HD /* g++: host code only */
#endif

/* A count that no longer fits: more than 2^32 - 2 roundings on one path, which only a chain of
 * over 2^32 additions reaches. From 2^24 on the bound does not depend on d any more (FLOAT.md). */
#define DEPTH_SATURATED 0xffffffffu
/* What depth_of says for a saturated count. */
#define DEPTH_UNCOUNTED SIZE_MAX

/* A partial sum, as far as rounding goes. All-zero bytes are the identity, as for int and float:
 * the stages clear their accumulator with cudaMemsetAsync(sum, 0, sizeof(elem_t)). */
struct depth {
    unsigned int e;       /* 0: the identity (holds no element); else 1 + the most rounded
                           * additions on any path into it so far */
    unsigned int atomics; /* for an atomicAdd accumulator: how many partial sums holding elements
                           * were added into it (see atomicAdd); 0 otherwise */
    depth() = default;    /* trivial, so a __shared__ array of depths is allowed, as of floats */
    /* (depth)0 is the identity (IDENTITY in reduce.h); (depth)1 is one element, added to nothing
     * yet. Explicit: no accidental conversions from numbers. */
    DEPTH_HD explicit constexpr depth(int x) : e(x != 0), atomics(0) {}
};

/* Four elements in a row, as step07 loads them (elem4_t: float4's stand-in). */
struct depth4 {
    depth x, y, z, w;
};

/* a + b rounds once, on top of the deeper side's roundings. Adding the identity is exact (0 + x is
 * x), so padding and threads with nothing to add never deepen a path. */
DEPTH_HD inline depth operator+(depth a, depth b)
{
    if (a.e == 0)
        return b;
    if (b.e == 0)
        return a;
    unsigned int deeper = a.e > b.e ? a.e : b.e;
    depth sum(1);
    sum.e = deeper < DEPTH_SATURATED ? deeper + 1 : DEPTH_SATURATED;
    return sum;
}

DEPTH_HD inline depth &operator+=(depth &a, depth b)
{
    return a = a + b;
}

/* d of a finished sum s: the most rounded additions on any element's path to it (0 for no element
 * or one), or DEPTH_UNCOUNTED when a count saturated.
 * A chain of atomicAdds has no fixed order, so atomicAdd keeps only the deepest partial sum (the
 * largest e) and how many came (atomics). Its worst order adds the deepest first (onto the
 * identity: exact), and the count - 1 partial sums after it each round it once more:
 * d = (e - 1) + (atomics - 1). Any other order is shallower, so d holds for every run. A plain
 * store (*sum = x) leaves atomics at 0: then d = e - 1. */
DEPTH_HD inline size_t depth_of(depth s)
{
    if (s.e == DEPTH_SATURATED)
        return DEPTH_UNCOUNTED;
    if (s.e == 0)
        return 0;
    return (size_t)(s.e - 1) + (s.atomics > 1 ? s.atomics - 1 : 0);
}

#ifdef __CUDACC__
/* atomicAdd(acc, x): x joins the chain of additions onto *acc, in an order nobody knows. Records
 * what depth_of needs, whatever the order: the deepest e (atomicMax) and one more partial sum
 * (atomicAdd on the count; the identity is not counted). Returns the fields as they were, each read
 * atomically on its own (the stages ignore it). */
__device__ inline depth atomicAdd(depth *acc, depth x)
{
    unsigned int brings = x.e != 0;
    depth old(0);
    old.e = atomicMax(&acc->e, x.e);
    old.atomics = atomicAdd(&acc->atomics, brings);
    if (brings && old.atomics == DEPTH_SATURATED) /* the count wrapped past 2^32 - 1 */
        atomicMax(&acc->e, DEPTH_SATURATED);      /* so the sum is too deep to count */
    return old;
}

/* Loads and shuffles for depths, a field at a time: whatever moves a float moves a depth unchanged.
 * __ldcg (through L2, past L1: step08 reads other blocks' partial sums so), __ldg (read-only). */
#define DEPTH_LOAD(load)                                                                           \
    __device__ inline depth load(const depth *p)                                                   \
    {                                                                                              \
        depth got(0);                                                                              \
        got.e = load(&p->e);                                                                       \
        got.atomics = load(&p->atomics);                                                           \
        return got;                                                                                \
    }                                                                                              \
    __device__ inline depth4 load(const depth4 *p)                                                 \
    {                                                                                              \
        return {load(&p->x), load(&p->y), load(&p->z), load(&p->w)};                               \
    }
DEPTH_LOAD(__ldcg)
DEPTH_LOAD(__ldg)
/* __shfl_down_sync, __shfl_up_sync, __shfl_xor_sync, __shfl_sync: the same lane's depth as the
 * float shuffle would bring. */
#define DEPTH_SHFL(shfl, arg_t)                                                                    \
    __device__ inline depth shfl(unsigned int mask, depth x, arg_t arg, int width = 32)            \
    {                                                                                              \
        depth got(0);                                                                              \
        got.e = shfl(mask, x.e, arg, width);                                                       \
        got.atomics = shfl(mask, x.atomics, arg, width);                                           \
        return got;                                                                                \
    }
DEPTH_SHFL(__shfl_down_sync, unsigned int)
DEPTH_SHFL(__shfl_up_sync, unsigned int)
DEPTH_SHFL(__shfl_xor_sync, int)
DEPTH_SHFL(__shfl_sync, int)
#endif

/* Each stage's reduce(), compiled on depths (reduce.h renames it under -DREDUCE_DEPTH), so that it
 * links beside the stage's own float reduce(). */
extern "C" void reduce_depth(depth *input, size_t n, unsigned int block_size, depth *sum);

#endif
