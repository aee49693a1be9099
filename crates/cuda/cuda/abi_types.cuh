// abi_types.cuh: the C ABI's types, mirrored in src/ffi.rs.
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// ---------------------------------------------------------------------------------------
// C ABI types (mirrored in src/ffi.rs)

extern "C" {

struct cuzk_query_t {
    size_t nbases;              // bases of the query (its SRS section's length)
    const uint64_t* ones_bits;  // bitmap over the query's bases: scalar == 1 (may be null)
    size_t ones_words;          // u64 words in ones_bits
    const uint32_t* idx;        // bases whose scalar is neither 0 nor 1
    const fr_t* scalars;        // their scalars (Montgomery form)
    size_t nothers;
};

// The witness of a partition whose a/b/c are deferred: inputs, and the aux values as the
// L plan has them (bitmap of those equal to 1; indices and values of the others, ascending).
struct cuzk_witness_t {
    const fr_t* inputs;
    size_t ninputs;
    size_t naux;
    size_t nconstraints;
    const uint64_t* ones;      // naux bits, or null (no 1); must be the L query's bitmap
    const uint32_t* idx;
    const fr_t* scalars;
    size_t nothers;
};

struct cuzk_input_t {
    const fr_t* a;
    const fr_t* b;
    const fr_t* c;
    size_t abc_len;            // <= 1 << lg_domain
    uint32_t lg_domain;
    const fr_t* z_inv;         // 1 / (g^n - 1), g the coset generator (7)
    cuzk_query_t l;
    cuzk_query_t a_q;
    cuzk_query_t b_q;          // shared by B in G1 and B in G2
    size_t stream_chunk;       // bases per streamed SRS chunk (a multiple of 1024); 0: resident
    uint32_t deferred;         // a, b, c are null: made on the device from `wit` and matrices
    cuzk_witness_t wit;
    uint32_t early_ones;       // resident SRS: every query's batch addition up front, on the
                               // worker's side stream beside the NTTs and the H MSM
    uint32_t queued;           // resident SRS: every MSM queued on the device with no host
                               // wait, the host sums made by cuzk_worker_finish
    uint32_t sorted_h;         // with queued: the H MSM by sorted_msm (else sppark's kernels)
};

// An SRS in host memory, streamed chunk by chunk (see cuzk_worker_compute).
struct cuzk_host_srs_t {
    const void* h; size_t nh;
    const void* l; size_t nl;
    const void* a; size_t na;
    const void* b_g1; size_t nb1;
    const void* b_g2; size_t nb2;
    uint32_t pinned;           // bit i set: section i (h, l, a, b_g1, b_g2) is page-locked
};

struct cuzk_jac1_t { uint64_t x[6], y[6], z[6]; };
struct cuzk_jac2_t { uint64_t x[12], y[12], z[12]; };

struct cuzk_output_t {
    cuzk_jac1_t h, l, a, b_g1;
    cuzk_jac2_t b_g2;
    // Milliseconds spent in each phase of the exclusive part.
    double ms_wait_upload, ms_ntt_h, ms_msm_h, ms_msm_l, ms_msm_a, ms_msm_b_g1, ms_msm_b_g2;
    double ms_abc;             // deferred a/b/c made on the device (0: uploaded)
};

struct cuzk_device_info_t {
    char name[256];
    size_t vram_total;
    size_t vram_free;
};

} // extern "C"
