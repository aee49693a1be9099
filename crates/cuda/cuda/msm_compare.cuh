// msm_compare.cuh: the queued MSM, and in G1 the sorted one, checked against sppark's msm_t
// on the same inputs and timed beside it (the cuzk_msm_compare entry, for the tests and the
// `cuzk-gpu-bench msm` mode).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// Runs `f` once, then `runs` more times when runs > 0 (the first run then a warm-up, not
// timed); `ms` gets the median wall time of the timed runs and `dev` the median device time
// from an event recorded on gpu[0] before f to the one f records (passed to it) at its end.
// `prep`, before each run, is outside both times (work it queues on gpu[0] precedes the
// first event).
template<class F, class P>
static void timed(const gpu_t& gpu, uint32_t runs, double& ms, double& dev, F f, P prep)
{
    std::vector<double> wall, device;
    cudaEvent_t ev[2];
    CUDA_OK(cudaEventCreate(&ev[0]));
    CUDA_OK(cudaEventCreate(&ev[1]));
    try {
        for (uint32_t r = 0; r <= runs; r++) {
            prep();
            auto t0 = std::chrono::steady_clock::now();
            CUDA_OK(cudaEventRecord(ev[0], gpu[0]));
            f(ev[1]);
            wall.push_back(ms_since(t0));
            float d = 0;
            CUDA_OK(cudaEventElapsedTime(&d, ev[0], ev[1]));
            device.push_back((double)d);
            if (runs > 0 && r == 0) {  // the warm-up run is not timed
                wall.clear();
                device.clear();
            }
        }
    } catch (...) {
        (void)cudaEventDestroy(ev[0]);
        (void)cudaEventDestroy(ev[1]);
        throw;
    }
    (void)cudaEventDestroy(ev[0]);
    (void)cudaEventDestroy(ev[1]);
    std::sort(wall.begin(), wall.end());
    std::sort(device.begin(), device.end());
    ms = wall[wall.size() / 2];
    dev = device[device.size() / 2];
}

template<class F>
static void timed(const gpu_t& gpu, uint32_t runs, double& ms, double& dev, F f)
{
    timed(gpu, runs, ms, dev, f, [] {});
}

// Σ scalars[i]·bases[i mod m] over n points, by sppark's msm_t into `ref`, by queued_msm into
// `got` and by sorted_msm into `own` (G1), each only when its output is set (cuzk_jac1_t or
// cuzk_jac2_t), on device memory allocated and freed here. ms[0..3]: each one's median wall time over `runs`
// runs after a warm-up (msm_t with its host sum; the others queued, waited for and summed);
// ms[3..6]: the device time of the same (msm_t's includes its host sum, as it waits for it).
template<class bucket_t_, class point_t_, class affine_t_, class raw_t>
static void compare_msm(const gpu_t& gpu, const void* bases, size_t m, const fr_t* scalars,
                        size_t n, uint32_t runs, void* ref, void* got, void* own, double* ms)
{
    typedef queued_msm<bucket_t_, point_t_, affine_t_> queued_t;
    dev_ptr_t<raw_t> d_base{m};
    dev_ptr_t<raw_t> d_pts{n};
    dev_ptr_t<fr_t> d_sc{n};
    // (on gpu[0], which uses them: cudaMemcpy from pageable memory may return before its DMA
    // lands, and gpu[0], non-blocking, does not wait for the legacy stream)
    CUDA_OK(cudaMemcpyAsync((raw_t*)d_base, bases, m * sizeof(raw_t), cudaMemcpyHostToDevice,
                            gpu[0]));
    CUDA_OK(cudaMemcpyAsync((fr_t*)d_sc, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice,
                            gpu[0]));
    cuzk_tile<raw_t><<<gpu.sm_count() * 4, 256, 0, gpu[0]>>>(d_pts, d_base, m, n);
    CUDA_OK(cudaGetLastError());
    gpu[0].sync();
    const auto* pts = reinterpret_cast<const typename affine_t_::mem_t*>((raw_t*)d_pts);
    point_t_ r;
    if (ref != nullptr) timed(gpu, runs, ms[0], ms[3], [&](cudaEvent_t end) {
        msm_t<bucket_t_, point_t_, affine_t_, scalar_t> msm{nullptr, n, sizeof(affine_t_), gpu.id()};
        CUZK_CHECK((msm.invoke(r, dev_ptr_t<affine_t_>(reinterpret_cast<affine_t_*>((raw_t*)d_pts)),
                               n, dev_ptr_t<scalar_t>((fr_t*)d_sc), true)));
        CUDA_OK(cudaEventRecord(end, gpu[0]));
        CUDA_OK(cudaEventSynchronize(end));
    });
    if (ref != nullptr) std::memcpy(ref, (const void*)&r, sizeof(r));

    // the queued MSM, then the sorted one, into page-locked memory that fits either
    size_t bytes = queued_t::host_bytes(gpu, n);
    if (own != nullptr)
        bytes = std::max(bytes, sorted_msm<bucket_t, point_t, affine_t>::host_bytes(n));
    void* host = nullptr;
    CUDA_OK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
    try {
        point_t_ g;
        if (got != nullptr) {
            timed(gpu, runs, ms[1], ms[4], [&](cudaEvent_t end) {
                queued_t q;
                q.queue(gpu, gpu[0], pts, d_sc, n, host);
                CUDA_OK(cudaEventRecord(end, gpu[0]));
                CUDA_OK(cudaEventSynchronize(end));
                g = q.sum(sums_pool());
            });
            std::memcpy(got, (const void*)&g, sizeof(g));
        }
        if (own != nullptr) {
            point_t o;
            timed(gpu, runs, ms[2], ms[5], [&](cudaEvent_t end) {
                sorted_msm<bucket_t, point_t, affine_t> q;
                q.queue(gpu, gpu[0], reinterpret_cast<const affine_t::mem_t*>((raw_t*)d_pts),
                        (fr_t*)d_sc, n, host);
                CUDA_OK(cudaEventRecord(end, gpu[0]));
                CUDA_OK(cudaEventSynchronize(end));
                o = q.sum(sums_pool());
            });
            std::memcpy(own, (const void*)&o, sizeof(o));
        }
    } catch (...) {
        (void)cudaFreeHost(host);
        throw;
    }
    CUDA_OK(cudaFreeHost(host));
}
