// query.cuh: the five MSMs of a proof, named (query), and where their bases are (bases_t:
// resident in VRAM, or streamed from host memory a chunk at a time).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// The MSMs of a proof, in the order of the SRS's sections (cuzk_srs, cuzk_host_srs_t,
// cuzk_srs_write's section numbers) and of the GPU phase. Every other index follows from it:
// the plan a query's scalars come from (plan_of: B in G2 shares B in G1's), its batch-addition
// region (region_of), its queued MSM (cuzk_worker::qm1 by the query's number, qm2 for B in G2).
enum class query : int { h = 0, l = 1, a = 2, b_g1 = 3, b_g2 = 4 };
static const int NQUERIES = 5;
static const query QUERIES[NQUERIES] = {query::h, query::l, query::a, query::b_g1, query::b_g2};

// The queries whose scalars are planned (0 skipped, 1 batch-added, the others gathered): every
// one but H, whose scalars are the whole H polynomial.
static bool is_planned(query q) { return q != query::h; }
static bool in_g2(query q) { return q == query::b_g2; }

// The plans uploaded with a proof (cuzk_input_t's l, a_q, b_q).
enum class plan_id : int { l = 0, a = 1, b = 2 };
static const int NPLANS = 3;
static plan_id plan_of(query q)
{
    return q == query::l ? plan_id::l : q == query::a ? plan_id::a : plan_id::b;
}

// Batch-addition regions (partial sums on the device, and their page-locked copy): one per
// planned query, in query order.
static const int ONES_REGIONS = 4;
static int region_of(query q) { return (int)q - 1; }

// Bytes of one base of a query.
static size_t base_bytes(query q)
{
    return in_g2(q) ? sizeof(affine2_t::mem_t) : sizeof(affine_t::mem_t);
}

// A section of an SRS in host memory.
struct host_sec {
    const char* p;
    size_t n;       // bases
    size_t elem;    // bytes a base
    bool pinned;    // page-locked: chunks DMA straight from it
};

// Where a proof's bases are: exactly one of `srs` (resident in VRAM) and `host` (host memory,
// streamed chunk by chunk through the worker's two chunk buffers).
struct bases_t {
    const cuzk_srs* srs = nullptr;
    const cuzk_host_srs_t* host = nullptr;

    bool resident() const { return srs != nullptr; }

    size_t count(query q) const
    {
        if (srs) {
            const size_t n[NQUERIES] = {srs->nh, srs->nl, srs->na, srs->nb1, srs->nb2};
            return n[(int)q];
        }
        const size_t n[NQUERIES] = {host->nh, host->nl, host->na, host->nb1, host->nb2};
        return n[(int)q];
    }

    // The query's bases in VRAM (resident only).
    const void* in_vram(query q) const
    {
        const void* p[NQUERIES] = {srs->h, srs->l, srs->a, srs->b_g1, srs->b_g2};
        return p[(int)q];
    }

    // The query's section in host memory (streamed only).
    host_sec in_host(query q) const
    {
        const void* p[NQUERIES] = {host->h, host->l, host->a, host->b_g1, host->b_g2};
        return host_sec{static_cast<const char*>(p[(int)q]), count(q), base_bytes(q),
                        ((host->pinned >> (int)q) & 1) != 0};
    }
};

// A query's point in the C ABI's output, and its phase time.
static cuzk_jac1_t& out_g1(cuzk_output_t& out, query q)
{
    cuzk_jac1_t* p[4] = {&out.h, &out.l, &out.a, &out.b_g1};
    return *p[(int)q];
}
static double& ms_of(cuzk_output_t& out, query q)
{
    double* p[NQUERIES] = {&out.ms_msm_h, &out.ms_msm_l, &out.ms_msm_a, &out.ms_msm_b_g1,
                           &out.ms_msm_b_g2};
    return *p[(int)q];
}
