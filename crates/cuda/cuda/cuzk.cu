// cuzk's CUDA library: its C ABI (below), and the stages it calls, one header each (listed at
// the includes): the Groth16 `start` phase on one device (a/b/c from resident matrices, H via
// NTTs, split G1/G2 MSMs over SRS bases that are either resident in VRAM or streamed per
// proof from host memory in double-buffered chunks) and the insecure setup's fixed-base
// points, built on sppark's NTT and Pippenger. sppark's own layout (ff/, ec/, msm/, ntt/) is
// the model; its consumers keep a thin .cu that includes them, as this one does.
//
// FFI contract: every extern "C" entry catches C++ exceptions and returns a by-value
// RustError {code, message}; CUDA calls go through CUDA_OK, whose message is expr@file:line.

#include <cstdint>
#include <cstring>
#include <chrono>
#include <vector>
#include <string>
#include <stdexcept>
#include <thread>
#include <exception>
#include <algorithm>
#include <cmath>

// CUB (the sorted MSM's radix sorts and scans) before sppark's headers, whose macros it
// must not see.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <ff/bls12-381-fp2.hpp>
#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;

typedef jacobian_t<fp2_t> point2_t;
typedef xyzz_t<fp2_t> bucket2_t;
typedef bucket2_t::affine_t affine2_t;

typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>
#include <util/thread_pool_t.hpp>

// The stages, each in its own header (one stage, one file), in dependency order.
#include "errors.cuh"
#include "queued_msm.cuh"
#include "sorted_msm.cuh"
#include "fixed_base.cuh"
#include "kernels.cuh"
#include "host.cuh"
#include "abi_types.cuh"
#include "resident.cuh"
#include "query.cuh"
#include "srs_wire.cuh"
#include "worker.cuh"
#include "split_msm.cuh"
#include "abc.cuh"
#include "h_ntt.cuh"
#include "gpu_phase.cuh"
#include "msm_compare.cuh"
#include "h_compare.cuh"

// ---------------------------------------------------------------------------------------
// C ABI

