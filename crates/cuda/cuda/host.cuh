// host.cuh: host helpers: a worker's growable device buffer, the staging and window-sum
// thread pools, timing.
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// ---------------------------------------------------------------------------------------
// Host helpers

namespace {

// A device buffer owned by one worker; grows, never shrinks.
struct dbuf {
    void* ptr = nullptr;
    size_t cap = 0;
    void ensure(size_t bytes)
    {
        if (bytes <= cap) return;
        if (ptr) CUDA_OK(cudaFree(ptr));
        ptr = nullptr; cap = 0;
        size_t sz = (bytes + 4095) & ~(size_t)4095;
        CUDA_OK(cudaMalloc(&ptr, sz));
        cap = sz;
    }
    void release()
    {
        if (ptr) (void)cudaFree(ptr);
        ptr = nullptr; cap = 0;
    }
    template<class T> T* as() const { return reinterpret_cast<T*>(ptr); }
};

thread_pool_t& staging_pool()
{
    static thread_pool_t pool;
    return pool;
}

// Where queued MSMs' window sums are made (cuzk_worker_finish).
thread_pool_t& sums_pool()
{
    static thread_pool_t pool;
    return pool;
}

double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(
        std::chrono::steady_clock::now() - t0).count();
}

} // namespace
