// kernels.cuh: the element-wise kernels: gather and tile of bases, the H quotient steps, the
// compact witness expanded, and the sparse matrix-vector products of a/b/c.
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

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
