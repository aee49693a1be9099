// cuzk CUDA kernels and their C ABI: the Groth16 `start` phase on one device (H via NTTs,
// split G1/G2 MSMs over device-resident SRS bases), built on sppark's NTT and Pippenger.
//
// FFI contract: every extern "C" entry catches C++ exceptions and returns a by-value
// RustError {code, message}; CUDA calls go through CUDA_OK, whose message is expr@file:line.

#include <cstdint>
#include <cstring>
#include <chrono>
#include <vector>
#include <string>
#include <stdexcept>

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

// ---------------------------------------------------------------------------------------
// Kernels

struct g1_raw { uint4 v[6]; };   // an affine G1 point as stored (96 bytes)
struct g2_raw { uint4 v[12]; };  // an affine G2 point as stored (192 bytes)

template<class T>
__global__ void cuzk_gather(T* out, const T* in, const uint32_t* idx, size_t n)
{
    size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x;
    for (; i < n; i += (size_t)blockDim.x * gridDim.x)
        out[i] = in[idx[i]];
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
    const uint64_t* ones_bits;  // bitmap over the query's bases: scalar == 1 (may be null)
    size_t ones_words;          // u64 words in ones_bits
    const uint32_t* idx;        // bases whose scalar is neither 0 nor 1
    const fr_t* scalars;        // their scalars (Montgomery form)
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
};

struct cuzk_jac1_t { uint64_t x[6], y[6], z[6]; };
struct cuzk_jac2_t { uint64_t x[12], y[12], z[12]; };

struct cuzk_output_t {
    cuzk_jac1_t h, l, a, b_g1;
    cuzk_jac2_t b_g2;
    // Milliseconds spent in each phase of the exclusive part.
    double ms_wait_upload, ms_ntt_h, ms_msm_h, ms_msm_l, ms_msm_a, ms_msm_b_g1, ms_msm_b_g2;
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
// Per-worker state: its own copy stream, staging buffers and device buffers.

struct cuzk_query_dev {
    dbuf bits, idx, scalars;
    size_t ones_words = 0, nothers = 0;
};

struct cuzk_worker {
    int dev;
    stream_t copy;
    static const size_t STAGE_BYTES = (size_t)32 << 20;
    void* stage[2] = {nullptr, nullptr};
    cudaEvent_t stage_ev[2] = {nullptr, nullptr};
    cudaEvent_t uploaded = nullptr;

    dbuf abc;           // a | b | c, each 1 << lg_domain scalars
    cuzk_query_dev q[3];
    dbuf gathered;      // points of the non-0/1 scalars of one query
    dbuf partial;       // batch-addition partial sums

    // the prepared input
    uint32_t lg_domain = 0;
    const fr_t* z_inv_host = nullptr;
    fr_t z_inv;
    bool ready = false;

