// msm_compare.cuh: the queued MSM checked against sppark's msm_t on the same inputs (the
// cuzk_msm_compare entry, for tests).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// Σ scalars[i]·bases[i mod m] over n points, by sppark's msm_t into `ref` and by queued_msm
// into `got` (cuzk_jac1_t or cuzk_jac2_t), on device memory allocated and freed here.
template<class bucket_t_, class point_t_, class affine_t_, class raw_t>
static void compare_msm(const gpu_t& gpu, const void* bases, size_t m, const fr_t* scalars,
                        size_t n, void* ref, void* got)
{
    typedef queued_msm<bucket_t_, point_t_, affine_t_> queued_t;
    dev_ptr_t<raw_t> d_base{m};
    dev_ptr_t<raw_t> d_pts{n};
    dev_ptr_t<fr_t> d_sc{n};
    CUDA_OK(cudaMemcpy((raw_t*)d_base, bases, m * sizeof(raw_t), cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy((fr_t*)d_sc, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice));
    cuzk_tile<raw_t><<<gpu.sm_count() * 4, 256, 0, gpu[0]>>>(d_pts, d_base, m, n);
    CUDA_OK(cudaGetLastError());
    gpu[0].sync();
    point_t_ r;
    {
        msm_t<bucket_t_, point_t_, affine_t_, scalar_t> msm{nullptr, n, sizeof(affine_t_), gpu.id()};
        CUZK_CHECK((msm.invoke(r, dev_ptr_t<affine_t_>(reinterpret_cast<affine_t_*>((raw_t*)d_pts)),
                               n, dev_ptr_t<scalar_t>((fr_t*)d_sc), true)));
    }
    std::memcpy(ref, (const void*)&r, sizeof(r));
    size_t bytes = queued_t::host_bytes(gpu, n);
    void* host = nullptr;
    CUDA_OK(cudaHostAlloc(&host, bytes, cudaHostAllocPortable));
    try {
        queued_t q;
        q.queue(gpu, gpu[0], reinterpret_cast<const typename affine_t_::mem_t*>((raw_t*)d_pts),
                d_sc, n, host);
        gpu[0].sync();
        point_t_ g = q.sum(sums_pool());
        std::memcpy(got, (const void*)&g, sizeof(g));
    } catch (...) {
        (void)cudaFreeHost(host);
        throw;
    }
    CUDA_OK(cudaFreeHost(host));
}