extern "C" {

RustError::by_value cuzk_device_count(size_t* n)
{
    CUZK_TRY
        *n = ngpus();
    CUZK_CATCH
}

RustError::by_value cuzk_device_info(int dev, cuzk_device_info_t* info)
{
    CUZK_TRY
        CUZK_REQUIRE(dev >= 0 && (size_t)dev < ngpus(), "no such device");
        const gpu_t& gpu = select_gpu(dev);
        std::strncpy(info->name, gpu.props().name, sizeof(info->name) - 1);
        info->name[sizeof(info->name) - 1] = 0;
        CUDA_OK(cudaMemGetInfo(&info->vram_free, &info->vram_total));
    CUZK_CATCH
}

RustError::by_value cuzk_srs_create(int dev,
                                    const void* h, size_t nh, const void* l, size_t nl,
                                    const void* a, size_t na, const void* b_g1, size_t nb1,
                                    const void* b_g2, size_t nb2, cuzk_srs** out)
{
    CUZK_TRY
        *out = nullptr;
        const gpu_t& gpu = select_gpu(dev);
        auto* srs = new cuzk_srs;
        srs->dev = dev;
        srs->nh = nh; srs->nl = nl; srs->na = na; srs->nb1 = nb1; srs->nb2 = nb2;
        try {
            auto up = [&](auto*& dst, const void* src, size_t n) {
                using T = typename std::remove_reference<decltype(*dst)>::type;
                if (n == 0) return;
                CUDA_OK(cudaMalloc((void**)&dst, n * sizeof(T)));
                CUDA_OK(cudaMemcpyAsync(dst, src, n * sizeof(T), cudaMemcpyHostToDevice, gpu[2]));
            };
            static_assert(sizeof(affine_t::mem_t) == 96, "G1 affine is 96 bytes");
            static_assert(sizeof(affine2_t::mem_t) == 192, "G2 affine is 192 bytes");
            up(srs->h, h, nh);
            up(srs->l, l, nl);
            up(srs->a, a, na);
            up(srs->b_g1, b_g1, nb1);
            up(srs->b_g2, b_g2, nb2);
            gpu[2].sync();
        } catch (...) {
            delete srs;
            throw;
        }
        *out = srs;
    CUZK_CATCH
}

// Allocates device `dev`'s copy of an SRS with these section lengths, to be filled by
// cuzk_srs_write (a window at a time, as the host reads them from the parameter file).
RustError::by_value cuzk_srs_alloc(int dev, size_t nh, size_t nl, size_t na, size_t nb1,
                                   size_t nb2, cuzk_srs** out)
{
    CUZK_TRY
        *out = nullptr;
        (void)select_gpu(dev);
        auto* srs = new cuzk_srs;
        srs->dev = dev;
        srs->nh = nh; srs->nl = nl; srs->na = na; srs->nb1 = nb1; srs->nb2 = nb2;
        try {
            auto alloc = [&](auto*& dst, size_t n) {
                using T = typename std::remove_reference<decltype(*dst)>::type;
                if (n == 0) return;
                CUDA_OK(cudaMalloc((void**)&dst, n * sizeof(T)));
            };
            alloc(srs->h, nh);
            alloc(srs->l, nl);
            alloc(srs->a, na);
            alloc(srs->b_g1, nb1);
            alloc(srs->b_g2, nb2);
        } catch (...) {
            delete srs;
            throw;
        }
        *out = srs;
    CUZK_CATCH
}

// Copies `n` points from host `src` to points start..start+n of section `section` (0 h, 1 l,
// 2 a, 3 b_g1: G1; 4 b_g2: G2) of a copy made by cuzk_srs_alloc, and waits for the copy. The
// caller holds the device's interlock (the copy uses sppark's streams).
RustError::by_value cuzk_srs_write(cuzk_srs* srs, int section, size_t start, const void* src,
                                   size_t n)
{
    CUZK_TRY
        CUZK_REQUIRE(srs != nullptr, "no SRS copy");
        const gpu_t& gpu = select_gpu(srs->dev);
        void* base = nullptr;
        size_t count = 0, size = 0;
        switch (section) {
        case 0: base = srs->h; count = srs->nh; size = sizeof(affine_t::mem_t); break;
        case 1: base = srs->l; count = srs->nl; size = sizeof(affine_t::mem_t); break;
        case 2: base = srs->a; count = srs->na; size = sizeof(affine_t::mem_t); break;
        case 3: base = srs->b_g1; count = srs->nb1; size = sizeof(affine_t::mem_t); break;
        case 4: base = srs->b_g2; count = srs->nb2; size = sizeof(affine2_t::mem_t); break;
        default: CUZK_REQUIRE(false, "no such SRS section");
        }
        CUZK_REQUIRE(start <= count && n <= count - start, "SRS window past its section");
        if (n > 0) {
            CUDA_OK(cudaMemcpyAsync((char*)base + start * size, src, n * size,
                                    cudaMemcpyHostToDevice, gpu[2]));
            gpu[2].sync();
        }
    CUZK_CATCH
}

void cuzk_srs_destroy(cuzk_srs* srs)
{
    try { delete srs; } catch (...) {}
}

// A filler for `srs` (srs_wire.cuh): two page-locked staging slots of `slot_bytes` each,
// whose host addresses go to `slots`. Destroy it before `srs`. Needs no interlock: it copies
// and decodes on a stream of its own.
RustError::by_value cuzk_srs_filler_create(cuzk_srs* srs, size_t slot_bytes, uint8_t** slots,
                                           cuzk_srs_filler** out)
{
    CUZK_TRY
        *out = nullptr;
        CUZK_REQUIRE(srs != nullptr && slot_bytes > 0, "no SRS copy, or empty slots");
        auto* f = new cuzk_srs_filler;
        f->srs = srs;
        f->dev = srs->dev;
        f->slot_bytes = slot_bytes;
        try {
            srs_filler_init(f);
        } catch (...) {
            delete f;
            throw;
        }
        for (int k = 0; k < cuzk_srs_filler::slots; k++)
            slots[k] = f->host[k];
        *out = f;
    CUZK_CATCH
}

// Waits for slot `slot`'s last window to be copied and decoded; *first_bad is the lowest
// index it refused, ~0 for none (also for a slot never used).
RustError::by_value cuzk_srs_filler_wait(cuzk_srs_filler* f, int slot, uint64_t* first_bad)
{
    CUZK_TRY
        CUZK_REQUIRE(f != nullptr && slot >= 0 && slot < cuzk_srs_filler::slots, "no such slot");
        (void)select_gpu(f->dev);
        CUDA_OK(cudaEventSynchronize(f->done[slot]));
        *first_bad = f->host_bad[slot];
        f->host_bad[slot] = ~0ull;
    CUZK_CATCH
}

// Copies the first n points of slot `slot` (filled by the host) to points start..start+n of
// `section` and decodes them there, without waiting; the slot may be filled again once
// cuzk_srs_filler_wait returned for it.
RustError::by_value cuzk_srs_filler_submit(cuzk_srs_filler* f, int slot, int section,
                                           size_t start, size_t n)
{
    CUZK_TRY
        CUZK_REQUIRE(f != nullptr, "no filler");
        srs_filler_submit(f, slot, section, start, n);
    CUZK_CATCH
}

void cuzk_srs_filler_destroy(cuzk_srs_filler* f)
{
    try { delete f; } catch (...) {}
}

// Allocates device `dev`'s copy of one compiled circuit's A, B, C (compressed rows: rows + 1
// row starts, nterms[i] columns and coefficient indices each) and copies its coefficient
// table; the arrays are then filled a window at a time (cuzk_matrices_write). The caller
// holds the device's interlock (the copies use sppark's streams).
RustError::by_value cuzk_matrices_alloc(int dev, size_t rows, const size_t* nterms,
                                        const fr_t* table, size_t ntable, size_t ninputs,
                                        size_t naux, cuzk_matrices** out)
{
    CUZK_TRY
        *out = nullptr;
        const gpu_t& gpu = select_gpu(dev);
        CUZK_REQUIRE(ntable >= 2 && ninputs >= 1 && naux < CUZK_AUX_BIT, "matrices shape");
        auto* mt = new cuzk_matrices;
        mt->dev = dev;
        mt->rows = rows; mt->ninputs = ninputs; mt->naux = naux; mt->ntable = ntable;
        try {
            auto alloc = [&](auto*& dst, size_t bytes) {
                if (bytes > 0) CUDA_OK(cudaMalloc((void**)&dst, bytes));
            };
            for (int i = 0; i < 3; i++) {
                mt->nterms[i] = nterms[i];
                alloc(mt->row_start[i], (rows + 1) * sizeof(uint32_t));
                alloc(mt->cols[i], nterms[i] * sizeof(uint32_t));
                alloc(mt->coeffs[i], nterms[i] * sizeof(uint32_t));
            }
            alloc(mt->table, ntable * sizeof(fr_t));
            CUDA_OK(cudaMemcpyAsync(mt->table, table, ntable * sizeof(fr_t),
                                    cudaMemcpyHostToDevice, gpu[2]));
            gpu[2].sync();
        } catch (...) {
            delete mt;
            throw;
        }
        *out = mt;
    CUZK_CATCH
}

// Copies values [start, start + n) of matrix `matrix`'s array `array` (0 row starts, 1
// columns, 2 coefficient indices) from host memory. The caller holds the interlock and has
// checked the values against the circuit's shape; the copy is done when this returns.
RustError::by_value cuzk_matrices_write(cuzk_matrices* m, int matrix, int array, size_t start,
                                        const uint32_t* src, size_t n)
{
    CUZK_TRY
        CUZK_REQUIRE(m != nullptr && matrix >= 0 && matrix < 3 && array >= 0 && array < 3,
                     "matrices window");
        const gpu_t& gpu = select_gpu(m->dev);
        uint32_t* dst = array == 0 ? m->row_start[matrix]
                      : array == 1 ? m->cols[matrix] : m->coeffs[matrix];
        size_t len = array == 0 ? m->rows + 1 : m->nterms[matrix];
        CUZK_REQUIRE(start <= len && n <= len - start, "matrices window past its array");
        if (n > 0) {
            CUDA_OK(cudaMemcpyAsync(dst + start, src, n * sizeof(uint32_t),
                                    cudaMemcpyHostToDevice, gpu[2]));
            gpu[2].sync();
        }
    CUZK_CATCH
}

void cuzk_matrices_destroy(cuzk_matrices* m)
{
    try { delete m; } catch (...) {}
}

RustError::by_value cuzk_worker_create(int dev, cuzk_worker** out)
{
    CUZK_TRY
        *out = nullptr;
        (void)select_gpu(dev);
        *out = new cuzk_worker(dev);
    CUZK_CATCH
}

void cuzk_worker_destroy(cuzk_worker* w)
{
    try {
        if (w) { (void)select_gpu(w->dev); delete w; }
    } catch (...) {}
}

// Non-exclusive: stages a/b/c and the query plans to the device on the worker's copy stream.
// Returns when the host buffers may be freed.
RustError::by_value cuzk_worker_upload(cuzk_worker* w, const cuzk_input_t* in)
{
    CUZK_TRY
        CUZK_REQUIRE(w != nullptr, "no worker context");
        (void)select_gpu(w->dev);
        w->ready = false;
        CUZK_REQUIRE(in->lg_domain >= 1 && in->lg_domain <= 31, "domain size");
        size_t n = (size_t)1 << in->lg_domain;
        CUZK_REQUIRE(in->abc_len <= n, "a/b/c longer than the domain");
        CUZK_REQUIRE(in->stream_chunk % 1024 == 0, "stream chunk not a multiple of 1024 bases");
        w->stream_chunk = in->stream_chunk;
        if (in->stream_chunk) {
            // sized for G2 bases, the larger ones
            for (auto& b : w->chunk_buf)
                b.ensure(in->stream_chunk * sizeof(affine2_t::mem_t));
        }
        w->abc.ensure(3 * n * sizeof(fr_t));
        fr_t* d = w->abc.as<fr_t>();
        int slot = 0;
        w->deferred = in->deferred != 0;
        w->early_ones = in->early_ones != 0;
        w->queued = in->queued != 0;
        w->sorted_h = in->sorted_h != 0;
        w->pending = false;
        if (w->deferred) {
            // a/b/c are made in compute; stage the witness: inputs into z, the others
            // unless the L query's buffers hold them already
            const cuzk_witness_t& wt = in->wit;
            CUZK_REQUIRE(in->abc_len == wt.nconstraints + wt.ninputs, "a/b/c length of the witness");
            CUZK_REQUIRE(in->l.nbases == wt.naux, "the L query is not over the aux variables");
            CUZK_REQUIRE(!wt.ones || wt.ones == in->l.ones_bits, "witness bits are not the L query's");
            CUZK_REQUIRE(wt.ninputs >= 1 && wt.naux < CUZK_AUX_BIT, "witness shape");
            size_t nz = wt.ninputs + wt.naux;
            w->z.ensure(nz * sizeof(fr_t));
            w->cls.ensure(nz);
            w->upload(w->z.ptr, wt.inputs, wt.ninputs * sizeof(fr_t), slot);
            w->wit_own = !(wt.nothers == in->l.nothers && wt.idx == in->l.idx &&
                           wt.scalars == in->l.scalars);
            if (w->wit_own && wt.nothers) {
                w->wit_idx.ensure(wt.nothers * sizeof(uint32_t));
                w->wit_scalars.ensure(wt.nothers * sizeof(fr_t));
                w->upload(w->wit_idx.ptr, wt.idx, wt.nothers * sizeof(uint32_t), slot);
                w->upload(w->wit_scalars.ptr, wt.scalars, wt.nothers * sizeof(fr_t), slot);
            }
            w->wit_ones = wt.ones != nullptr;
            w->wit_ni = wt.ninputs;
            w->wit_naux = wt.naux;
            w->wit_rows = wt.nconstraints;
            w->wit_nothers = wt.nothers;
        } else {
            const fr_t* src[3] = {in->a, in->b, in->c};
            for (int i = 0; i < 3; i++) {
                if (in->abc_len)
                    w->upload(d + i * n, src[i], in->abc_len * sizeof(fr_t), slot);
                if (in->abc_len < n)
                    CUDA_OK(cudaMemsetAsync(d + i * n + in->abc_len, 0,
                                            (n - in->abc_len) * sizeof(fr_t), w->copy));
            }
        }
        prepare_query(*w, w->plan(query::l), in->l, slot);
        prepare_query(*w, w->plan(query::a), in->a_q, slot);
        prepare_query(*w, w->plan(query::b_g1), in->b_q, slot);
        CUDA_OK(cudaEventRecord(w->uploaded, w->copy));
        CUDA_OK(cudaStreamSynchronize(w->copy));
        w->lg_domain = in->lg_domain;
        std::memcpy((void*)&w->z_inv, (const void*)in->z_inv, sizeof(fr_t));
        w->ready = true;
    CUZK_CATCH
}

// Exclusive (the caller holds the device's interlock): H and all MSMs. The bases come from
// exactly one of `srs` (resident in VRAM) or `host` (streamed from host memory in chunks of
// the upload's stream_chunk bases, double-buffered so the next chunk's upload overlaps the
// current chunk's work; `host` must stay alive and unmodified until this returns).
RustError::by_value cuzk_worker_compute(cuzk_worker* w, const cuzk_srs* srs,
                                        const cuzk_host_srs_t* host,
                                        const cuzk_matrices* mats, cuzk_output_t* out)
{
    CUZK_TRY
        CUZK_REQUIRE(w != nullptr, "no worker context");
        CUZK_REQUIRE(w->ready, "compute without a prepared input");
        CUZK_REQUIRE((srs != nullptr) != (host != nullptr), "exactly one SRS source");
        CUZK_REQUIRE(!srs || srs->dev == w->dev, "SRS lives on another device");
        CUZK_REQUIRE(!host || w->stream_chunk, "streamed compute without a streaming upload");
        w->ready = false;
        const gpu_t& gpu = select_gpu(w->dev);
        auto t0 = std::chrono::steady_clock::now();
        CUDA_OK(cudaStreamWaitEvent(gpu[0], w->uploaded, 0));
        gpu[0].sync();
        out->ms_wait_upload = ms_since(t0);
        bases_t bases;
        bases.srs = srs;
        bases.host = host;
        gpu_phase(gpu, *w, bases, mats, (size_t)1 << w->lg_domain, out);
    CUZK_CATCH
}

// After cuzk_worker_compute, outside the interlock: the host sums of its MSMs (the queued
// ones' windows) and of the batch additions into out's points.
RustError::by_value cuzk_worker_finish(cuzk_worker* w, cuzk_output_t* out)
{
    CUZK_TRY
        CUZK_REQUIRE(w != nullptr, "no worker context");
        finish_phase(select_gpu(w->dev), *w, out);
    CUZK_CATCH
}

// Diagnostics: Σ scalars[i]·bases[i mod m] over n points on device `dev` (G2 bases when
// `g2`), by sppark's msm_t into *ref, by the queued MSM into *got and, in G1, by the sorted
// MSM into *own (cuzk_jac1_t, or cuzk_jac2_t for G2; own unused there); ms[6]: their median
// wall and device times over `runs` timed runs (compare_msm). The caller holds the device's
// interlock (all use sppark's streams).
RustError::by_value cuzk_msm_compare(int dev, int g2, const void* bases, size_t m,
                                     const fr_t* scalars, size_t n, uint32_t runs, void* ref,
                                     void* got, void* own, double* ms)
{
    CUZK_TRY
        CUZK_REQUIRE(m >= 1 && n >= 1 && n < ((size_t)1 << 31), "point count");
        const gpu_t& gpu = select_gpu(dev);
#ifndef __CUDA_ARCH__
        static_assert(sizeof(point_t) == sizeof(cuzk_jac1_t), "G1 Jacobian layout");
        static_assert(sizeof(point2_t) == sizeof(cuzk_jac2_t), "G2 Jacobian layout");
#endif
        if (g2)
            compare_msm<bucket2_t, point2_t, affine2_t, g2_raw>(gpu, bases, m, scalars, n, runs,
                                                               ref, got, nullptr, ms);
        else
            compare_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, bases, m, scalars, n, runs,
                                                            ref, got, own, ms);
    CUZK_CATCH
}