    explicit cuzk_worker(int d) : dev(d), copy(d)
    {
        for (int i = 0; i < 2; i++) {
            CUDA_OK(cudaHostAlloc(&stage[i], STAGE_BYTES, cudaHostAllocPortable));
            CUDA_OK(cudaEventCreateWithFlags(&stage_ev[i], cudaEventDisableTiming));
        }
        CUDA_OK(cudaEventCreateWithFlags(&uploaded, cudaEventDisableTiming));
    }
    ~cuzk_worker()
    {
        (void)cudaStreamSynchronize(copy);
        for (int i = 0; i < 2; i++) {
            if (stage[i]) (void)cudaFreeHost(stage[i]);
            if (stage_ev[i]) (void)cudaEventDestroy(stage_ev[i]);
        }
        if (uploaded) (void)cudaEventDestroy(uploaded);
        abc.release(); gathered.release(); partial.release();
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
    qd.ones_words = q.ones_bits ? q.ones_words : 0;
    qd.nothers = q.nothers;
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

// Σ scalar_i·P_i over one query, bases resident on the device.
template<class bucket_t_, class point_t_, class affine_t_, class raw_t>
static void split_msm(const gpu_t& gpu, cuzk_worker& w, const cuzk_query_dev& qd,
                      const typename affine_t_::mem_t* bases, size_t nbases, point_t_& out)
{
    out.inf();
    stream_t& s = gpu[0];

    if (qd.ones_words) {
        CUZK_REQUIRE(qd.ones_words == (nbases + 63) / 64,
                     "ones bitmap does not match the bases");
        CUZK_REQUIRE(nbases < ((size_t)1 << 32), "too many bases for batch addition");
        const uint32_t nret = gpu.sm_count() * BATCH_ADD_BLOCK_SIZE / WARP_SZ;
        w.partial.ensure(nret * sizeof(typename bucket_t_::mem_t));
        void (*kernel)(typename bucket_t_::mem_t*, const typename affine_t_::mem_t*, uint32_t,
                       const uint32_t*, bool, uint32_t) = batch_addition<bucket_t_>;
        uint32_t npts = (uint32_t)nbases;
        s.launch_coop(kernel, {gpu.sm_count(), BATCH_ADD_BLOCK_SIZE},
                      w.partial.as<typename bucket_t_::mem_t>(), bases, npts,
                      (const uint32_t*)qd.bits.ptr, false, (uint32_t)0);
        std::vector<bucket_t_> partial(nret);
        s.DtoH(&partial[0], w.partial.ptr, nret);
        s.sync();
        point_t_ ones = sum_up(partial);
        out.add(ones);
    }

    if (qd.nothers) {
        w.gathered.ensure(qd.nothers * sizeof(raw_t));
        cuzk_gather<raw_t><<<gpu.sm_count() * 4, 256, 0, s>>>(
            w.gathered.as<raw_t>(), reinterpret_cast<const raw_t*>(bases),
            qd.idx.as<uint32_t>(), qd.nothers);
        CUDA_OK(cudaGetLastError());
        s.sync();

        msm_t<bucket_t_, point_t_, affine_t_, scalar_t> msm{nullptr, qd.nothers, sizeof(affine_t_), gpu.id()};
        point_t_ others;
        CUZK_CHECK((msm.invoke(others,
                               dev_ptr_t<affine_t_>(w.gathered.as<affine_t_>()),
                               qd.nothers,
                               dev_ptr_t<scalar_t>(qd.scalars.as<scalar_t>()),
                               true)));
        out.add(others);
    }
}

template<class jac_t, class out_t>
static void put(out_t& dst, const jac_t& src)
{
#ifndef __CUDA_ARCH__
    static_assert(sizeof(jac_t) == sizeof(out_t), "point layout");
#endif
    std::memcpy(&dst, &src, sizeof(out_t));
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

void cuzk_srs_destroy(cuzk_srs* srs)
{
    try { delete srs; } catch (...) {}
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
        (void)select_gpu(w->dev);
        w->ready = false;
        CUZK_REQUIRE(in->lg_domain >= 1 && in->lg_domain <= 31, "domain size");
        size_t n = (size_t)1 << in->lg_domain;
        CUZK_REQUIRE(in->abc_len <= n, "a/b/c longer than the domain");
        w->abc.ensure(3 * n * sizeof(fr_t));
        fr_t* d = w->abc.as<fr_t>();
        int slot = 0;
        const fr_t* src[3] = {in->a, in->b, in->c};
        for (int i = 0; i < 3; i++) {
            if (in->abc_len)
                w->upload(d + i * n, src[i], in->abc_len * sizeof(fr_t), slot);
            if (in->abc_len < n)
                CUDA_OK(cudaMemsetAsync(d + i * n + in->abc_len, 0,
                                        (n - in->abc_len) * sizeof(fr_t), w->copy));
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

// Exclusive (the caller holds the device's interlock): H and all MSMs.
RustError::by_value cuzk_worker_compute(cuzk_worker* w, const cuzk_srs* srs, cuzk_output_t* out)
{
    CUZK_TRY
        CUZK_REQUIRE(w->ready, "compute without a prepared input");
        CUZK_REQUIRE(srs->dev == w->dev, "SRS lives on another device");
        w->ready = false;
        const gpu_t& gpu = select_gpu(w->dev);
        size_t n = (size_t)1 << w->lg_domain;
        CUZK_REQUIRE(srs->nh + 1 == n, "H bases do not match the domain");
        fr_t* d_a = w->abc.as<fr_t>();
        fr_t* d_b = d_a + n;
        fr_t* d_c = d_b + n;

        auto t0 = std::chrono::steady_clock::now();
        CUDA_OK(cudaStreamWaitEvent(gpu[0], w->uploaded, 0));
        gpu[0].sync();
        out->ms_wait_upload = ms_since(t0);

        // H = icoset((coset(ifft a) * coset(ifft b) - coset(ifft c)) / Z)
        t0 = std::chrono::steady_clock::now();
        {
            stream_t& s = gpu[0];
            uint32_t lg = w->lg_domain;
            for (fr_t* p : {d_a, d_b, d_c}) {
                NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::NR,
                                  NTT::Direction::inverse, NTT::Type::standard);
                NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::RN,
                                  NTT::Direction::forward, NTT::Type::coset);
            }
            cuzk_mul_assign<<<gpu.sm_count() * 2, 1024, 0, s>>>(d_a, d_b, n);
            CUDA_OK(cudaGetLastError());
            cuzk_sub_scale<<<gpu.sm_count() * 2, 1024, 0, s>>>(d_a, d_c, w->z_inv, n);
            CUDA_OK(cudaGetLastError());
            NTT::Base_dev_ptr(s, d_a, lg, NTT::InputOutputOrder::NN,
                              NTT::Direction::inverse, NTT::Type::coset);
            s.sync();
        }
        out->ms_ntt_h = ms_since(t0);

        t0 = std::chrono::steady_clock::now();
        {
            point_t h;
            h.inf();
            if (srs->nh) {
                msm_t<bucket_t, point_t, affine_t, scalar_t> msm{nullptr, srs->nh, sizeof(affine_t), gpu.id()};
                // (pass affine_t, not affine_t::mem_t: sppark's device-pointer overload only
                // forwards to the worker overload for affine_t pointers)
                CUZK_CHECK((msm.invoke(h, dev_ptr_t<affine_t>(reinterpret_cast<affine_t*>(srs->h)), srs->nh,
                                       dev_ptr_t<scalar_t>(d_a), true)));
            }
            put(out->h, h);
        }
        out->ms_msm_h = ms_since(t0);

        point_t p;
        t0 = std::chrono::steady_clock::now();
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[0], srs->l, srs->nl, p);
        put(out->l, p);
        out->ms_msm_l = ms_since(t0);

        t0 = std::chrono::steady_clock::now();
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[1], srs->a, srs->na, p);
        put(out->a, p);
        out->ms_msm_a = ms_since(t0);

        t0 = std::chrono::steady_clock::now();
        split_msm<bucket_t, point_t, affine_t, g1_raw>(gpu, *w, w->q[2], srs->b_g1, srs->nb1, p);
        put(out->b_g1, p);
        out->ms_msm_b_g1 = ms_since(t0);

        t0 = std::chrono::steady_clock::now();
        point2_t p2;
        split_msm<bucket2_t, point2_t, affine2_t, g2_raw>(gpu, *w, w->q[2], srs->b_g2, srs->nb2, p2);
        put(out->b_g2, p2);
        out->ms_msm_b_g2 = ms_since(t0);
    CUZK_CATCH
}

} // extern "C"
