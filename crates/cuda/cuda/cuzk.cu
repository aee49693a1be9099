// cuzk CUDA kernels and their C ABI: the Groth16 `start` phase on one device (H via NTTs,
// split G1/G2 MSMs over SRS bases that are either resident in VRAM or streamed per proof
// from host memory in double-buffered chunks), built on sppark's NTT and Pippenger.
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

// ---------------------------------------------------------------------------------------
// Error plumbing

#define CUZK_TRY try {
#define CUZK_CATCH                                                                    \
    } catch (const cuda_error& e) {                                                   \
        return RustError{e.code() ? e.code() : 1, e.what()};                          \
    } catch (const std::exception& e) {                                               \
        return RustError{2, e.what()};                                                \
    } catch (...) {                                                                   \
        return RustError{3, "unknown C++ exception"};                                 \
    }                                                                                 \
    return RustError{0};

#define CUZK_CHECK(rust_error_expr) do {                                              \
    RustError _e = (rust_error_expr);                                                 \
    if (_e.code != 0) {                                                               \
        std::string _m = std::string(#rust_error_expr) + "@" + __FILE__ + ":" +       \
                         std::to_string(__LINE__) + ": " +                            \
                         (_e.message ? _e.message : "sppark error");                  \
        if (_e.message) free(_e.message);                                             \
        throw cuda_error{_e.code, _m};                                                \
    }                                                                                 \
} while (0)

#define CUZK_REQUIRE(cond, msg) do {                                                  \
    if (!(cond))                                                                      \
        throw cuda_error{4, std::string(msg) + " (" #cond ")@" + __FILE__ + ":" +     \
                            std::to_string(__LINE__)};                                \
} while (0)

#include "queued_msm.cuh"
#include "fixed_base.cuh"

// ---------------------------------------------------------------------------------------
// Kernels

struct g1_raw { uint4 v[6]; };   // an affine G1 point as stored (96 bytes)
struct g2_raw { uint4 v[12]; };  // an affine G2 point as stored (192 bytes)

// out[i] = in[idx[i] - first]: `in` holds the bases from index `first` on (a streamed chunk;
// 0 for resident bases).
template<class T>
__global__ void cuzk_gather(T* out, const T* in, const uint32_t* idx, size_t n, size_t first)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[idx[i] - first];
}

// out[i] = in[i mod m] for i < n (the MSM comparison's bases).
template<class T>
__global__ void cuzk_tile(T* out, const T* in, size_t m, size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[i % m];
}

__launch_bounds__(1024)
__global__ void cuzk_mul_assign(fr_t* a, const fr_t* b, size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        a[i] = a[i] * b[i];
}

__launch_bounds__(1024)
__global__ void cuzk_sub_scale(fr_t* a, const fr_t* c, fr_t z_inv, size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x) {
        fr_t t = a[i] - c[i];
        a[i] = t * z_inv;
    }
}

// Deferred a/b/c (the matrices resident, see cuzk_matrices): the witness z = inputs | aux is
// rebuilt on the device from the L plan (aux bits equal to 1, and the others' indices and
// values), with a value class per variable (0, 1, other) so that terms on 0 and 1 need no
// multiplication; then each matrix row is one thread's sum over its terms.
#define CUZK_AUX_BIT 0x80000000u
#define CUZK_COEFF_ONE 0u
#define CUZK_COEFF_MINUS_ONE 1u

// z[ni + i] = aux i as 0 or 1 (from `ones`, null: all 0), cls likewise; inputs are "other".
__global__ void cuzk_expand_bits(fr_t* z, uint8_t* cls, size_t ni, size_t naux,
                                 const uint64_t* ones)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < ni + naux; i += (size_t)blockDim.x * gridDim.x) {
        if (i < ni) { cls[i] = 2; continue; }
        size_t k = i - ni;
        bool one = ones && ((ones[k / 64] >> (k % 64)) & 1);
        if (one) z[i] = fr_t::one(); else z[i].zero();
        cls[i] = one ? 1 : 0;
    }
}

// z[ni + idx[k]] = scalars[k], class "other".
__global__ void cuzk_scatter_others(fr_t* z, uint8_t* cls, size_t ni, const uint32_t* idx,
                                    const fr_t* scalars, size_t n)
{
    size_t k = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; k < n; k += (size_t)blockDim.x * gridDim.x) {
        size_t i = ni + idx[k];
        z[i] = scalars[k];
        cls[i] = 2;
    }
}

