// abc.cuh: a/b/c = A·z, B·z, C·z made on the device from the staged witness and the resident
// matrices (the deferred path).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

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
    const uint64_t* ones = w.wit_ones ? w.plan(query::l).bits.as<const uint64_t>() : nullptr;
    cuzk_expand_bits<<<grid, 256, 0, s>>>(z, cls, w.wit_ni, w.wit_naux, ones);
    CUDA_OK(cudaGetLastError());
    if (w.wit_nothers) {
        const uint32_t* idx = w.wit_own ? w.wit_idx.as<uint32_t>() : w.plan(query::l).idx.as<uint32_t>();
        const fr_t* sc = w.wit_own ? w.wit_scalars.as<fr_t>() : w.plan(query::l).scalars.as<fr_t>();
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
