// resident.cuh: what stays in VRAM between proofs: an SRS (cuzk_srs) and a compiled circuit's
// constraint matrices (cuzk_matrices).
// Included by cuzk.cu, in the order listed there (it uses what the headers before it define).
#pragma once

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
    size_t nterms[3] = {0, 0, 0};
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
