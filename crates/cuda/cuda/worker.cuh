// worker.cuh: one prover worker's device state (cuzk_worker: its streams, staging and device
// buffers) and a query's upload (prepare_query).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// ---------------------------------------------------------------------------------------
// Per-worker state: its own copy stream, staging buffers and device buffers.

struct cuzk_query_dev {
    dbuf bits, idx, scalars;
    size_t nbases = 0, ones_words = 0, nothers = 0;
    // Streaming only: bounds[c] = first k with idx[k] >= c * chunk (nchunks + 1 entries), and
    // whether chunk c has a scalar-1 base.
    std::vector<size_t> bounds;
    std::vector<uint8_t> has_ones;
};

struct cuzk_worker {
    int dev;
    stream_t copy;
    // Early batch additions (see cuzk_input_t::early_ones): their stream, the event after
    // their sums' copy to `ones_host` (page-locked, one region per MSM), the region size.
    stream_t side;
    cudaEvent_t ones_ev = nullptr;
    void* ones_host = nullptr;
    size_t ones_region = 0;
    bool early_ones = false;
    static const size_t STAGE_BYTES = (size_t)32 << 20;
    void* stage[2] = {nullptr, nullptr};
    cudaEvent_t stage_ev[2] = {nullptr, nullptr};
    cudaEvent_t uploaded = nullptr;

    dbuf abc;           // a | b | c, each 1 << lg_domain scalars
    cuzk_query_dev plans[NPLANS];
    dbuf gathered;      // points of the non-0/1 scalars of one query
    dbuf partial;       // batch-addition partial sums, one region per planned query

    // deferred a/b/c: z = inputs | aux, its value classes, and the witness's others when
    // the L query's were summed on the host (too few for the device)
    dbuf z, cls, wit_idx, wit_scalars;
    bool deferred = false;
    size_t wit_ni = 0, wit_naux = 0, wit_rows = 0, wit_nothers = 0;
    bool wit_own = false;     // others in wit_idx/wit_scalars (else the L query's buffers)
    bool wit_ones = false;    // the L query's bitmap holds the aux bits equal to 1

    // SRS streaming: bases per chunk (0: not prepared for streaming), the double buffer, and
    // events for "chunk uploaded" (copy stream) and "chunk consumed" (compute stream).
    size_t stream_chunk = 0;
    dbuf chunk_buf[2];
    cudaEvent_t chunk_ev[2] = {nullptr, nullptr};
    cudaEvent_t consumed_ev[2] = {nullptr, nullptr};

    // What compute leaves for cuzk_worker_finish (`pending`): every query's MSM, either
    // queued (cuzk_input_t::queued, resident SRS: qm1 by query number for H, L, A, B in G1,
    // qm2 for B in G2, their window sums in `sums_host`, page-locked, grown as needed, never
    // shrunk: a few MB per batch of each MSM) or already a point (`got_g1`, `got_g2`: sppark's
    // msm_t, which sums on the host before it returns); and the batch additions' sums in
    // ones_host, region by region (`ones_pending`). Marks along gpu[0] time the phases.
    bool queued = false;
    bool sorted_h = false;     // with results_queued: H by qh (sorted_msm), not qm1[H]
                               // (by_sorted)
    bool pending = false;
    bool results_queued = false;
    queued_msm<bucket_t, point_t, affine_t> qm1[4];
    sorted_msm<bucket_t, point_t, affine_t> qh;
    queued_msm<bucket2_t, point2_t, affine2_t> qm2;
    point_t got_g1[4];
    point2_t got_g2;
    void* sums_host = nullptr;
    size_t sums_cap = 0;
    bool ones_pending[ONES_REGIONS] = {false, false, false, false};
    static const int NEVENTS = 8;
    cudaEvent_t tev[NEVENTS] = {};

    // the prepared input
    uint32_t lg_domain = 0;
    const fr_t* z_inv_host = nullptr;
    fr_t z_inv;
    bool ready = false;

