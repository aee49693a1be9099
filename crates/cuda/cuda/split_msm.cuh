// split_msm.cuh: the parts of a split MSM (the bases whose scalar is 1 summed by batch
// addition into a region per query, the others gathered and put through a Pippenger MSM), and
// the double-buffered stream of an SRS section's chunks from host memory. gpu_phase.cuh puts
// them together.
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// Launches batch addition of the bases (`nbases` from `bases`) whose bit is set in `bits`
// into `partial` (one sum per warp) on stream `s`; `accumulate` adds to the sums already
// there. Launches on one device never run at once (the interlock and one stream per holder):
// they share batch addition's work counter.
template<class bucket_t_, class affine_t_>
static void launch_ones_into(const gpu_t& gpu, const stream_t& s, void* partial,
                             const void* bases, size_t nbases, const uint64_t* bits,
                             bool accumulate)
{
    CUZK_REQUIRE(nbases < ((size_t)1 << 32), "too many bases for batch addition");
    void (*kernel)(typename bucket_t_::mem_t*, const typename affine_t_::mem_t*, uint32_t,
                   const uint32_t*, bool, uint32_t) = batch_addition<bucket_t_>;
    s.launch_coop(kernel, {gpu.sm_count(), BATCH_ADD_BLOCK_SIZE},
                  reinterpret_cast<typename bucket_t_::mem_t*>(partial),
                  reinterpret_cast<const typename affine_t_::mem_t*>(bases),
                  (uint32_t)nbases, reinterpret_cast<const uint32_t*>(bits),
                  accumulate, (uint32_t)0);
}

// Batch-addition sums per launch (one per warp).
static size_t ones_nret(const gpu_t& gpu)
{
    return (size_t)gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
}

// Gathers others [k0, k1) of a query from `bases` (which start at base index `first`) into
// the worker's gathered buffer.
template<class raw_t>
static void launch_gather(const gpu_t& gpu, cuzk_worker& w, const cuzk_query_dev& qd,
                          const void* bases, size_t first, size_t k0, size_t k1)
{
    if (k1 <= k0) return;
    cuzk_gather<raw_t><<<gpu.sm_count() * 4, 256, 0, gpu[0]>>>(
        w.gathered.as<raw_t>() + k0, reinterpret_cast<const raw_t*>(bases),
        qd.idx.as<uint32_t>() + k0, k1 - k0, first);
    CUDA_OK(cudaGetLastError());
}

// Pippenger over the gathered points and the query's other scalars.
template<class bucket_t_, class point_t_, class affine_t_>
static point_t_ msm_gathered(const gpu_t& gpu, cuzk_worker& w, const cuzk_query_dev& qd)
{
    gpu[0].sync();
    msm_t<bucket_t_, point_t_, affine_t_, scalar_t> msm{nullptr, qd.nothers, sizeof(affine_t_), gpu.id()};
    point_t_ others;
    CUZK_CHECK((msm.invoke(others,
                           dev_ptr_t<affine_t_>(w.gathered.as<affine_t_>()),
                           qd.nothers,
                           dev_ptr_t<scalar_t>(qd.scalars.as<scalar_t>()),
                           true)));
    return others;
}

// The worker's batch-addition sums, one region per query (L, A, B in G1, B in G2) in the
// partial sums in VRAM and in the page-locked ones_host, each room for the G2 sums. Returns
// the region's bytes.
static size_t ensure_ones_regions(const gpu_t& gpu, cuzk_worker& w)
{
    const size_t region = ones_nret(gpu) * sizeof(bucket2_t::mem_t);
    w.partial.ensure(ONES_REGIONS * region);
    if (w.ones_region < region) {
        if (w.ones_host) CUDA_OK(cudaFreeHost(w.ones_host));
        w.ones_host = nullptr;
        w.ones_region = 0;
        CUDA_OK(cudaHostAlloc(&w.ones_host, ONES_REGIONS * region, cudaHostAllocPortable));
        w.ones_region = region;
    }
    return region;
}

// The sum of what queue_ones left in region r of `host` (once its copy landed).
template<class bucket_t_>
static bucket_t_ ones_sum(const gpu_t& gpu, const void* host, int r, size_t region)
{
    return sum_up(reinterpret_cast<const bucket_t_*>(static_cast<const char*>(host) + r * region),
                  ones_nret(gpu));
}

// Streams the chunks `todo` of `hs` through the worker's two chunk buffers and calls
// consume(chunk, device bases, first base, count) for each; the upload of chunk i+1 (copy
// stream) overlaps consume(i). consume enqueues its kernels on gpu[0] (which waits for the
// chunk's upload on the GPU) or, with `host_wait`, runs synchronously after the host saw the
// upload complete. A buffer is refilled only after gpu[0] finished consuming it.
template<class F>
static void stream_chunks(const gpu_t& gpu, cuzk_worker& w, const host_sec& hs,
                          const std::vector<size_t>& todo, bool host_wait, F consume)
{
    const size_t C = w.stream_chunk;
    CUZK_REQUIRE(C && w.chunk_buf[0].cap >= C * hs.elem && w.chunk_buf[1].cap >= C * hs.elem,
                 "worker not prepared for streaming");
    int stage_slot = 0;
    auto launch = [&](size_t i) {
        size_t c = todo[i], off = c * C, len = std::min(C, hs.n - off);
        int slot = i & 1;
        const char* src = hs.p + off * hs.elem;
        CUDA_OK(cudaStreamWaitEvent(w.copy, w.consumed_ev[slot], 0));
        if (hs.pinned)
            CUDA_OK(cudaMemcpyAsync(w.chunk_buf[slot].ptr, src, len * hs.elem,
                                    cudaMemcpyHostToDevice, w.copy));
        else
            w.upload(w.chunk_buf[slot].ptr, src, len * hs.elem, stage_slot);
        CUDA_OK(cudaEventRecord(w.chunk_ev[slot], w.copy));
    };
    if (todo.empty()) return;
    launch(0);
    for (size_t i = 0; i < todo.size(); i++) {
        int slot = i & 1;
        size_t c = todo[i], off = c * C, len = std::min(C, hs.n - off);
        if (host_wait)
            CUDA_OK(cudaEventSynchronize(w.chunk_ev[slot]));
        else
            CUDA_OK(cudaStreamWaitEvent(gpu[0], w.chunk_ev[slot], 0));
        if (i + 1 < todo.size())
            launch(i + 1);
        consume(c, (const void*)w.chunk_buf[slot].ptr, off, len);
        CUDA_OK(cudaEventRecord(w.consumed_ev[slot], gpu[0]));
    }
    // nothing may still read a chunk buffer or a host section when this returns
    gpu[0].sync();
    CUDA_OK(cudaStreamSynchronize(w.copy));
}

