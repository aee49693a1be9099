// gpu_phase.cuh: a proof's GPU phase: queued back to back over a resident SRS (queue_proof,
// compute_queued), or each step waited for (compute_sync: a streamed SRS, or the reference).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

template<class jac_t, class out_t>
static void put(out_t& dst, const jac_t& src)
{
#ifndef __CUDA_ARCH__
    static_assert(sizeof(jac_t) == sizeof(out_t), "point layout");
#endif
    std::memcpy(&dst, &src, sizeof(out_t));
}

// The GPU phase of a queued proof (resident SRS, cuzk_input_t::queued): a/b/c, the NTTs, H's
// MSM and every query's batch addition, gather and MSM, queued on gpu[0] (the batch additions
// on the side stream when early) with no host wait in between; then one wait for both
// streams. Every buffer the kernels use is grown before the first is queued (a growing
// buffer is freed and allocated again). The MSMs' and the batch additions' results wait in
// page-locked memory for cuzk_worker_finish; events along gpu[0] time the phases.
static void queue_proof(const gpu_t& gpu, cuzk_worker& w, const cuzk_srs& srs,
                        const cuzk_matrices* mats, size_t n, cuzk_output_t* out);

static void compute_queued(const gpu_t& gpu, cuzk_worker& w, const cuzk_srs& srs,
                           const cuzk_matrices* mats, size_t n, cuzk_output_t* out)
{
    try {
        queue_proof(gpu, w, srs, mats, n, out);
    } catch (...) {
        // what was queued must not outlive the interlock (the counters, the buffers)
        (void)cudaStreamSynchronize(gpu[0]);
        (void)cudaStreamSynchronize(w.side);
        throw;
    }
}

static void queue_proof(const gpu_t& gpu, cuzk_worker& w, const cuzk_srs& srs,
                        const cuzk_matrices* mats, size_t n, cuzk_output_t* out)
{
    typedef queued_msm<bucket_t, point_t, affine_t> msm1_t;
    typedef queued_msm<bucket2_t, point2_t, affine2_t> msm2_t;
    const stream_t& s = gpu[0];
    const cuzk_query_dev* q[ONES_REGIONS];
    for (int r = 0; r < ONES_REGIONS; r++)
        q[r] = &ones_query(w, r);
    // results of H, L, A, B in G1, B in G2
    const size_t npts[5] = {srs.nh, q[0]->nothers, q[1]->nothers, q[2]->nothers, q[3]->nothers};
    size_t at[6] = {0};
    for (int i = 0; i < 5; i++) {
        size_t b = i < 4 ? msm1_t::host_bytes(gpu, npts[i]) : msm2_t::host_bytes(gpu, npts[i]);
        at[i + 1] = at[i] + ((b + 63) & ~(size_t)63);
    }
    if (w.sums_cap < at[5]) {
        if (w.sums_host) CUDA_OK(cudaFreeHost(w.sums_host));
        w.sums_host = nullptr;
        w.sums_cap = 0;
        CUDA_OK(cudaHostAlloc(&w.sums_host, at[5], cudaHostAllocPortable));
        w.sums_cap = at[5];
    }
    char* host = static_cast<char*>(w.sums_host);
    w.gathered.ensure(std::max({q[0]->nothers * sizeof(g1_raw), q[1]->nothers * sizeof(g1_raw),
                                q[2]->nothers * sizeof(g1_raw), q[3]->nothers * sizeof(g2_raw)}));
    bool has_ones[ONES_REGIONS];
    bool any_ones = false;
    for (int r = 0; r < ONES_REGIONS; r++) {
        size_t nb;
        (void)ones_bases(srs, r, nb);
        CUZK_REQUIRE(q[r]->nbases == nb, "query does not match the SRS section");
        has_ones[r] = q[r]->ones_words != 0;
        any_ones |= has_ones[r];
    }
    const size_t region = any_ones ? ensure_ones_regions(gpu, w) : 0;

    if (w.early_ones)
        for (int r = 0; r < ONES_REGIONS; r++)
            if (has_ones[r])
                queue_ones(gpu, w, w.side, srs, r, region);
    CUDA_OK(cudaEventRecord(w.tev[0], s));
    if (w.deferred)
        queue_abc(gpu, w, mats, n);
    CUDA_OK(cudaEventRecord(w.tev[1], s));
    queue_h_ntt(gpu, w, n);
    CUDA_OK(cudaEventRecord(w.tev[2], s));
    w.qm1[0].queue(gpu, s, srs.h, w.abc.as<scalar_t>(), srs.nh, host + at[0]);
    CUDA_OK(cudaEventRecord(w.tev[3], s));
    for (int r = 0; r < ONES_REGIONS; r++) {
        size_t nb;
        const void* bases = ones_bases(srs, r, nb);
        const cuzk_query_dev& qd = *q[r];
        if (has_ones[r] && !w.early_ones)
            queue_ones(gpu, w, s, srs, r, region);
        // (gathered is reused query after query: stream order keeps each MSM's points)
        const scalar_t* sc = qd.scalars.as<scalar_t>();
        if (r < 3) {
            if (qd.nothers)
                launch_gather<g1_raw>(gpu, w, qd, bases, 0, 0, qd.nothers);
            w.qm1[r + 1].queue(gpu, s, w.gathered.as<affine_t::mem_t>(), sc, qd.nothers,
                               host + at[r + 1]);
        } else {
            if (qd.nothers)
                launch_gather<g2_raw>(gpu, w, qd, bases, 0, 0, qd.nothers);
            w.qm2.queue(gpu, s, w.gathered.as<affine2_t::mem_t>(), sc, qd.nothers, host + at[4]);
        }
        CUDA_OK(cudaEventRecord(w.tev[4 + r], s));
    }
    // Nothing of this proof may still run once the interlock goes: the next holder's kernels
    // share the batch additions' and accumulate's work counters.
    s.sync();
    CUDA_OK(cudaStreamSynchronize(w.side));
    for (int r = 0; r < ONES_REGIONS; r++)
        w.ones_pending[r] = has_ones[r];
    w.pending = true;
    auto span = [&](int i, int j) {
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, w.tev[i], w.tev[j]));
        return (double)ms;
    };
    out->ms_abc = w.deferred ? span(0, 1) : 0;
    out->ms_ntt_h = span(1, 2);
    out->ms_msm_h = span(2, 3);
    out->ms_msm_l = span(3, 4);
    out->ms_msm_a = span(4, 5);
    out->ms_msm_b_g1 = span(5, 6);
    out->ms_msm_b_g2 = span(6, 7);
}

