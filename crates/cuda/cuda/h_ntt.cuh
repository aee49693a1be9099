// h_ntt.cuh: the H polynomial by six NTTs on the device.
//
// H = (A·B − C) / Z, Z = X^n − 1, from a, b, c (the evaluations of A, B, C over the domain).
// On the coset g·ω^i, Z is the constant g^n − 1, and a polynomial of degree below n is what
// the inverse transform of its n evaluations returns, on the domain or on the coset. So with
// T = icoset(coset A · coset B) (the polynomial of degree below n that agrees with A·B on the
// coset, by linearity of icoset),
//   H = icoset((coset A · coset B − coset C) / (g^n − 1)) = (T − ifft c) / (g^n − 1):
// C's coset evaluations are never needed, and its forward NTT is saved (six NTTs, not seven:
// ifft and coset of a and of b, icoset of the product, ifft of c). The identity is exact in
// the field, for any a, b, c (a witness that does not satisfy the circuit included): the
// coefficients are those of seven, bit for bit (`domain::quotient`, the host's, is the same).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

// sppark's bit reversal, protected in its NTT class.
struct cuzk_ntt : NTT {
    using NTT::bit_rev;
};

// Queues p (2^lg evaluations on the domain, natural order) → its evaluations on the coset
// (natural order), in place: ifft, then the coset NTT, no reversal pass between them.
static void queue_to_coset(stream_t& s, fr_t* p, uint32_t lg)
{
    NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::NR,
                      NTT::Direction::inverse, NTT::Type::standard);
    NTT::Base_dev_ptr(s, p, lg, NTT::InputOutputOrder::RN,
                      NTT::Direction::forward, NTT::Type::coset);
}

// Queues H's coefficients (natural order) into d_a from a, b, c (each n = 2^lg, natural
// order) on `s`; d_b and d_c are overwritten.
static void queue_h_poly(stream_t& s, fr_t* d_a, fr_t* d_b, fr_t* d_c, uint32_t lg,
                         const fr_t& z_inv, uint32_t grid)
{
    const size_t n = (size_t)1 << lg;
    queue_to_coset(s, d_a, lg);
    queue_to_coset(s, d_b, lg);
    cuzk_mul_assign<<<grid, 1024, 0, s>>>(d_a, d_b, n);
    CUDA_OK(cudaGetLastError());
    // T and C in bit-reversed order (no reversal pass for either), then one pass for H
    NTT::Base_dev_ptr(s, d_a, lg, NTT::InputOutputOrder::NR,
                      NTT::Direction::inverse, NTT::Type::coset);
    NTT::Base_dev_ptr(s, d_c, lg, NTT::InputOutputOrder::NR,
                      NTT::Direction::inverse, NTT::Type::standard);
    cuzk_sub_scale<<<grid, 1024, 0, s>>>(d_a, d_c, z_inv, n);
    CUDA_OK(cudaGetLastError());
    cuzk_ntt::bit_rev(d_a, d_a, lg, s);
}

// Queues H's coefficients into the worker's a, on gpu[0].
static void queue_h_ntt(const gpu_t& gpu, cuzk_worker& w, size_t n)
{
    CUZK_REQUIRE(n == (size_t)1 << w.lg_domain, "a/b/c span the domain");
    fr_t* d_a = w.abc.as<fr_t>();
    queue_h_poly(gpu[0], d_a, d_a + n, d_a + 2 * n, w.lg_domain, w.z_inv, gpu.sm_count() * 2);
}
