// gpu_phase.cuh: a proof's GPU phase, one sequence for every tier: a/b/c, the H polynomial,
// then each query's MSM (query.cuh), over bases resident in VRAM or streamed from host memory
// (bases_t), queued back to back (a resident SRS with cuzk_input_t::queued) or each MSM by
// sppark's msm_t, waited for (the reference, and every streamed proof); then the host sums
// (finish_phase, outside the interlock).
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

// The phase's timestamps: events along gpu[0] when every kernel is queued (device time), else
// the host's clock after gpu[0] caught up (the waited-for MSMs return with their host sums
// made). Mark 0 starts a/b/c, 1 the NTTs, 2 + q query q's MSM; the last follows B in G2.
struct phase_clock {
    cuzk_worker& w;
    const stream_t& s;
    const bool events;
    int next = 0;
    std::chrono::steady_clock::time_point t[cuzk_worker::NEVENTS];

    phase_clock(cuzk_worker& w_, const stream_t& s_, bool ev) : w(w_), s(s_), events(ev) {}

    void mark()
    {
        CUZK_REQUIRE(next < cuzk_worker::NEVENTS, "phase marks");
        if (events) {
            CUDA_OK(cudaEventRecord(w.tev[next], s));
        } else {
            s.sync();
            t[next] = std::chrono::steady_clock::now();
        }
        next++;
    }

    // Milliseconds from mark i to mark i + 1 (the device has passed both).
    double span(int i) const
    {
        if (!events)
            return std::chrono::duration<double, std::milli>(t[i + 1] - t[i]).count();
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, w.tev[i], w.tev[i + 1]));
        return (double)ms;
    }
};

// Whether query q's MSM is the sorted one (H, queued, `[gpu] sorted_msm`).
static bool by_sorted(const cuzk_worker& w, query q)
{
    return q == query::h && w.results_queued && w.sorted_h;
}

// Queues the batch addition of query q's "scalar is 1" bases among `bases` (n of them, the
// query's bases from `first` on) into q's region of the partial sums on stream `s`; with
// `accumulate`, onto what an earlier launch for q left there.
static void queue_ones(const gpu_t& gpu, cuzk_worker& w, const stream_t& s, query q,
                       const void* bases, size_t first, size_t n, bool accumulate)
{
    // (first is a multiple of 1024: the bitmap starts on a 1024-bit block)
    const uint64_t* bits = w.plan(q).bits.as<const uint64_t>() + first / 64;
    char* d = w.partial.as<char>() + region_of(q) * w.ones_region;
    if (in_g2(q))
        launch_ones_into<bucket2_t, affine2_t>(gpu, s, d, bases, n, bits, accumulate);
    else
        launch_ones_into<bucket_t, affine_t>(gpu, s, d, bases, n, bits, accumulate);
}

// Queues the copy of query q's batch-addition sums to its region of ones_host, on `s`.
static void queue_ones_copy(const gpu_t& gpu, cuzk_worker& w, const stream_t& s, query q)
{
    const size_t off = region_of(q) * w.ones_region;
    const size_t bytes = ones_nret(gpu) * (in_g2(q) ? sizeof(bucket2_t) : sizeof(bucket_t));
    // (host buckets have the device layout: ones_sum reads them as they are)
    CUDA_OK(cudaMemcpyAsync(static_cast<char*>(w.ones_host) + off, w.partial.as<char>() + off,
                            bytes, cudaMemcpyDeviceToHost, s));
}

// The MSM over query q's gathered points (H: over its bases, `h_bases`, and the H polynomial),
// queued (its window sums left for finish_phase) or by msm_t into got_g1/got_g2.
static void others_msm(const gpu_t& gpu, cuzk_worker& w, query q, const void* h_bases,
                       char* sums)
{
    const stream_t& s = gpu[0];
    const bool is_h = q == query::h;
    const size_t n = is_h ? ((size_t)1 << w.lg_domain) - 1 : w.plan(q).nothers;
    const void* points = is_h ? h_bases : w.gathered.ptr;
    const scalar_t* sc = is_h ? w.abc.as<scalar_t>() : w.plan(q).scalars.as<scalar_t>();
    if (w.results_queued) {
        if (by_sorted(w, q))
            w.qh.queue(gpu, s, static_cast<const affine_t::mem_t*>(points),
                       const_cast<scalar_t*>(sc), n, sums);
        else if (in_g2(q))
            w.qm2.queue(gpu, s, static_cast<const affine2_t::mem_t*>(points), sc, n, sums);
        else
            w.qm1[(int)q].queue(gpu, s, static_cast<const affine_t::mem_t*>(points), sc, n, sums);
        return;
    }
    if (n == 0) return;
    s.sync();
    // (pass affine_t, not affine_t::mem_t: sppark's device-pointer overload only forwards to
    // the worker overload for affine_t pointers)
    if (in_g2(q)) {
        msm_t<bucket2_t, point2_t, affine2_t, scalar_t> msm{nullptr, n, sizeof(affine2_t), gpu.id()};
        point2_t p;
        CUZK_CHECK((msm.invoke(p, dev_ptr_t<affine2_t>((affine2_t*)points), n,
                               dev_ptr_t<scalar_t>(const_cast<scalar_t*>(sc)), true)));
        w.got_g2.add(p);
    } else {
        msm_t<bucket_t, point_t, affine_t, scalar_t> msm{nullptr, n, sizeof(affine_t), gpu.id()};
        point_t p;
        CUZK_CHECK((msm.invoke(p, dev_ptr_t<affine_t>((affine_t*)points), n,
                               dev_ptr_t<scalar_t>(const_cast<scalar_t*>(sc)), true)));
        w.got_g1[(int)q].add(p);
    }
}