// Diagnostics: H from a | b | c (3·2^lg scalars) by six NTTs and by seven (h_compare.cuh),
// into `six` and `seven` (2^lg scalars each), with their median device times in ms[0..2].
RustError::by_value cuzk_h_compare(int dev, uint32_t lg, const fr_t* abc, const fr_t* z_inv,
                                   uint32_t runs, fr_t* six, fr_t* seven, double* ms)
{
    CUZK_TRY
        CUZK_REQUIRE(lg >= 1 && lg <= 28, "domain size");
        const gpu_t& gpu = select_gpu(dev);
        compare_h(gpu, lg, abc, *z_inv, runs, six, seven, ms);
    CUZK_CATCH
}

// Diagnostics: the device bytes the sorted MSM allocates for n points (CUB's temporaries
// as device `dev` sizes them), for the test of the sizing model.
RustError::by_value cuzk_sorted_msm_bytes(int dev, size_t n, size_t* bytes)
{
    CUZK_TRY
        (void)select_gpu(dev);
        CUZK_REQUIRE(n < ((size_t)1 << 31), "point count");
        *bytes = sorted_msm<bucket_t, point_t, affine_t>::device_bytes(n);
    CUZK_CATCH
}

// Page-locks [p, p + bytes) for DMA from every device (portable registration). *code is the
// CUDA error (0: registered); a failure is not an error of this call, the caller falls back
// to staging copies.
RustError::by_value cuzk_host_register(int dev, const void* p, size_t bytes, int* code)
{
    CUZK_TRY
        *code = -1;
        (void)select_gpu(dev);
        cudaError_t e = cudaHostRegister(const_cast<void*>(p), bytes, cudaHostRegisterPortable);
        if (e != cudaSuccess)
            (void)cudaGetLastError();
        *code = (int)e;
    CUZK_CATCH
}