// out[r] = Σ_t table[coeffs[t]] · z[col(t)] over row r's terms.
__launch_bounds__(256)
__global__ void cuzk_spmv(fr_t* out, const uint32_t* row_start, const uint32_t* cols,
                          const uint32_t* coeffs, const fr_t* table, const fr_t* z,
                          const uint8_t* cls, uint32_t ni, size_t rows)
{
    size_t r = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; r < rows; r += (size_t)blockDim.x * gridDim.x) {
        fr_t acc; acc.zero();
        uint32_t t1 = row_start[r + 1];
        for (uint32_t t = row_start[r]; t < t1; t++) {
            uint32_t col = cols[t];
            size_t v = (col & CUZK_AUX_BIT) ? (size_t)ni + (col & ~CUZK_AUX_BIT) : (size_t)col;
            uint8_t c = cls[v];
            if (c == 0) continue;
            uint32_t k = coeffs[t];
            if (c == 1) {
                if (k == CUZK_COEFF_ONE) acc += fr_t::one();
                else if (k == CUZK_COEFF_MINUS_ONE) acc -= fr_t::one();
                else acc += table[k];
            } else {
                fr_t x = z[v];
                if (k == CUZK_COEFF_ONE) acc += x;
                else if (k == CUZK_COEFF_MINUS_ONE) acc -= x;
                else acc += x * table[k];
            }
        }
        out[r] = acc;
    }
}

// a[rows + j] = input j (bellperson's input constraints; b and c stay 0 there).
__global__ void cuzk_input_rows(fr_t* a, const fr_t* z, size_t ni)
{
    size_t j = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    if (j < ni) a[j] = z[j];
}

// ---------------------------------------------------------------------------------------
// Host helpers

namespace {

// A device buffer owned by one worker; grows, never shrinks.
struct dbuf {
    void* ptr = nullptr;
    size_t cap = 0;
    void ensure(size_t bytes)
    {
        if (bytes <= cap) return;
        if (ptr) CUDA_OK(cudaFree(ptr));
        ptr = nullptr; cap = 0;
        size_t sz = (bytes + 4095) & ~(size_t)4095;
        CUDA_OK(cudaMalloc(&ptr, sz));
        cap = sz;
    }
    void release()
    {
        if (ptr) (void)cudaFree(ptr);
        ptr = nullptr; cap = 0;
    }
    template<class T> T* as() const { return reinterpret_cast<T*>(ptr); }
};

thread_pool_t& staging_pool()
{
    static thread_pool_t pool;
    return pool;
}

// Where queued MSMs' window sums are made (cuzk_worker_finish).
thread_pool_t& sums_pool()
{
    static thread_pool_t pool;
    return pool;
}

double ms_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(
        std::chrono::steady_clock::now() - t0).count();
}

} // namespace

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

// One of A, B, C in compressed rows (see cuzk_groth16::compiled::MatrixView).
struct cuzk_matrix_t {
    const uint32_t* row_start;   // rows + 1
    const uint32_t* cols;
    const uint32_t* coeffs;
    size_t nterms;
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

// ---------------------------------------------------------------------------------------
// Device-resident SRS

struct cuzk_srs {
    int dev;
    size_t nh, nl, na, nb1, nb2;
    affine_t::mem_t *h = nullptr, *l = nullptr, *a = nullptr, *b_g1 = nullptr;
    affine2_t::mem_t *b_g2 = nullptr;
    ~cuzk_srs()
    {
        const gpu_t& gpu = select_gpu(dev);
        gpu.sync();
        for (void* p : {(void*)h, (void*)l, (void*)a, (void*)b_g1, (void*)b_g2})
            if (p) (void)cudaFree(p);
    }
};

// ---------------------------------------------------------------------------------------
// Device-resident constraint matrices of one compiled circuit

struct cuzk_matrices {
    int dev;
    size_t rows = 0, ninputs = 0, naux = 0, ntable = 0;
    uint32_t* row_start[3] = {nullptr, nullptr, nullptr};
    uint32_t* cols[3] = {nullptr, nullptr, nullptr};
    uint32_t* coeffs[3] = {nullptr, nullptr, nullptr};
    fr_t* table = nullptr;
    ~cuzk_matrices()
    {
        const gpu_t& gpu = select_gpu(dev);
        gpu.sync();
        for (int m = 0; m < 3; m++)
            for (void* p : {(void*)row_start[m], (void*)cols[m], (void*)coeffs[m]})
                if (p) (void)cudaFree(p);
        if (table) (void)cudaFree(table);
    }
};

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

// Regions of the batch-addition partial sums: L, A, B in G1, B in G2.
static const int ONES_REGIONS = 4;

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
    cuzk_query_dev q[3];
    dbuf gathered;      // points of the non-0/1 scalars of one query
    dbuf partial;       // batch-addition partial sums

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

