// h_compare.cuh: the H polynomial by h_ntt.cuh's six NTTs beside the textbook seven (each of
// a, b, c to the coset, (a·b − c)/Z there, back by icoset), on the same inputs, timed on the
// device (the cuzk_h_compare entry, for the tests and `cuzk-gpu-bench ntt`).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// The reference: H by seven NTTs into d_a (h_ntt.cuh's sequence before session 28).
static void queue_h_poly_seven(stream_t& s, fr_t* d_a, fr_t* d_b, fr_t* d_c, uint32_t lg,
                               const fr_t& z_inv, uint32_t grid)
{
    const size_t n = (size_t)1 << lg;
    for (fr_t* p : {d_a, d_b, d_c})
        queue_to_coset(s, p, lg);
    cuzk_mul_assign<<<grid, 1024, 0, s>>>(d_a, d_b, n);
    CUDA_OK(cudaGetLastError());
    cuzk_sub_scale<<<grid, 1024, 0, s>>>(d_a, d_c, z_inv, n);
    CUDA_OK(cudaGetLastError());
    NTT::Base_dev_ptr(s, d_a, lg, NTT::InputOutputOrder::NN,
                      NTT::Direction::inverse, NTT::Type::coset);
}

// H of abc = a | b | c (host, 3·2^lg scalars, Montgomery form) by six NTTs into `six` and by
// seven into `seven` (host, 2^lg each), each once untimed and then `runs` more times; ms[0]
// and ms[1]: the median device time of six and of seven (from the inputs in VRAM to H in
// VRAM: the copies to and from the host are not timed). Device memory: 6·2^lg scalars,
// allocated and freed here.
static void compare_h(const gpu_t& gpu, uint32_t lg, const fr_t* abc, const fr_t& z_inv,
                      uint32_t runs, fr_t* six, fr_t* seven, double* ms)
{
    const size_t n = (size_t)1 << lg;
    dev_ptr_t<fr_t> inputs{3 * n};
    dev_ptr_t<fr_t> work{3 * n};
    stream_t& s = gpu[0];
    // (on s, not cudaMemcpy: from pageable memory that may return before its DMA lands, and
    // s, non-blocking, does not wait for the legacy stream)
    CUDA_OK(cudaMemcpyAsync((fr_t*)inputs, abc, 3 * n * sizeof(fr_t), cudaMemcpyHostToDevice, s));
    for (int which = 0; which < 2; which++) {
        double wall;
        fr_t* w = work;
        // the inputs copied back into place before each run, outside its time
        auto restore = [&] {
            CUDA_OK(cudaMemcpyAsync(w, (const fr_t*)inputs, 3 * n * sizeof(fr_t),
                                    cudaMemcpyDeviceToDevice, s));
        };
        timed(gpu, runs, wall, ms[which], [&](cudaEvent_t end) {
            if (which == 0)
                queue_h_poly(s, w, w + n, w + 2 * n, lg, z_inv, gpu.sm_count() * 2);
            else
                queue_h_poly_seven(s, w, w + n, w + 2 * n, lg, z_inv, gpu.sm_count() * 2);
            CUDA_OK(cudaEventRecord(end, s));
            CUDA_OK(cudaEventSynchronize(end));
        }, restore);
        CUDA_OK(cudaMemcpyAsync(which == 0 ? six : seven, w, n * sizeof(fr_t),
                                cudaMemcpyDeviceToHost, s));
        s.sync();
    }
}