// Undoes cuzk_host_register (before the memory is freed).
void cuzk_host_unregister(int dev, const void* p)
{
    try {
        (void)select_gpu(dev);
        if (cudaHostUnregister(const_cast<void*>(p)) != cudaSuccess)
            (void)cudaGetLastError();
    } catch (...) {}
}

// ---------------------------------------------------------------------------------------
// Fixed-base multiplication for the insecure setup (fixed_base.cuh)

// Uploads generator G's window table (`len` affine points of G1, or G2 when `g2`, as blstrs
// holds them) to device `dev`.
RustError::by_value cuzk_fixed_base_create(int dev, int g2, const void* table, size_t len,
                                           uint32_t window, cuzk_fixed_base** out)
{
    CUZK_TRY
        *out = nullptr;
        CUZK_REQUIRE(window >= 2 && window <= 16, "window of 2 to 16 bits");
        const uint32_t windows = (256 + window - 1) / window;
        CUZK_REQUIRE(len == (size_t)windows << (window - 1), "table length");
        (void)select_gpu(dev);
        auto* fb = new cuzk_fixed_base{};
        fb->dev = dev;
        fb->g2 = g2;
        fb->window = window;
        fb->windows = windows;
        try {
            const size_t bytes = len * (g2 ? sizeof(affine2_t::mem_t) : sizeof(affine_t::mem_t));
            CUDA_OK(cudaStreamCreateWithFlags(&fb->stream, cudaStreamNonBlocking));
            CUDA_OK(cudaMalloc(&fb->table, bytes));
            // (on its stream, waited for: cudaMemcpy from pageable memory may return before
            // its DMA lands, and the non-blocking stream would not wait for it)
            CUDA_OK(cudaMemcpyAsync(fb->table, table, bytes, cudaMemcpyHostToDevice, fb->stream));
            CUDA_OK(cudaStreamSynchronize(fb->stream));
        } catch (...) {
            if (fb->table) cudaFree(fb->table);
            if (fb->stream) cudaStreamDestroy(fb->stream);
            delete fb;
            throw;
        }
        *out = fb;
    CUZK_CATCH
}

