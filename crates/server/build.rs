//! Generates the cuzk.v1 protobuf types, tonic server and tonic client from `proto/`.
//!
//! Uses the `protoc` shipped inside the `protoc-bin-vendored` crate so a build needs nothing
//! installed on the machine.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    // An explicitly set PROTOC wins (e.g. a distro protoc on an unusual platform).
    if std::env::var_os("PROTOC").is_none() {
        let protoc = protoc_bin_vendored::protoc_bin_path()?;
        std::env::set_var("PROTOC", protoc);
    }
    println!("cargo:rerun-if-changed=proto/cuzk/v1/cuzk.proto");
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        // prost with a count check before decoding and INVALID_ARGUMENT for bad bytes.
        .codec_path("crate::codec::CheckedCodec")
        .compile_protos(&["proto/cuzk/v1/cuzk.proto"], &["proto"])?;
    Ok(())
}
