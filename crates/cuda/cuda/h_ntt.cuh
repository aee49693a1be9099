// h_ntt.cuh: the H polynomial by NTTs on the device: H = icoset((coset a · coset b − coset c) / Z).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

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