// out[i] = the encoding of scalars[i]·G (96 bytes in G1, 192 in G2), for i < n; waits.
RustError::by_value cuzk_fixed_base_run(cuzk_fixed_base* fb, const fr_t* scalars, size_t n,
                                        uint8_t* out)
{
    CUZK_TRY
        CUZK_REQUIRE(fb != nullptr, "no fixed-base context");
        if (n == 0)
            return RustError{0};
        (void)select_gpu(fb->dev);
        const size_t point = fb->g2 ? 192 : 96;
        if (n > fb->cap) {
            if (fb->scalars) CUDA_OK(cudaFree(fb->scalars));
            if (fb->out) CUDA_OK(cudaFree(fb->out));
            fb->scalars = nullptr;
            fb->out = nullptr;
            fb->cap = 0;
            CUDA_OK(cudaMalloc(&fb->scalars, n * sizeof(fr_t)));
            CUDA_OK(cudaMalloc(&fb->out, n * point));
            fb->cap = n;
        }
        CUDA_OK(cudaMemcpyAsync(fb->scalars, scalars, n * sizeof(fr_t), cudaMemcpyHostToDevice,
                                fb->stream));
        if (fb->g2)
            fixed_base_launch<fp2_t, 2>(fb, n);
        else
            fixed_base_launch<fp_t, 1>(fb, n);
        CUDA_OK(cudaMemcpyAsync(out, fb->out, n * point, cudaMemcpyDeviceToHost, fb->stream));
        CUDA_OK(cudaStreamSynchronize(fb->stream));
    CUZK_CATCH
}

void cuzk_fixed_base_destroy(cuzk_fixed_base* fb)
{
    if (fb == nullptr)
        return;
    try {
        (void)select_gpu(fb->dev);
    } catch (...) {
    }
    if (fb->scalars) cudaFree(fb->scalars);
    if (fb->out) cudaFree(fb->out);
    if (fb->table) cudaFree(fb->table);
    if (fb->stream) cudaStreamDestroy(fb->stream);
    delete fb;
}

} // extern "C"
