/* counters.cc: the lessons' counters from the CPU model, without Nsight Compute (issue 27's
 * item 5; tests/lessons.py model BUILD runs make grade's lesson rule on them; make grade itself
 * does not read them yet). Linked only into the counters build (SANITIZER=counters:
 * BUILD/counters/, model/cucc), whose kernels g++ compiles with -fsanitize=thread but links without
 * ThreadSanitizer's runtime: each load, store and atomic of the kernel's code then calls
 * __tsan_readN(address), __tsan_writeN or __tsan_atomicN_*, defined here, which record it for the
 * CUDA thread running now. Accesses of the host code, of a thread's stack (its registers on a GPU)
 * and of threadIdx and its kin (special registers) are not counted (model.cc).
 *
 * What Nsight Compute counts per warp instruction is rebuilt from the threads' accesses: the k-th
 * access a thread makes at one instruction (the caller's return address) belongs to the same warp
 * instruction as the k-th access of each other lane of its warp at that instruction. For each
 * such group: one request; its 32-byte sectors (global memory), or its shared-memory wavefronts
 * beyond the first (bank conflicts: the most distinct 4-byte words any of the 32 banks must give);
 * its active lanes. Atomics likewise (atomicAdd, RED on a GPU, apart); barriers and shuffles, one
 * a warp, and the grid come from model.cc. At exit, with CUDA_MODEL_COUNTERS set, one line on
 * stderr: "model_counters global_ld_requests=.. global_ld_sectors=.. ... shfl=..".
 * Measured against Nsight Compute on an H200 (results/cpu_model/counters.txt): global requests and
 * sectors, atomics, barriers equal; shared-memory instructions differ where a GPU issues them in
 * warps whose lanes are all switched off (if (t < stride)), which the model does not see. */
#include "cuda_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace cudamodel
{
int running_thread_number(uintptr_t address); /* model.cc: the running CUDA thread's number, -1 */
bool is_shared(uintptr_t address);            /* model.cc: in the shared-memory arena */
}

namespace
{

struct Access {
    unsigned lane;
    uintptr_t address;
    unsigned size;
};
/* (warp, instruction, occurrence, store?) -> the lanes' accesses */
using Key = std::tuple<unsigned, uintptr_t, unsigned, bool>;
std::map<Key, std::vector<Access>> groups;
/* (thread, instruction) -> how many times it ran there, this block */
std::unordered_map<uint64_t, unsigned> occurrences;

/* An atomic: one per warp instruction, grouped as the loads and stores are. */
std::map<std::tuple<unsigned, uintptr_t, unsigned>, unsigned> atomic_groups;
uint64_t atomics, red; /* atomic warp instructions; those of them that add (atomicAdd: RED) */
/* Per launch and per warp instruction, from model.cc: blocks, threads, warps, waves of blocks per
 * multiprocessor, barriers (BAR) and shuffles (SHFL). */
uint64_t grid, threads, warps, bar, shfl;
double waves;

struct Totals {
    uint64_t global_requests[2], global_sectors[2], shared_requests[2], shared_conflicts[2];
    uint64_t lanes, requests;
} totals;

/* Folds the block's groups into the totals, then forgets them. */
void fold()
{
    for (auto &[key, accesses] : groups) {
        bool store = std::get<3>(key);
        uintptr_t first = accesses[0].address;
        bool shared = cudamodel::is_shared(first);
        std::set<unsigned> lanes;
        for (const Access &a : accesses)
            lanes.insert(a.lane);
        totals.lanes += lanes.size();
        totals.requests += 1;
        if (shared) {
            std::map<unsigned, std::set<uintptr_t>> banks; /* bank -> distinct 4-byte words */
            for (const Access &a : accesses)
                for (uintptr_t w = a.address / 4; w <= (a.address + a.size - 1) / 4; ++w)
                    banks[w % 32].insert(w);
            size_t most = 1;
            for (auto &[bank, words] : banks)
                most = std::max(most, words.size());
            totals.shared_requests[store] += 1;
            totals.shared_conflicts[store] += most - 1;
        } else {
            std::set<uintptr_t> sectors;
            for (const Access &a : accesses)
                for (uintptr_t s = a.address / 32; s <= (a.address + a.size - 1) / 32; ++s)
                    sectors.insert(s);
            totals.global_requests[store] += 1;
            totals.global_sectors[store] += sectors.size();
        }
    }
    groups.clear();
    occurrences.clear();
    atomic_groups.clear();
}

void count_atomic(uintptr_t pc, uintptr_t address, bool add = false)
{
    int t = cudamodel::running_thread_number(address);
    if (t < 0)
        return;
    unsigned &k = occurrences[(uint64_t)t << 48 ^ pc ^ 1];
    if (atomic_groups[{(unsigned)t / 32, pc, k++}]++ == 0) {
        ++atomics;
        red += add;
    }
}

void record(uintptr_t address, unsigned size, bool store, uintptr_t pc)
{
    int t = cudamodel::running_thread_number(address);
    if (t < 0)
        return;
    unsigned &k = occurrences[(uint64_t)t << 48 ^ pc];
    groups[Key{(unsigned)t / 32, pc, k++, store}].push_back(
        Access{(unsigned)t % 32, address, size});
}

void report()
{
    fold();
    if (!getenv("CUDA_MODEL_COUNTERS"))
        return;
    fprintf(
        stderr,
        "model_counters global_ld_requests=%llu global_ld_sectors=%llu global_st_requests=%llu "
        "global_st_sectors=%llu shared_ld_requests=%llu shared_st_requests=%llu "
        "shared_ld_conflicts=%llu shared_st_conflicts=%llu lanes_per_request=%.2f atomics=%llu "
        "red=%llu grid=%llu threads=%llu warps=%llu waves=%.3f bar=%llu shfl=%llu\n",
        (unsigned long long)totals.global_requests[0], (unsigned long long)totals.global_sectors[0],
        (unsigned long long)totals.global_requests[1], (unsigned long long)totals.global_sectors[1],
        (unsigned long long)totals.shared_requests[0],
        (unsigned long long)totals.shared_requests[1],
        (unsigned long long)totals.shared_conflicts[0],
        (unsigned long long)totals.shared_conflicts[1],
        totals.requests ? (double)totals.lanes / totals.requests : 0.0, (unsigned long long)atomics,
        (unsigned long long)red, (unsigned long long)grid, (unsigned long long)threads,
        (unsigned long long)warps, waves, (unsigned long long)bar, (unsigned long long)shfl);
}

struct AtExit {
    ~AtExit()
    {
        report();
    }
} at_exit;

} // namespace