    // Queued MSMs (cuzk_input_t::queued): H, L, A, B in G1, then B in G2, left by compute for
    // cuzk_worker_finish to sum from `sums_host` (page-locked, grown as needed, never shrunk:
    // a few MB per batch of each MSM), with the "scalar is 1" regions of ones_host still to
    // be summed; events along gpu[0] time the phases.
    bool queued = false;
    bool pending = false;
    queued_msm<bucket_t, point_t, affine_t> qm1[4];
    queued_msm<bucket2_t, point2_t, affine2_t> qm2;
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
        for (auto& x : q) { x.bits.release(); x.idx.release(); x.scalars.release(); }
    }

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

template<class jac_t, class out_t>
static void put(out_t& dst, const jac_t& src)
{
#ifndef __CUDA_ARCH__
    static_assert(sizeof(jac_t) == sizeof(out_t), "point layout");
#endif
    std::memcpy(&dst, &src, sizeof(out_t));
}

// Deferred: queues a/b/c = A·z, B·z, C·z on gpu[0] (then the input rows, then zeros to the
// domain of n) from the staged witness and the resident matrices.
static void queue_abc(const gpu_t& gpu, cuzk_worker& w, const cuzk_matrices* mats, size_t n)
{
    CUZK_REQUIRE(mats && mats->dev == w.dev, "deferred a/b/c without resident matrices");
    CUZK_REQUIRE(mats->rows == w.wit_rows && mats->ninputs == w.wit_ni &&
                 mats->naux == w.wit_naux, "the matrices do not match the witness");
    CUZK_REQUIRE(w.wit_rows + w.wit_ni <= n, "a/b/c longer than the domain");
    const stream_t& s = gpu[0];
    fr_t* d_a = w.abc.as<fr_t>();
    fr_t* z = w.z.as<fr_t>();
    uint8_t* cls = w.cls.as<uint8_t>();
    const uint32_t grid = gpu.sm_count() * 8;
    const uint64_t* ones = w.wit_ones ? w.q[0].bits.as<const uint64_t>() : nullptr;
    cuzk_expand_bits<<<grid, 256, 0, s>>>(z, cls, w.wit_ni, w.wit_naux, ones);
    CUDA_OK(cudaGetLastError());
    if (w.wit_nothers) {
        const uint32_t* idx = w.wit_own ? w.wit_idx.as<uint32_t>() : w.q[0].idx.as<uint32_t>();
        const fr_t* sc = w.wit_own ? w.wit_scalars.as<fr_t>() : w.q[0].scalars.as<fr_t>();
        cuzk_scatter_others<<<grid, 256, 0, s>>>(z, cls, w.wit_ni, idx, sc, w.wit_nothers);
        CUDA_OK(cudaGetLastError());
    }
    CUDA_OK(cudaMemsetAsync(d_a, 0, 3 * n * sizeof(fr_t), s));
    for (int m = 0; m < 3; m++) {
        cuzk_spmv<<<grid * 4, 256, 0, s>>>(d_a + m * n, mats->row_start[m], mats->cols[m],
                                           mats->coeffs[m], mats->table, z, cls,
                                           (uint32_t)w.wit_ni, w.wit_rows);
        CUDA_OK(cudaGetLastError());
    }
    cuzk_input_rows<<<(uint32_t)((w.wit_ni + 255) / 256), 256, 0, s>>>(d_a + w.wit_rows, z,
                                                                      w.wit_ni);
    CUDA_OK(cudaGetLastError());
}

// Queues H = icoset((coset(ifft a) * coset(ifft b) - coset(ifft c)) / Z) into a, on gpu[0].
static void queue_h_ntt(const gpu_t& gpu, cuzk_worker& w, size_t n)
{
    stream_t& s = gpu[0];
    fr_t* d_a = w.abc.as<fr_t>();
    fr_t* d_b = d_a + n;
    fr_t* d_c = d_b + n;
    uint32_t lg = w.lg_domain;
    for (fr_t* p : {d_a, d_b, d_c}) {
        NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::NR,
                          NTT::Direction::inverse, NTT::Type::standard);
        NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::RN,
                          NTT::Direction::forward, NTT::Type::coset);
    }
    cuzk_mul_assign<<<gpu.sm_count() * 2, 1024, 0, s>>>(d_a, d_b, n);
    CUDA_OK(cudaGetLastError());
    cuzk_sub_scale<<<gpu.sm_count() * 2, 1024, 0, s>>>(d_a, d_c, w.z_inv, n);
    CUDA_OK(cudaGetLastError());
    NTT::Base_dev_ptr(s, d_a, lg, NTT::InputOutputOrder::NN,
                      NTT::Direction::inverse, NTT::Type::coset);
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