// H streamed: one Pippenger per chunk over the H scalars at the chunk's offset, summed.
static void streamed_h_msm(const gpu_t& gpu, cuzk_worker& w, const bases_t& bases)
{
    const host_sec hs = bases.in_host(query::h);
    const size_t C = w.stream_chunk;
    msm_t<bucket_t, point_t, affine_t, scalar_t> msm{nullptr, std::min(C, hs.n), sizeof(affine_t), gpu.id()};
    std::vector<size_t> all((hs.n + C - 1) / C);
    for (size_t c = 0; c < all.size(); c++) all[c] = c;
    scalar_t* h = w.abc.as<scalar_t>();
    stream_chunks(gpu, w, hs, all, true, [&](size_t, const void* chunk, size_t off, size_t len) {
        point_t part;
        CUZK_CHECK((msm.invoke(part, dev_ptr_t<affine_t>((affine_t*)chunk), len,
                               dev_ptr_t<scalar_t>(h + off), true)));
        w.got_g1[(int)query::h].add(part);
    });
}

// A planned query's bases, resident or streamed: its batch addition (unless made early on the
// side stream), then its others gathered, a chunk at a time when streamed.
template<class raw_t>
static void ones_and_gather(const gpu_t& gpu, cuzk_worker& w, const bases_t& bases, query q,
                            bool early)
{
    const cuzk_query_dev& qd = w.plan(q);
    const size_t n = bases.count(q);
    if (bases.resident()) {
        const void* b = bases.in_vram(q);
        if (qd.ones_words && !early) {
            queue_ones(gpu, w, gpu[0], q, b, 0, n, false);
            queue_ones_copy(gpu, w, gpu[0], q);
        }
        launch_gather<raw_t>(gpu, w, qd, b, 0, 0, qd.nothers);
        return;
    }
    const size_t C = w.stream_chunk, nch = (n + C - 1) / C;
    CUZK_REQUIRE(qd.bounds.size() == nch + 1 && qd.has_ones.size() == nch,
                 "query not prepared for this chunk size");
    std::vector<size_t> todo;
    for (size_t c = 0; c < nch; c++)
        if ((qd.ones_words && qd.has_ones[c]) || qd.bounds[c + 1] > qd.bounds[c])
            todo.push_back(c);
    bool any_ones = false;
    stream_chunks(gpu, w, bases.in_host(q), todo, false,
                  [&](size_t c, const void* chunk, size_t off, size_t len) {
        if (qd.ones_words && qd.has_ones[c]) {
            queue_ones(gpu, w, gpu[0], q, chunk, off, len, any_ones);
            any_ones = true;
        }
        launch_gather<raw_t>(gpu, w, qd, chunk, off, qd.bounds[c], qd.bounds[c + 1]);
    });
    if (any_ones)
        queue_ones_copy(gpu, w, gpu[0], q);
    else
        w.ones_pending[region_of(q)] = false;
}

