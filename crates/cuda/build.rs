//! Compiles `cuda/*.cu` with nvcc through sppark when the `cuda` feature is on; does nothing
//! otherwise, so the workspace builds on machines without a CUDA toolchain.

fn main() {
    println!("cargo:rerun-if-changed=cuda");
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "cuda")]
    build_kernels();
}

#[cfg(feature = "cuda")]
fn build_kernels() {
    let mut nvcc = sppark::build::ccmd();
    nvcc.define("FEATURE_BLS12_381", None);
    // `debug = 1` in the release profile would make cc pass nvcc `-G`, which disables device
    // optimisation. Host debug info is not worth that.
    nvcc.debug(false);
    // The H200 (Hopper, sm_90) runs native code rather than PTX compiled at start-up.
    nvcc.flag("-gencode").flag("arch=compute_90,code=sm_90");
    nvcc.flag("-std=c++17");
    #[cfg(target_arch = "x86_64")]
    if std::is_x86_feature_detected!("adx") {
        nvcc.define("__ADX__", None);
    }
    if let Some(lib) = std::env::var_os("CUZK_CUDA_LIB") {
        println!("cargo:rustc-link-search=native={}", lib.to_string_lossy());
    }
    println!("cargo:rerun-if-env-changed=CUZK_CUDA_LIB");
    nvcc.file("cuda/cuzk.cu").compile("cuzk_cuda_kernels");
}