namespace cudamodel
{
void counters_launch(uint64_t blocks, unsigned block_threads)
{
    int sms = 0, per_sm = blocks_per_sm(nullptr, block_threads, 0);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    grid += blocks;
    threads += blocks * block_threads;
    warps += blocks * ((block_threads + 31) / 32);
    waves += per_sm > 0 ? (double)blocks / ((double)sms * per_sm) : 0;
}
void counters_barrier(unsigned block_warps)
{
    bar += block_warps;
}
void counters_shuffle()
{
    ++shfl;
}
void counters_block_done()
{
    fold();
} /* model.cc, after each block */
} // namespace cudamodel

/* ThreadSanitizer's entry points, as g++'s -fsanitize=thread calls them (compiler-rt's
 * tsan_interface.h), answered here instead of by libtsan: every load and store of the kernel's
 * code, in program order and none left out (AddressSanitizer's checks skip a store after a load
 * of the same address), and every atomic, which is counted and then done. */
#define RECORD(size, store)                                                                        \
    record((uintptr_t)p, size, store, (uintptr_t)__builtin_return_address(0))
#define ACCESS(n)                                                                                  \
    void __tsan_read##n(void *p)                                                                   \
    {                                                                                              \
        RECORD(n, false);                                                                          \
    }                                                                                              \
    void __tsan_write##n(void *p)                                                                  \
    {                                                                                              \
        RECORD(n, true);                                                                           \
    }                                                                                              \
    void __tsan_unaligned_read##n(void *p)                                                         \
    {                                                                                              \
        RECORD(n, false);                                                                          \
    }                                                                                              \
    void __tsan_unaligned_write##n(void *p)                                                        \
    {                                                                                              \
        RECORD(n, true);                                                                           \
    }
/* An atomic read-modify-write: counted, then done (relaxed: what the GPU's atomics are). */
#define ADDS(name) (__builtin_strcmp(#name, "fetch_add") == 0) /* atomicAdd: a RED on a GPU */
#define RMW(bits, T, name, builtin)                                                                \
    T __tsan_atomic##bits##_##name(volatile T *a, T v, int)                                        \
    {                                                                                              \
        count_atomic((uintptr_t)__builtin_return_address(0), (uintptr_t)a, ADDS(name));            \
        return builtin(a, v, __ATOMIC_RELAXED);                                                    \
    }
#define CAS(bits, T, name, weak)                                                                   \
    int __tsan_atomic##bits##_##name(volatile T *a, T *c, T v, int, int)                           \
    {                                                                                              \
        count_atomic((uintptr_t)__builtin_return_address(0), (uintptr_t)a);                        \
        return __atomic_compare_exchange_n(a, c, v, weak, __ATOMIC_RELAXED, __ATOMIC_RELAXED);     \
    }
#define ATOMIC(bits, T)                                                                            \
    T __tsan_atomic##bits##_load(const volatile T *a, int) /* a compare-and-swap loop's first */   \
    {                                                                                              \
        return __atomic_load_n(a, __ATOMIC_RELAXED);                                               \
    }                                                                                              \
    void __tsan_atomic##bits##_store(volatile T *a, T v, int)                                      \
    {                                                                                              \
        count_atomic((uintptr_t)__builtin_return_address(0), (uintptr_t)a);                        \
        __atomic_store_n(a, v, __ATOMIC_RELAXED);                                                  \
    }                                                                                              \
    RMW(bits, T, exchange, __atomic_exchange_n)                                                    \
    RMW(bits, T, fetch_add, __atomic_fetch_add)                                                    \
    RMW(bits, T, fetch_sub, __atomic_fetch_sub)                                                    \
    RMW(bits, T, fetch_and, __atomic_fetch_and)                                                    \
    RMW(bits, T, fetch_or, __atomic_fetch_or)                                                      \
    RMW(bits, T, fetch_xor, __atomic_fetch_xor)                                                    \
    RMW(bits, T, fetch_nand, __atomic_fetch_nand)                                                  \
    CAS(bits, T, compare_exchange_strong, false)                                                   \
    CAS(bits, T, compare_exchange_weak, true)
extern "C" {
ACCESS(1)
ACCESS(2)
ACCESS(4)
ACCESS(8)
ACCESS(16)
ATOMIC(8, unsigned char)
ATOMIC(16, unsigned short)
ATOMIC(32, unsigned int)
ATOMIC(64, unsigned long long)
void __tsan_read_range(void *p, unsigned long n)
{
    RECORD((unsigned)n, false);
}
void __tsan_write_range(void *p, unsigned long n)
{
    RECORD((unsigned)n, true);
}
void __tsan_func_entry(void *) {}
void __tsan_func_exit(void) {}
void __tsan_init(void) {}
void __tsan_vptr_update(void **, void *) {}
void __tsan_vptr_read(void **) {}
void __tsan_atomic_thread_fence(int)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
void __tsan_atomic_signal_fence(int) {}
}