// The GPU phase of any other proof (a streamed SRS, or `queued` off: the reference): each
// phase waited for, sppark's msm_t adding every MSM's windows up on the host before it
// returns; the points go straight into `out`.
static void compute_sync(const gpu_t& gpu, cuzk_worker* w, const cuzk_srs* srs,
                         const cuzk_host_srs_t* host, const cuzk_matrices* mats, size_t n,
                         size_t nh, cuzk_output_t* out)
{
    auto sec = [&](const void* p, size_t cnt, size_t elem, int bit) {
        return host_sec{static_cast<const char*>(p), cnt, elem, ((host->pinned >> bit) & 1) != 0};
    };
    fr_t* d_a = w->abc.as<fr_t>();
    std::chrono::steady_clock::time_point t0;

    // Resident SRS: every query's batch addition now, beside the kernels below.
    early_ones_t early;
    const bool early_on = srs && w->early_ones;
    if (early_on)
        early.launch(gpu, *w, *srs);

    // Deferred: a/b/c = A·z, B·z, C·z (then the input rows, then zeros to the domain).
    out->ms_abc = 0;
    if (w->deferred) {
        t0 = std::chrono::steady_clock::now();
        queue_abc(gpu, *w, mats, n);
        gpu[0].sync();
        out->ms_abc = ms_since(t0);
    }

    t0 = std::chrono::steady_clock::now();
    queue_h_ntt(gpu, *w, n);
    gpu[0].sync();
    out->ms_ntt_h = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    {
        point_t h;
        h.inf();
        if (srs && nh) {
            msm_t<bucket_t, point_t, affine_t, scalar_t> msm{nullptr, nh, sizeof(affine_t), gpu.id()};
            // (pass affine_t, not affine_t::mem_t: sppark's device-pointer overload only
            // forwards to the worker overload for affine_t pointers)
            CUZK_CHECK((msm.invoke(h, dev_ptr_t<affine_t>(reinterpret_cast<affine_t*>(srs->h)), nh,
                                   dev_ptr_t<scalar_t>(d_a), true)));
        } else if (nh) {
            // one Pippenger per chunk over the H scalars at the chunk's offset, summed
            const size_t C = w->stream_chunk;
            msm_t<bucket_t, point_t, affine_t, scalar_t> msm{nullptr, std::min(C, nh), sizeof(affine_t), gpu.id()};
            std::vector<size_t> all((nh + C - 1) / C);
            for (size_t c = 0; c < all.size(); c++) all[c] = c;
            stream_chunks(gpu, *w, sec(host->h, nh, sizeof(affine_t::mem_t), 0), all, true,
                          [&](size_t, const void* bases, size_t off, size_t len) {
                point_t part;
                CUZK_CHECK((msm.invoke(part,
                                       dev_ptr_t<affine_t>((affine_t*)bases), len,
                                       dev_ptr_t<scalar_t>(d_a + off), true)));
                h.add(part);
            });
        }
        put(out->h, h);
    }
    out->ms_msm_h = ms_since(t0);

    // (the early sums are long done by now: the H MSM took its time)
    if (early_on)
        early.join();

    point_t p;
    t0 = std::chrono::steady_clock::now();
    if (srs)
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[0], srs->l, srs->nl, p, !early_on);
    else
        split_msm_streamed<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[0], sec(host->l, host->nl, 96, 1), p);
    if (early_on) p.add(early.g1[0]);
    put(out->l, p);
    out->ms_msm_l = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    if (srs)
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[1], srs->a, srs->na, p, !early_on);
    else
        split_msm_streamed<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[1], sec(host->a, host->na, 96, 2), p);
    if (early_on) p.add(early.g1[1]);
    put(out->a, p);
    out->ms_msm_a = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    if (srs)
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[2], srs->b_g1, srs->nb1, p, !early_on);
    else
        split_msm_streamed<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[2], sec(host->b_g1, host->nb1, 96, 3), p);
    if (early_on) p.add(early.g1[2]);
    put(out->b_g1, p);
    out->ms_msm_b_g1 = ms_since(t0);

    t0 = std::chrono::steady_clock::now();
    point2_t p2;
    if (srs)
        split_msm<bucket2_t, point2_t, affine2_t, g2_raw>(gpu, *w, w->q[2], srs->b_g2, srs->nb2, p2, !early_on);
    else
        split_msm_streamed<bucket2_t, point2_t, affine2_t, g2_raw>(gpu, *w, w->q[2], sec(host->b_g2, host->nb2, 192, 4), p2);
    if (early_on) p2.add(early.g2);
    put(out->b_g2, p2);
    out->ms_msm_b_g2 = ms_since(t0);
}
