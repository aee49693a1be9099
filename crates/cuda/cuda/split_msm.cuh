// split_msm.cuh: the split MSMs: the bases whose scalar is 1 summed by batch addition (at once,
// or early on the side stream: early_ones_t), the others gathered and put through a
// Pippenger MSM; over a resident SRS, or streamed from host memory in double-buffered chunks.
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

// launch_ones_into the worker's partial sums on gpu[0].
template<class bucket_t_, class affine_t_>
static void launch_ones(const gpu_t& gpu, cuzk_worker& w, const void* bases, size_t nbases,
                        const uint64_t* bits, bool accumulate)
{
    w.partial.ensure(ones_nret(gpu) * sizeof(typename bucket_t_::mem_t));
    launch_ones_into<bucket_t_, affine_t_>(gpu, gpu[0], w.partial.ptr, bases, nbases, bits,
                                           accumulate);
}

// The sum of the worker's partial sums (after one or more launch_ones).
template<class bucket_t_, class point_t_>
static point_t_ collect_ones(const gpu_t& gpu, cuzk_worker& w)
{
    const size_t nret = ones_nret(gpu);
    std::vector<bucket_t_> partial(nret);
    gpu[0].DtoH(&partial[0], w.partial.ptr, nret);
    gpu[0].sync();
    return sum_up(partial);
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

// Σ scalar_i·P_i over one query, bases resident on the device; without `ones`, only the
// others' part (the ones' sum was made early: see early_ones_t).
template<class bucket_t_, class point_t_, class affine_t_, class raw_t>
static void split_msm(const gpu_t& gpu, cuzk_worker& w, const cuzk_query_dev& qd,
                      const typename affine_t_::mem_t* bases, size_t nbases, point_t_& out,
                      bool ones = true)
{
    out.inf();
    CUZK_REQUIRE(qd.nbases == nbases, "query does not match the SRS section");
    if (ones && qd.ones_words) {
        launch_ones<bucket_t_, affine_t_>(gpu, w, bases, nbases, (const uint64_t*)qd.bits.ptr,
                                          false);
        out.add(collect_ones<bucket_t_, point_t_>(gpu, w));
    }
    if (qd.nothers) {
        w.gathered.ensure(qd.nothers * sizeof(raw_t));
        launch_gather<raw_t>(gpu, w, qd, bases, 0, 0, qd.nothers);
        out.add(msm_gathered<bucket_t_, point_t_, affine_t_>(gpu, w, qd));
    }
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

// The bases of query region r (L, A, B in G1, B in G2) in a resident SRS (their count in n),
// and the query's plan on the device.
static const void* ones_bases(const cuzk_srs& srs, int r, size_t& n)
{
    const void* bases[ONES_REGIONS] = {srs.l, srs.a, srs.b_g1, srs.b_g2};
    const size_t counts[ONES_REGIONS] = {srs.nl, srs.na, srs.nb1, srs.nb2};
    n = counts[r];
    return bases[r];
}
static const cuzk_query_dev& ones_query(const cuzk_worker& w, int r)
{
    return w.q[r < 3 ? r : 2];
}

// Queues region r's batch addition (its query's "scalar is 1" bases) on stream `s` into its
// region of the partial sums, then the copy of those sums to its region of ones_host.
static void queue_ones(const gpu_t& gpu, cuzk_worker& w, const stream_t& s,
                       const cuzk_srs& srs, int r, size_t region)
{
    size_t n;
    const void* bases = ones_bases(srs, r, n);
    const cuzk_query_dev& qd = ones_query(w, r);
    CUZK_REQUIRE(qd.nbases == n, "query does not match the SRS section");
    const size_t nret = ones_nret(gpu);
    char* d = w.partial.as<char>() + r * region;
    const uint64_t* bits = qd.bits.as<const uint64_t>();
    size_t bytes;
    if (r < 3) {
        launch_ones_into<bucket_t, affine_t>(gpu, s, d, bases, n, bits, false);
        bytes = nret * sizeof(bucket_t);
    } else {
        launch_ones_into<bucket2_t, affine2_t>(gpu, s, d, bases, n, bits, false);
        bytes = nret * sizeof(bucket2_t);
    }
    // (host buckets have the device layout: collect_ones copies them the same way)
    CUDA_OK(cudaMemcpyAsync(static_cast<char*>(w.ones_host) + r * region, d, bytes,
                            cudaMemcpyDeviceToHost, s));
}

// The sum of what queue_ones left in region r of `host` (once its copy landed).
template<class bucket_t_>
static bucket_t_ ones_sum(const gpu_t& gpu, const void* host, int r, size_t region)
{
    return sum_up(reinterpret_cast<const bucket_t_*>(static_cast<const char*>(host) + r * region),
                  ones_nret(gpu));
}

// The early batch additions of a resident-SRS proof: every query's "scalar is 1" sum (L, A,
// B in G1, B in G2) launched on the worker's side stream before the NTTs, each into its own
// region of the partial sums and copied to the page-locked `ones_host`; a host thread sums
// the copies once they land. The main stream's kernels run meanwhile, so the sums' device
// time, their synchronisations and their host additions leave the critical path.
struct early_ones_t {
    point_t g1[3];      // L, A, B in G1
    point2_t g2;        // B in G2
    std::thread summer;
    std::exception_ptr err;
    early_ones_t() { for (auto& p : g1) p.inf(); g2.inf(); }
    ~early_ones_t() { if (summer.joinable()) summer.join(); }

    void launch(const gpu_t& gpu, cuzk_worker& w, const cuzk_srs& srs)
    {
        const size_t region = ensure_ones_regions(gpu, w);
        bool has[ONES_REGIONS];
        for (int r = 0; r < ONES_REGIONS; r++) {
            has[r] = ones_query(w, r).ones_words != 0;
            if (has[r])
                queue_ones(gpu, w, w.side, srs, r, region);
        }
        CUDA_OK(cudaEventRecord(w.ones_ev, w.side));
        const int dev = w.dev;
        const cudaEvent_t ev = w.ones_ev;
        const void* host = w.ones_host;
        summer = std::thread([this, &gpu, dev, ev, host, region, has]() {
            try {
                (void)select_gpu(dev);
                CUDA_OK(cudaEventSynchronize(ev));
                for (int r = 0; r < 3; r++)
                    if (has[r])
                        g1[r] = ones_sum<bucket_t>(gpu, host, r, region);
                if (has[3])
                    g2 = ones_sum<bucket2_t>(gpu, host, 3, region);
            } catch (...) {
                err = std::current_exception();
            }
        });
    }

    // Waits for the sums (rethrowing a failure of their thread).
    void join()
    {
        if (summer.joinable()) summer.join();
        if (err) std::rethrow_exception(err);
    }
};

// A section of an SRS in host memory.
struct host_sec {
    const char* p;
    size_t n;       // bases
    size_t elem;    // bytes a base
    bool pinned;    // page-locked: chunks DMA straight from it
};

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

// Σ scalar_i·P_i over one query, bases streamed from host memory: per chunk, batch addition
// of its ones (accumulating on the device) and a gather of its others into the whole-query
// gathered buffer; then one Pippenger over all gathered points.
template<class bucket_t_, class point_t_, class affine_t_, class raw_t>
static void split_msm_streamed(const gpu_t& gpu, cuzk_worker& w, const cuzk_query_dev& qd,
                               const host_sec& hs, point_t_& out)
{
    out.inf();
    CUZK_REQUIRE(qd.nbases == hs.n, "query does not match the SRS section");
    const size_t C = w.stream_chunk;
    const size_t nch = (hs.n + C - 1) / C;
    CUZK_REQUIRE(qd.bounds.size() == nch + 1 && qd.has_ones.size() == nch,
                 "query not prepared for this chunk size");
    std::vector<size_t> todo;
    for (size_t c = 0; c < nch; c++)
        if ((qd.ones_words && qd.has_ones[c]) || qd.bounds[c + 1] > qd.bounds[c])
            todo.push_back(c);
    if (qd.nothers)
        w.gathered.ensure(qd.nothers * sizeof(raw_t));
    bool any_ones = false;
    stream_chunks(gpu, w, hs, todo, false,
                  [&](size_t c, const void* bases, size_t off, size_t len) {
        if (qd.ones_words && qd.has_ones[c]) {
            // off is a multiple of 1024: the chunk's bitmap starts on a 1024-bit block
            launch_ones<bucket_t_, affine_t_>(gpu, w, bases, len,
                                              (const uint64_t*)qd.bits.ptr + off / 64,
                                              any_ones);
            any_ones = true;
        }
        launch_gather<raw_t>(gpu, w, qd, bases, off, qd.bounds[c], qd.bounds[c + 1]);
    });
    if (any_ones)
        out.add(collect_ones<bucket_t_, point_t_>(gpu, w));
    if (qd.nothers)
        out.add(msm_gathered<bucket_t_, point_t_, affine_t_>(gpu, w, qd));
}