// The GPU phase of one proof (the caller holds the device's interlock). Every buffer the
// kernels use is grown before the first is queued (a growing buffer is freed and allocated
// again). Queued, nothing waits on the host until the end; early batch additions (resident
// SRS) run on the worker's side stream beside the NTTs and the H MSM. Nothing of this proof
// runs once it returns: the next holder's kernels share the batch additions' and accumulate's
// work counters.
static void queue_phase(const gpu_t& gpu, cuzk_worker& w, const bases_t& bases,
                        const cuzk_matrices* mats, size_t n, cuzk_output_t* out)
{
    typedef queued_msm<bucket_t, point_t, affine_t> msm1_t;
    typedef queued_msm<bucket2_t, point2_t, affine2_t> msm2_t;
    const stream_t& s = gpu[0];
    w.results_queued = bases.resident() && w.queued;
    const bool early = bases.resident() && w.early_ones;
    CUZK_REQUIRE(bases.count(query::h) + 1 == n, "H bases do not match the domain");

    // every query's results: room for the queued window sums, the gathered points, the
    // batch additions' regions
    size_t at[NQUERIES + 1] = {0};
    size_t most = 0;
    bool any_ones = false;
    for (query q : QUERIES) {
        size_t npts = n - 1;
        if (is_planned(q)) {
            const cuzk_query_dev& qd = w.plan(q);
            CUZK_REQUIRE(qd.nbases == bases.count(q), "query does not match the SRS section");
            npts = qd.nothers;
            most = std::max(most, npts * base_bytes(q));
            w.ones_pending[region_of(q)] = qd.ones_words != 0;
            any_ones |= qd.ones_words != 0;
        }
        size_t b = !w.results_queued ? 0
                 : in_g2(q) ? msm2_t::host_bytes(gpu, npts)
                 : by_sorted(w, q) ? sorted_msm<bucket_t, point_t, affine_t>::host_bytes(npts)
                     : msm1_t::host_bytes(gpu, npts);
        at[(int)q + 1] = at[(int)q] + ((b + 63) & ~(size_t)63);
    }
    if (w.sums_cap < at[NQUERIES]) {
        if (w.sums_host) CUDA_OK(cudaFreeHost(w.sums_host));
        w.sums_host = nullptr;
        w.sums_cap = 0;
        CUDA_OK(cudaHostAlloc(&w.sums_host, at[NQUERIES], cudaHostAllocPortable));
        w.sums_cap = at[NQUERIES];
    }
    w.gathered.ensure(most);
    if (any_ones)
        ensure_ones_regions(gpu, w);
    for (auto& p : w.got_g1) p.inf();
    w.got_g2.inf();

    if (early) {
        for (query q : QUERIES)
            if (is_planned(q) && w.plan(q).ones_words) {
                queue_ones(gpu, w, w.side, q, bases.in_vram(q), 0, bases.count(q), false);
                queue_ones_copy(gpu, w, w.side, q);
            }
    }
    phase_clock clock(w, s, w.results_queued);
    clock.mark();
    if (w.deferred)
        queue_abc(gpu, w, mats, n);
    clock.mark();
    queue_h_ntt(gpu, w, n);
    clock.mark();
    char* sums = static_cast<char*>(w.sums_host);
    for (query q : QUERIES) {
        if (q == query::h && !bases.resident())
            streamed_h_msm(gpu, w, bases);
        else if (q == query::h)
            others_msm(gpu, w, q, bases.in_vram(q), sums + at[(int)q]);
        else {
            // (gathered is reused query after query: stream order keeps each MSM's points)
            if (in_g2(q))
                ones_and_gather<g2_raw>(gpu, w, bases, q, early);
            else
                ones_and_gather<g1_raw>(gpu, w, bases, q, early);
            others_msm(gpu, w, q, nullptr, sums + at[(int)q]);
        }
        clock.mark();
    }
    s.sync();
    CUDA_OK(cudaStreamSynchronize(w.side));
    w.pending = true;
    out->ms_abc = w.deferred ? clock.span(0) : 0;
    out->ms_ntt_h = clock.span(1);
    for (query q : QUERIES)
        ms_of(*out, q) = clock.span(2 + (int)q);
}

static void gpu_phase(const gpu_t& gpu, cuzk_worker& w, const bases_t& bases,
                      const cuzk_matrices* mats, size_t n, cuzk_output_t* out)
{
    try {
        queue_phase(gpu, w, bases, mats, n, out);
    } catch (...) {
        // what was queued must not outlive the interlock (the counters, the buffers)
        (void)cudaStreamSynchronize(gpu[0]);
        (void)cudaStreamSynchronize(w.side);
        throw;
    }
}

// After gpu_phase, outside the interlock: each query's point into `out`: the queued MSMs'
// window sums (or msm_t's points) plus the batch additions' sums.
static void finish_phase(const gpu_t& gpu, cuzk_worker& w, cuzk_output_t* out)
{
    if (!w.pending) return;
    w.pending = false;
    thread_pool_t& pool = sums_pool();
    for (query q : QUERIES) {
        const bool ones = is_planned(q) && w.ones_pending[region_of(q)];
        if (in_g2(q)) {
            point2_t p = w.results_queued ? w.qm2.sum(pool) : w.got_g2;
            if (ones)
                p.add(point2_t(ones_sum<bucket2_t>(gpu, w.ones_host, region_of(q), w.ones_region)));
            put(out->b_g2, p);
        } else {
            point_t p = !w.results_queued ? w.got_g1[(int)q]
                      : by_sorted(w, q) ? w.qh.sum(pool)
                      : w.qm1[(int)q].sum(pool);
            if (ones)
                p.add(point_t(ones_sum<bucket_t>(gpu, w.ones_host, region_of(q), w.ones_region)));
            put(out_g1(*out, q), p);
        }
    }
}