// Copies one compiled circuit's A, B, C (compressed rows) and coefficient table to device
// `dev`. The caller holds the device's interlock (the copies use sppark's streams) and has
// checked every term: cols < ninputs (or AUX | index < naux), coeffs < ntable.
RustError::by_value cuzk_matrices_create(int dev, const cuzk_matrix_t* m, size_t rows,
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
            auto up = [&](auto*& dst, const void* src, size_t bytes) {
                if (bytes == 0) return;
                CUDA_OK(cudaMalloc((void**)&dst, bytes));
                CUDA_OK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, gpu[2]));
            };
            for (int i = 0; i < 3; i++) {
                CUZK_REQUIRE(m[i].row_start[0] == 0 && m[i].row_start[rows] == m[i].nterms,
                             "row starts do not match the terms");
                up(mt->row_start[i], m[i].row_start, (rows + 1) * sizeof(uint32_t));
                up(mt->cols[i], m[i].cols, m[i].nterms * sizeof(uint32_t));
                up(mt->coeffs[i], m[i].coeffs, m[i].nterms * sizeof(uint32_t));
            }
            up(mt->table, table, ntable * sizeof(fr_t));
            gpu[2].sync();
        } catch (...) {
            delete mt;
            throw;
        }
        *out = mt;
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
        prepare_query(*w, w->q[0], in->l, slot);
        prepare_query(*w, w->q[1], in->a_q, slot);
        prepare_query(*w, w->q[2], in->b_q, slot);
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
        size_t n = (size_t)1 << w->lg_domain;
        size_t nh = srs ? srs->nh : host->nh;
        CUZK_REQUIRE(nh + 1 == n, "H bases do not match the domain");
        auto t0 = std::chrono::steady_clock::now();
        CUDA_OK(cudaStreamWaitEvent(gpu[0], w->uploaded, 0));
        gpu[0].sync();
        out->ms_wait_upload = ms_since(t0);

        if (srs && w->queued)
            compute_queued(gpu, *w, *srs, mats, n, out);
        else
            compute_sync(gpu, w, srs, host, mats, n, nh, out);
    CUZK_CATCH
}

// After cuzk_worker_compute, outside the interlock: the host sums of a queued proof (the
// MSMs' windows and the batch additions) into out's points. Nothing to do after any other.
RustError::by_value cuzk_worker_finish(cuzk_worker* w, cuzk_output_t* out)
{
    CUZK_TRY
        CUZK_REQUIRE(w != nullptr, "no worker context");
        if (w->pending) {
            w->pending = false;
            const gpu_t& gpu = select_gpu(w->dev);
            thread_pool_t& pool = sums_pool();
            point_t g1[4];
            for (int i = 0; i < 4; i++)
                g1[i] = w->qm1[i].sum(pool);
            point2_t g2 = w->qm2.sum(pool);
            for (int r = 0; r < 3; r++)
                if (w->ones_pending[r])
                    g1[r + 1].add(point_t(ones_sum<bucket_t>(gpu, w->ones_host, r, w->ones_region)));
            if (w->ones_pending[3])
                g2.add(point2_t(ones_sum<bucket2_t>(gpu, w->ones_host, 3, w->ones_region)));
            put(out->h, g1[0]);
            put(out->l, g1[1]);
            put(out->a, g1[2]);
            put(out->b_g1, g1[3]);
            put(out->b_g2, g2);
        }
    CUZK_CATCH
}

// Diagnostics: Σ scalars[i]·bases[i mod m] over n points on device `dev` (G2 bases when
// `g2`), by sppark's msm_t into *ref and by the queued MSM into *got (cuzk_jac1_t, or
// cuzk_jac2_t for G2). The caller holds the device's interlock (both use sppark's streams).
RustError::by_value cuzk_msm_compare(int dev, int g2, const void* bases, size_t m,
                                     const fr_t* scalars, size_t n, void* ref, void* got)
{
    CUZK_TRY
        CUZK_REQUIRE(m >= 1 && n >= 1 && n < ((size_t)1 << 31), "point count");
        const gpu_t& gpu = select_gpu(dev);
#ifndef __CUDA_ARCH__
        static_assert(sizeof(point_t) == sizeof(cuzk_jac1_t), "G1 Jacobian layout");
        static_assert(sizeof(point2_t) == sizeof(cuzk_jac2_t), "G2 Jacobian layout");
#endif
        if (g2)
            compare_msm<bucket2_t, point2_t, affine2_t, g2_raw>(gpu, bases, m, scalars, n, ref, got);
        else
            compare_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, bases, m, scalars, n, ref, got);
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
            CUDA_OK(cudaMemcpy(fb->table, table, bytes, cudaMemcpyHostToDevice));
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
