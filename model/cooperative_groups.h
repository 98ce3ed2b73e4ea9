/* cooperative_groups.h of the CPU model: the groups a reduction uses, on the model's barriers and
 * warp-synchronous calls (model/cuda_runtime.h), with CUDA's names and meaning.
 *   this_thread_block()         thread_block: sync(), thread_rank(), num_threads(), ...
 *   tiled_partition<N>(parent)  thread_block_tile<N>, N a power of two up to 32: a warp's lanes
 *                               k*N .. k*N+N-1; sync(), shfl, shfl_up, shfl_down, shfl_xor,
 *                               any, all, ballot, match_any, meta_group_rank(), ...
 *   tiled_partition(parent, n)  the same tile, its size given at run time (thread_group)
 *   coalesced_threads()         the lanes of the warp that reach the call together
 *   reduce, plus, less, ...     in <cooperative_groups/reduce.h>
 * The model does not run a grid-wide sync (this_grid().sync(): a cooperative launch), and
 * model/rewrite.py says so. */
#ifndef CUDA_MODEL_COOPERATIVE_GROUPS_H
#define CUDA_MODEL_COOPERATIVE_GROUPS_H
#include "cuda_runtime.h"
#ifdef CUDA_MODEL_PARSE
#pragma clang force_cuda_host_device begin
/* model/rewrite.py reports a call of what this marks, in one sentence. */
#define CUDA_MODEL_UNSUPPORTED(what) __attribute__((annotate("cuda_model_unsupported:" what)))
#else
#define CUDA_MODEL_UNSUPPORTED(what)
#endif

namespace cooperative_groups
{
#define CUDA_MODEL_HERE cudamodel::Here where = cudamodel::Here::current()

namespace details
{
inline unsigned int lane()
{
    return (threadIdx.x + threadIdx.y * blockDim.x + threadIdx.z * blockDim.x * blockDim.y) % 32;
}
inline unsigned long long block_threads()
{
    return (unsigned long long)blockDim.x * blockDim.y * blockDim.z;
}
inline unsigned long long block_rank()
{
    return threadIdx.x + (unsigned long long)blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
/* __any_sync or __all_sync over a group's lanes (mask). */
inline int vote(cudamodel::WarpOp op, unsigned int mask, int predicate, cudamodel::Here where)
{
    return (int)cudamodel::warp_sync(op, mask, predicate != 0, 0, 32, where);
}
/* The lanes this thread's warp has: all 32 but in a block's last, partial warp. */
inline unsigned int warp_lanes()
{
    unsigned long long first = block_rank() / 32 * 32, left = block_threads() - first;
    return left >= 32 ? 0xffffffffu : (1u << left) - 1;
}
} // namespace details

/* A set of threads of one block, with the operations every group has. */
class thread_group
{
  public:
    unsigned int mask_;  /* the lanes (of this thread's warp) of a tile; all-ones for a block */
    unsigned int tile_;  /* threads a tile, or 0: the block */
    unsigned int rank_;  /* this thread's rank in the group */
    unsigned int count_; /* threads in the group */
    unsigned long long num_threads() const { return count_; }
    unsigned long long size() const { return count_; }
    unsigned long long thread_rank() const { return rank_; }
    void sync(CUDA_MODEL_HERE) const
    {
        if (tile_ == 0)
            cudamodel::syncthreads(cudamodel::BarrierOp::plain, 0, where);
        else
            cudamodel::warp_sync(cudamodel::WarpOp::syncwarp, mask_, 0, 0, 32, where);
    }
};

class thread_block
{
  public:
    dim3 group_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    dim3 thread_index() const { return dim3(threadIdx.x, threadIdx.y, threadIdx.z); }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_threads() const { return blockDim; }
    unsigned long long num_threads() const { return details::block_threads(); }
    unsigned long long size() const { return details::block_threads(); }
    unsigned long long thread_rank() const { return details::block_rank(); }
    void sync(CUDA_MODEL_HERE) const
    {
        cudamodel::syncthreads(cudamodel::BarrierOp::plain, 0, where);
    }
    static void barrier_wait(CUDA_MODEL_HERE)
    {
        cudamodel::syncthreads(cudamodel::BarrierOp::plain, 0, where);
    }
    operator thread_group() const
    {
        return thread_group{0xffffffffu, 0, (unsigned int)details::block_rank(),
                            (unsigned int)details::block_threads()};
    }
};
inline thread_block this_thread_block()
{
    return thread_block();
}

/* The whole grid: its coordinates. Its sync needs a cooperative launch, which the model does not
 * run. */
class grid_group
{
  public:
    unsigned long long num_threads() const
    {
        return details::block_threads() * gridDim.x * gridDim.y * gridDim.z;
    }
    unsigned long long size() const { return num_threads(); }
    unsigned long long block_rank() const
    {
        return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
    }
    unsigned long long num_blocks() const
    {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
    }
    unsigned long long thread_rank() const
    {
        return block_rank() * details::block_threads() + details::block_rank();
    }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_blocks() const { return gridDim; }
    dim3 block_index() const { return dim3(blockIdx.x, blockIdx.y, blockIdx.z); }
    bool is_valid() const { return true; }
    CUDA_MODEL_UNSUPPORTED("a grid-wide sync (cooperative groups' grid_group::sync, which needs a "
                           "cooperative launch)")
    void sync(CUDA_MODEL_HERE) const { cudamodel::trap("grid_group::sync()", where); }
};
inline grid_group this_grid()
{
    return grid_group();
}

/* A tile of N threads (N a power of two, at most 32): lanes k*N .. k*N+N-1 of a warp. Every
 * operation is its lanes' _sync intrinsic with the tile's mask and width N. */
template <unsigned int N, class Parent = void> class thread_block_tile
{
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0,
                  "the CPU model runs tiles of 1, 2, 4, 8, 16 or 32 threads");