    explicit cuzk_worker(int d) : dev(d), copy(d), side(d)
    {
        CUDA_OK(cudaEventCreateWithFlags(&ones_ev, cudaEventDisableTiming));
        for (int i = 0; i < 2; i++) {
            CUDA_OK(cudaHostAlloc(&stage[i], STAGE_BYTES, cudaHostAllocPortable));
            CUDA_OK(cudaEventCreateWithFlags(&stage_ev[i], cudaEventDisableTiming));
            CUDA_OK(cudaEventCreateWithFlags(&chunk_ev[i], cudaEventDisableTiming));
            CUDA_OK(cudaEventCreateWithFlags(&consumed_ev[i], cudaEventDisableTiming));
        }
        CUDA_OK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
        for (auto& e : tev)
            CUDA_OK(cudaEventCreate(&e));
    }
    ~cuzk_worker()
    {
        (void)cudaStreamSynchronize(copy);
        (void)cudaStreamSynchronize(side);
        if (ones_ev) (void)cudaEventDestroy(ones_ev);
        if (ones_host) (void)cudaFreeHost(ones_host);
        for (int i = 0; i < 2; i++) {
            if (stage[i]) (void)cudaFreeHost(stage[i]);
            if (stage_ev[i]) (void)cudaEventDestroy(stage_ev[i]);
            if (chunk_ev[i]) (void)cudaEventDestroy(chunk_ev[i]);
            if (consumed_ev[i]) (void)cudaEventDestroy(consumed_ev[i]);
            chunk_buf[i].release();
        }
        if (uploaded) (void)cudaEventDestroy(uploaded);
        for (auto& e : tev)
            if (e) (void)cudaEventDestroy(e);
        if (sums_host) (void)cudaFreeHost(sums_host);
        abc.release(); gathered.release(); partial.release();
        z.release(); cls.release(); wit_idx.release(); wit_scalars.release();
        for (auto& x : plans) { x.bits.release(); x.idx.release(); x.scalars.release(); }
    }

    // The plan of query q's scalars (B in G2 shares B in G1's).
    cuzk_query_dev& plan(query q) { return plans[(int)plan_of(q)]; }
    const cuzk_query_dev& plan(query q) const { return plans[(int)plan_of(q)]; }

    // Host (pageable) -> device through the pinned double buffer: the memcpy of one chunk
    // (spread over the staging pool's threads) overlaps the DMA of the previous one.
    void upload(void* dst, const void* src, size_t bytes, int& slot)
    {
        auto* d = static_cast<char*>(dst);
        auto* s = static_cast<const char*>(src);
        while (bytes) {
            size_t n = std::min(bytes, STAGE_BYTES);
            CUDA_OK(cudaEventSynchronize(stage_ev[slot]));
            char* st = static_cast<char*>(stage[slot]);
            const size_t piece = (size_t)1 << 20;
            size_t npieces = (n + piece - 1) / piece;
            if (npieces > 1) {
                staging_pool().par_map(npieces, [&](size_t i) {
                    size_t off = i * piece;
                    std::memcpy(st + off, s + off, std::min(piece, n - off));
                });
            } else {
                std::memcpy(st, s, n);
            }
            CUDA_OK(cudaMemcpyAsync(d, st, n, cudaMemcpyHostToDevice, copy));
            CUDA_OK(cudaEventRecord(stage_ev[slot], copy));
            slot ^= 1;
            d += n; s += n; bytes -= n;
        }
    }
};

static void prepare_query(cuzk_worker& w, cuzk_query_dev& qd, const cuzk_query_t& q,
                          int& slot)
{
    qd.nbases = q.nbases;
    qd.ones_words = q.ones_bits ? q.ones_words : 0;
    qd.nothers = q.nothers;
    CUZK_REQUIRE(!qd.ones_words || qd.ones_words == (q.nbases + 63) / 64,
                 "ones bitmap does not match the bases");
    qd.bounds.clear();
    qd.has_ones.clear();
    if (size_t C = w.stream_chunk) {
        // idx is ascending, so each chunk's "others" are one contiguous range of idx
        size_t nch = (q.nbases + C - 1) / C;
        qd.bounds.resize(nch + 1);
        qd.has_ones.assign(nch, 0);
        size_t k = 0;
        for (size_t c = 0; c <= nch; c++) {
            size_t first = std::min(c * C, q.nbases);
            while (k < qd.nothers && q.idx[k] < first) k++;
            qd.bounds[c] = c == nch ? qd.nothers : k;
        }
        const size_t wpc = C / 64;
        for (size_t c = 0; c < nch && qd.ones_words; c++) {
            size_t w1 = std::min((c + 1) * wpc, qd.ones_words);
            for (size_t x = c * wpc; x < w1; x++)
                if (q.ones_bits[x]) { qd.has_ones[c] = 1; break; }
        }
    }
    if (qd.ones_words) {
        // batch_addition reads whole 1024-bit blocks: pad with zero words
        size_t padded = (qd.ones_words + 15) / 16 * 16 + 16;
        qd.bits.ensure(padded * sizeof(uint64_t));
        CUDA_OK(cudaMemsetAsync(qd.bits.ptr, 0, padded * sizeof(uint64_t), w.copy));
        w.upload(qd.bits.ptr, q.ones_bits, qd.ones_words * sizeof(uint64_t), slot);
    }
    if (qd.nothers) {
        qd.idx.ensure(qd.nothers * sizeof(uint32_t));
        qd.scalars.ensure(qd.nothers * sizeof(fr_t));
        w.upload(qd.idx.ptr, q.idx, qd.nothers * sizeof(uint32_t), slot);
        w.upload(qd.scalars.ptr, q.scalars, qd.nothers * sizeof(fr_t), slot);
    }
}
