//! Matrices streamed from a circuit's file: the windows are the written matrices, checked by
//! the file's digest, and a changed byte stops them with an error before they are trusted.
use super::tests::{compile, Parts};
use super::*;
use crate::{Recorder, RecorderMode};

/// Every array of A, B, C as the windows of `stream_matrices` assemble them.
fn streamed(
    c: &CompiledCircuit,
    window: usize,
) -> Result<(Vec<Vec<u32>>, usize), CircuitFileError> {
    let mut arrays = vec![Vec::new(); 9];
    let mut windows = 0;
    c.stream_matrices::<CircuitFileError>(window, |w| {
        let k = 3 * w.matrix + w.array as usize;
        assert_eq!(w.start, arrays[k].len(), "windows in order");
        arrays[k].extend_from_slice(w.values);
        windows += 1;
        Ok(())
    })?;
    Ok((arrays, windows))
}

fn host_arrays(c: &CompiledCircuit) -> Vec<Vec<u32>> {
    (0..3)
        .flat_map(|m| {
            let v = c.matrix(m);
            [v.row_start.to_vec(), v.cols.to_vec(), v.coeffs.to_vec()]
        })
        .collect()
}

/// A circuit larger than one digest piece (4 Mi values) in its row starts and A's columns,
/// opened from its file, holds only its shape, table and densities; streamed, it hands over
/// exactly the written matrices in several windows; read whole, it evaluates a witness as
/// the compiled circuit does.
#[test]
fn an_opened_circuit_streams_exactly_the_matrices_it_was_written_with() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.compiled");
    let circuit = Parts {
        parts: 3000,
        split: false,
    };
    let c = compile(circuit);
    assert!(c.num_constraints() > super::file::PIECE, "spans two pieces");
    c.write_file(&path, "big").unwrap();
    let mut opened = CompiledCircuit::open_file(&path, "big").unwrap();
    assert!(opened.matrices_in_file() && opened.matrices_available());
    assert!(opened.host_matrices_released());
    assert_eq!(opened.densities(), c.densities());
    assert_eq!(opened.coeff_table(), c.coeff_table());
    assert_eq!(
        (0..3).map(|m| opened.terms(m)).collect::<Vec<_>>(),
        (0..3).map(|m| c.terms(m)).collect::<Vec<_>>()
    );
    // Shape, table and densities only: a small fraction of the compiled circuit.
    assert!(opened.heap_bytes() * 10 < c.heap_bytes());
    let (from_file, windows) = streamed(&opened, 1).unwrap();
    assert_eq!(from_file, host_arrays(&c));
    assert!(
        windows >= 11,
        "{windows} windows: row starts and A's columns span two"
    );
    // The host copy streams the same windows, and a window of 1000 values is 1000 values.
    let (from_host, windows) = streamed(&c, 1000).unwrap();
    assert_eq!(from_host, from_file);
    assert!(windows > 9 * 1000);

    assert!(opened.load_host_matrices().unwrap() > 0);
    assert!(!opened.matrices_in_file());
    assert_eq!(host_arrays(&opened), host_arrays(&c));
    let witness = || Recorder::synthesize(circuit, RecorderMode::WitnessOnly).unwrap();
    let (x, y) = (
        c.evaluate(witness()).unwrap(),
        opened.evaluate(witness()).unwrap(),
    );
    assert_eq!((x.a, x.b, x.c), (y.a, y.b, y.c));
    // Released again, it can be read again from its file.
    opened.release_host_matrices();
    assert!(opened.matrices_in_file());
    assert_eq!(streamed(&opened, 1).unwrap().0, host_arrays(&c));
}

/// Opening checks the header, the length, the table and the densities' place; a changed byte
/// among the matrices is found as they pass (by the window checks or the digest): the stream
/// and the read both end in `Corrupt`, and the circuit stays as it was. A compiled circuit
/// whose host copy was released has nothing to stream.
#[test]
fn a_changed_byte_in_the_matrices_stops_their_stream_as_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("parts.compiled");
    let c = compile(Parts {
        parts: 40,
        split: true,
    });
    c.write_file(&path, "k").unwrap();
    let good = std::fs::read(&path).unwrap();
    let header = 16 + 1 + 80 + 32 * c.coeff_table().len();
    let rows = 4 * (c.num_constraints() + 1);
    // In A's row starts, A's columns (a low bit: still in range), C's coefficient indices.
    for at in [
        header + rows / 2,
        header + rows + 4 * (c.terms(0) / 2),
        good.len() - 64 - 8 * 3 - 4,
    ] {
        let mut bytes = good.clone();
        bytes[at] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let mut opened =
            CompiledCircuit::open_file(&path, "k").expect("opens: the header is intact");
        let e = streamed(&opened, 1).unwrap_err();
        assert!(
            matches!(e, CircuitFileError::Corrupt { .. }),
            "byte {at}: {e}"
        );
        let e = opened.load_host_matrices().unwrap_err();
        assert!(
            matches!(e, CircuitFileError::Corrupt { .. }),
            "byte {at}: {e}"
        );
        assert!(opened.matrices_in_file(), "unchanged after the failed read");
    }
    // Truncated: refused at opening, and by a probe of its header; intact, the probe says yes.
    std::fs::write(&path, &good).unwrap();
    assert!(CompiledCircuit::probe_file(&path, "k").is_ok());
    assert!(matches!(
        CompiledCircuit::probe_file(&path, "other"),
        Err(CircuitFileError::Stale { .. })
    ));
    std::fs::write(&path, &good[..good.len() - 1]).unwrap();
    assert!(matches!(
        CompiledCircuit::open_file(&path, "k"),
        Err(CircuitFileError::Corrupt { .. })
    ));
    assert!(matches!(
        CompiledCircuit::probe_file(&path, "k"),
        Err(CircuitFileError::Corrupt { .. })
    ));
    let mut released = compile(Parts {
        parts: 3,
        split: false,
    });
    released.release_host_matrices();
    assert!(!released.matrices_available());
    assert!(matches!(
        streamed(&released, 1),
        Err(CircuitFileError::Released)
    ));
}