  public:
    unsigned int mask_ = (N == 32 ? 0xffffffffu : ((1u << N) - 1) << (details::lane() & ~(N - 1))) &
                         details::warp_lanes();
    static constexpr unsigned long long num_threads() { return N; }
    static constexpr unsigned long long size() { return N; }
    unsigned long long thread_rank() const { return details::lane() & (N - 1); }
    unsigned long long meta_group_rank() const { return details::block_rank() / N; }
    unsigned long long meta_group_size() const { return (details::block_threads() + N - 1) / N; }
    void sync(CUDA_MODEL_HERE) const
    {
        cudamodel::warp_sync(cudamodel::WarpOp::syncwarp, mask_, 0, 0, 32, where);
    }
    template <class T> T shfl(T var, int src, CUDA_MODEL_HERE) const
    {
        return cudamodel::shuffle(cudamodel::WarpOp::shfl, mask_, var, src, (int)N, where);
    }
    template <class T> T shfl_down(T var, unsigned int delta, CUDA_MODEL_HERE) const
    {
        return cudamodel::shuffle(cudamodel::WarpOp::shfl_down, mask_, var, (int)delta, (int)N,
                                  where);
    }
    template <class T> T shfl_up(T var, unsigned int delta, CUDA_MODEL_HERE) const
    {
        return cudamodel::shuffle(cudamodel::WarpOp::shfl_up, mask_, var, (int)delta, (int)N,
                                  where);
    }
    template <class T> T shfl_xor(T var, unsigned int lane_mask, CUDA_MODEL_HERE) const
    {
        return cudamodel::shuffle(cudamodel::WarpOp::shfl_xor, mask_, var, (int)lane_mask, (int)N,
                                  where);
    }
    /* votes: over the tile's lanes; ballot's bit i is the tile's thread i */
    unsigned int ballot(int predicate, CUDA_MODEL_HERE) const
    {
        unsigned int b = (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::ballot, mask_,
                                                            predicate != 0, 0, 32, where);
        return N == 32 ? b : b >> (details::lane() & ~(N - 1)) & ((1u << N) - 1);
    }
    int any(int predicate, CUDA_MODEL_HERE) const
    {
        return details::vote(cudamodel::WarpOp::any, mask_, predicate, where);
    }
    int all(int predicate, CUDA_MODEL_HERE) const
    {
        return details::vote(cudamodel::WarpOp::all, mask_, predicate, where);
    }
    template <class T> unsigned int match_any(T value, CUDA_MODEL_HERE) const
    {
        unsigned int m = (unsigned int)cudamodel::warp_sync(
            cudamodel::WarpOp::match_any, mask_, cudamodel::bits(value), 0, 32, where);
        return N == 32 ? m : m >> (details::lane() & ~(N - 1)) & ((1u << N) - 1);
    }
    operator thread_group() const
    {
        return thread_group{mask_, N, (unsigned int)thread_rank(), N};
    }
    /* thread_block_tile<N, thread_block> is also a thread_block_tile<N> */
    template <class P> thread_block_tile(const thread_block_tile<N, P> &o) : mask_(o.mask_) {}
    thread_block_tile() = default;
};
template <unsigned int N, class Parent>
thread_block_tile<N, Parent> tiled_partition(const Parent &parent)
{
    (void)parent;
    return thread_block_tile<N, Parent>();
}
/* A tile whose size is given at run time: a thread_group of `tile` threads (a power of two, at
 * most 32). */
inline thread_group tiled_partition(const thread_group &parent, unsigned int tile)
{
    (void)parent;
    if (tile == 0 || tile > 32 || (tile & (tile - 1)))
        cudamodel::trap("tiled_partition with a tile that is not a power of two up to 32",
                        cudamodel::Here::current());
    unsigned int lane = details::lane();
    unsigned int mask = (tile == 32 ? 0xffffffffu : ((1u << tile) - 1) << (lane & ~(tile - 1))) &
                        details::warp_lanes();
    return thread_group{mask, tile, lane & (tile - 1), tile};
}
inline thread_group tiled_partition(const thread_block &parent, unsigned int tile)
{
    return tiled_partition(thread_group(parent), tile);
}

/* The lanes of a warp that reach coalesced_threads() together (__activemask); their ranks in
 * lane order. */
class coalesced_group
{
  public:
    unsigned int mask_;
    unsigned long long num_threads() const { return (unsigned long long)__popc(mask_); }
    unsigned long long size() const { return num_threads(); }
    unsigned long long thread_rank() const
    {
        return (unsigned long long)__popc(mask_ & ((1u << details::lane()) - 1));
    }
    unsigned long long meta_group_rank() const { return 0; }
    unsigned long long meta_group_size() const { return 1; }
    void sync(CUDA_MODEL_HERE) const
    {
        cudamodel::warp_sync(cudamodel::WarpOp::syncwarp, mask_, 0, 0, 32, where);
    }
    /* the lane of rank r */
    int lane_of(unsigned int r) const
    {
        unsigned int m = mask_;
        for (unsigned int i = 0; i < r && m; ++i)
            m &= m - 1;
        return m ? __ffs((int)m) - 1 : 0;
    }
    template <class T> T shfl(T var, unsigned int rank, CUDA_MODEL_HERE) const
    {
        return cudamodel::shuffle(cudamodel::WarpOp::shfl, mask_, var, lane_of(rank), 32, where);
    }
    template <class T> T shfl_down(T var, unsigned int delta, CUDA_MODEL_HERE) const
    {
        unsigned int r = (unsigned int)thread_rank() + delta;
        return cudamodel::shuffle(cudamodel::WarpOp::shfl, mask_, var,
                                  r < size() ? lane_of(r) : (int)details::lane(), 32, where);
    }
    template <class T> T shfl_up(T var, unsigned int delta, CUDA_MODEL_HERE) const
    {
        unsigned int r = (unsigned int)thread_rank();
        return cudamodel::shuffle(cudamodel::WarpOp::shfl, mask_, var,
                                  r >= delta ? lane_of(r - delta) : (int)details::lane(), 32,
                                  where);
    }
    unsigned int ballot(int predicate, CUDA_MODEL_HERE) const
    {
        unsigned int b = (unsigned int)cudamodel::warp_sync(cudamodel::WarpOp::ballot, mask_,
                                                            predicate != 0, 0, 32, where);
        unsigned int r = 0, i = 0; /* compacted: bit k is the thread of rank k */
        for (unsigned int m = mask_; m; m &= m - 1, ++i)
            r |= (b >> (__ffs((int)m) - 1) & 1) << i;
        return r;
    }
    int any(int predicate, CUDA_MODEL_HERE) const
    {
        return details::vote(cudamodel::WarpOp::any, mask_, predicate, where);
    }
    int all(int predicate, CUDA_MODEL_HERE) const
    {
        return details::vote(cudamodel::WarpOp::all, mask_, predicate, where);
    }
    operator thread_group() const
    {
        return thread_group{mask_, 32, (unsigned int)thread_rank(), (unsigned int)num_threads()};
    }
};
inline coalesced_group coalesced_threads(CUDA_MODEL_HERE)
{
    return coalesced_group{cudamodel::activemask(where)};
}

template <class Group> void sync(const Group &group, CUDA_MODEL_HERE)
{
    group.sync(where);
}
CUDA_MODEL_UNSUPPORTED("a grid-wide sync (cooperative groups' cg::sync(grid), which needs a "
                       "cooperative launch)")
inline void sync(const grid_group &group, CUDA_MODEL_HERE)
{
    group.sync(where);
}
template <class Group> unsigned long long thread_rank(const Group &group)
{
    return group.thread_rank();
}
template <class Group> unsigned long long num_threads(const Group &group)
{
    return group.num_threads();
}
#undef CUDA_MODEL_HERE
} // namespace cooperative_groups

#ifdef CUDA_MODEL_PARSE
#pragma clang force_cuda_host_device end
#endif
#endif
