//! No CUDA source copies or sets memory on the legacy default stream. sppark's streams (and
//! ours) are created non-blocking, so they do not wait for the legacy stream, and `cudaMemcpy`
//! from pageable host memory may return before its DMA lands: a kernel queued next on one of
//! those streams could read the data before it arrives (session 29's `h_poly` failures). Every
//! copy goes on the stream that uses it (`cudaMemcpyAsync(…, stream)`, waited for where the
//! host needs it). Reads the sources only: runs without a GPU or nvcc.
use std::path::PathBuf;

/// Calls that run on the legacy default stream.
const LEGACY: [&str; 4] = [
    "cudaMemcpy(",
    "cudaMemset(",
    "cudaMemcpy2D(",
    "cudaMemcpyToSymbol(",
];

/// (file, line number, line) of every legacy-stream call in `text`, comments left out.
fn legacy_calls(file: &str, text: &str) -> Vec<(String, usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| {
            let code = l.split("//").next().unwrap_or("");
            LEGACY.iter().any(|c| code.contains(c))
        })
        .map(|(i, l)| (file.to_string(), i + 1, l.trim().to_string()))
        .collect()
}

#[test]
fn no_copy_on_the_legacy_stream() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("cuda");
    let mut found = Vec::new();
    let mut read = 0;
    for e in std::fs::read_dir(&dir).expect("crates/cuda/cuda") {
        let path = e.expect("directory entry").path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !(name.ends_with(".cu") || name.ends_with(".cuh")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a CUDA source");
        found.extend(legacy_calls(&name, &text));
        read += 1;
    }
    assert!(read >= 10, "only {read} CUDA sources found in {dir:?}");
    assert!(
        found.is_empty(),
        "copies on the legacy default stream (use cudaMemcpyAsync/cudaMemsetAsync on the stream \
         that uses the memory): {found:#?}"
    );
}

#[test]
fn the_check_sees_a_legacy_copy_and_skips_comments() {
    let src = "    CUDA_OK(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));\n\
               // cudaMemcpy( in a comment\n\
               CUDA_OK(cudaMemcpyAsync(d, h, n, cudaMemcpyHostToDevice, s));\n\
               x; // after code: cudaMemset(p, 0, n)\n\
               cudaMemsetAsync(p, 0, n, s);";
    let got = legacy_calls("t.cuh", src);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].1, 1);
}
