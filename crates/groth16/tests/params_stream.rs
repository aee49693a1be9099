//! Parameters read header-first ([`read_params_header`]): the counts and key come back with no
//! point held, [`Srs::stream_points`] hands every point over a window at a time equal to what
//! [`read_params`] holds, [`Srs::load_host_points`] reads them in, and a bad point in the file
//! is a typed error at its index that stops the stream before its window is handed over.
//! [`Srs::stream_wire`] hands over the file's bytes undecoded, read ahead on a thread.
mod params_support;

use blstrs::{G1Affine, G2Affine};
use cuzk_groth16::params::{
    read_params, read_params_header, write_params, G1Section, PointsWindow, ReadOptions,
    WireSection, WIRE_READ_WINDOWS, WIRE_UPLOAD_WINDOWS,
};
use cuzk_groth16::setup::generate_params;
use cuzk_groth16::{CpuProver, ParamsError, ProverBackend, Recorder, RecorderMode, Scalar, Srs};
use params_support::{RandomCircuit, Shape};
use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;

fn circuit() -> RandomCircuit {
    RandomCircuit::new(
        Shape {
            inputs: 3,
            aux: 70,
            constraints: 90,
            b_aux: 0.5,
        },
        31,
    )
}

fn written() -> (Srs, tempfile::TempDir, std::path::PathBuf) {
    let srs = generate_params(circuit(), &mut ChaCha8Rng::seed_from_u64(32)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("stream.params");
    write_params(&path, &srs).unwrap();
    (srs, dir, path)
}

/// Windows of 7 G1 points (3 G2 points): every section spans several, most end short.
fn small_windows() -> ReadOptions {
    ReadOptions {
        check_points: true,
        window_bytes: 7 * 96,
    }
}

/// What a stream handed over, gathered per section, with each window's size checked against
/// the window the options allow and its start against the points before it.
#[derive(Default, Debug, PartialEq)]
struct Gathered {
    g1: [Vec<G1Affine>; 4],
    g2: Vec<G2Affine>,
    windows: usize,
}

fn gather(srs: &Srs, opts: &ReadOptions) -> Result<Gathered, ParamsError> {
    let mut g = Gathered::default();
    let mut order = Vec::new();
    srs.stream_points::<ParamsError>(opts, |w| {
        g.windows += 1;
        match w {
            PointsWindow::G1 {
                section,
                start,
                points,
            } => {
                let k = section as usize;
                assert_eq!(start, g.g1[k].len(), "{section:?} windows are contiguous");
                assert!(!points.is_empty() && points.len() <= opts.window_bytes / 96);
                g.g1[k].extend_from_slice(points);
                order.push(k);
            }
            PointsWindow::G2 { start, points } => {
                assert_eq!(start, g.g2.len());
                assert!(!points.is_empty() && points.len() <= opts.window_bytes / 192);
                g.g2.extend_from_slice(points);
                order.push(4);
            }
        }
        Ok(())
    })?;
    // File order: h, l, a, b_g1, b_g2.
    assert!(order.windows(2).all(|p| p[0] <= p[1]), "{order:?}");
    Ok(g)
}

/// The longest G1 section and the G2 section's length (in points).
fn c_of(srs: &Srs) -> (usize, usize) {
    let c = srs.counts();
    let g1 = [c.h, c.l, c.a, c.b_g1].into_iter().max().unwrap();
    // A G2 point is two G1 points' bytes.
    (g1, 2 * c.b_g2)
}

fn held(srs: &Srs) -> Gathered {
    Gathered {
        g1: [
            srs.h().to_vec(),
            srs.l().to_vec(),
            srs.a().to_vec(),
            srs.b_g1().to_vec(),
        ],
        g2: srs.b_g2().to_vec(),
        windows: 0,
    }
}

#[test]
fn the_header_holds_no_points_and_the_stream_equals_the_whole_read() {
    let (generated, _dir, path) = written();
    let (whole, _) = read_params(&path, &ReadOptions::default()).unwrap();
    let (header, stats) = read_params_header(&path, &ReadOptions::default()).unwrap();
    assert_eq!(stats.bytes, std::fs::metadata(&path).unwrap().len());
    assert_eq!(header.counts(), whole.counts());
    assert_eq!(header.vk(), whole.vk());
    assert!(header.host_points_released());
    assert!(!header.can_release_host_points());
    assert_eq!(header.size_bytes(), 96 * header.vk().ic.len() as u64);
    assert_eq!(header.points_bytes(), whole.points_bytes());
    assert_eq!(
        whole.points_bytes() + 96 * whole.vk().ic.len() as u64,
        whole.size_bytes()
    );
    assert!(header.h().is_empty() && header.b_g2().is_empty());
    // One window of file bytes and its points: 7 G1 points (the sections are longer).
    assert_eq!(header.stream_host_bytes(&small_windows()), 2 * 7 * 96);
    assert_eq!(
        header.stream_host_bytes(&ReadOptions::default()),
        2 * 96 * [c_of(&whole).0, c_of(&whole).1].into_iter().max().unwrap() as u64
    );
    assert_eq!(whole.stream_host_bytes(&small_windows()), 0);
    assert_eq!(header.file_path(), Some(path.as_path()));
    // Single points come from the file already.
    assert_eq!(header.g1_at(G1Section::A, 2).unwrap(), generated.a()[2]);

    let expected = held(&generated);
    let opts = small_windows();
    let from_file = gather(&header, &opts).unwrap();
    assert_eq!((&from_file.g1, &from_file.g2), (&expected.g1, &expected.g2));
    let c = header.counts();
    let windows = [c.h, c.l, c.a, c.b_g1]
        .iter()
        .map(|n| n.div_ceil(7))
        .sum::<usize>()
        + c.b_g2.div_ceil(3);
    assert_eq!(from_file.windows, windows);
    // A held copy streams the same windows from memory.
    let from_memory = gather(&whole, &opts).unwrap();
    assert_eq!(from_memory, from_file);

    // Read in, it is the whole read.
    let mut loaded = header;
    let bytes = loaded.load_host_points(&opts).unwrap();
    assert_eq!(bytes, loaded.points_bytes());
    assert!(!loaded.host_points_released());
    assert_eq!(held(&loaded), expected);
    assert_eq!(loaded.load_host_points(&opts).unwrap(), 0);
    // And it proves: the CPU prover takes it like any other (the first gets refused while the
    // points are in the file only).
    let (mut in_file, _) = read_params_header(&path, &ReadOptions::default()).unwrap();
    let synthesized = Recorder::synthesize(circuit(), RecorderMode::Full).unwrap();
    let (r, s) = (Scalar::from(3u64), Scalar::from(5u64));
    assert!(matches!(
        CpuProver::default().start(&in_file, synthesized.clone(), r, s),
        Err(cuzk_groth16::ProveError::Unavailable(_))
    ));
    in_file.load_host_points(&ReadOptions::default()).unwrap();
    let cpu = CpuProver::default();
    let from_loaded = cpu
        .finish(
            &in_file,
            cpu.start(&in_file, synthesized.clone(), r, s).unwrap(),
        )
        .unwrap();
    let from_whole = cpu
        .finish(&whole, cpu.start(&whole, synthesized, r, s).unwrap())
        .unwrap();
    assert_eq!(from_loaded, from_whole);
}

/// A written file with point 16 of `l` (the third window of 7) damaged, a byte inside its x
/// coordinate: the directory, the file, and the point's offset.
fn l_point_16_damaged() -> (tempfile::TempDir, std::path::PathBuf, usize) {
    let (generated, dir, path) = written();
    let c = generated.counts();
    let vk_end = 3 * 96 + 3 * 192 + 4 + 96 * generated.vk().ic.len();
    let l_first = vk_end + 4 + 96 * c.h + 4;
    let point = l_first + 16 * 96;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[point + 20] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    (dir, path, point)
}

#[test]
fn a_bad_point_stops_the_stream_at_its_index_before_its_window_is_handed_over() {
    let (_dir, path, point) = l_point_16_damaged();
    // The header has no point of `l` to check.
    let (mut header, _) = read_params_header(&path, &ReadOptions::default()).unwrap();
    let mut seen = Vec::new();
    let err = header
        .stream_points::<ParamsError>(&small_windows(), |w| {
            if let PointsWindow::G1 {
                section: G1Section::L,
                start,
                points,
            } = w
            {
                seen.push((start, points.len()));
            }
            Ok(())
        })
        .unwrap_err();
    match err {
        ParamsError::BadPoint {
            section,
            index,
            offset,
            ..
        } => assert_eq!((section, index, offset), ("l", 16, point as u64)),
        other => panic!("{other:?}"),
    }
    assert_eq!(seen, vec![(0, 7), (7, 7)]);
    // Reading it in fails the same way and leaves it as it was.
    assert!(matches!(
        header.load_host_points(&small_windows()),
        Err(ParamsError::BadPoint {
            section: "l",
            index: 16,
            ..
        })
    ));
    assert!(header.host_points_released());
    // The sink's own error ends the stream too, and comes back as it was.
    #[derive(Debug)]
    enum SinkError {
        Full,
        Params,
    }
    impl From<ParamsError> for SinkError {
        fn from(_: ParamsError) -> Self {
            SinkError::Params
        }
    }
    let mut calls = 0;
    let r = header.stream_points(&small_windows(), |_| {
        calls += 1;
        if calls == 2 {
            return Err(SinkError::Full);
        }
        Ok(())
    });
    assert!(matches!(r, Err(SinkError::Full)));
    assert_eq!(calls, 2);
    // A file that shrank under a header-read SRS: an I/O error, no panic.
    std::fs::write(&path, b"short").unwrap();
    assert!(matches!(
        gather(&header, &small_windows()),
        Err(ParamsError::Io { .. })
    ));
}

#[test]
fn a_header_read_refuses_what_the_whole_read_refuses_about_the_layout() {
    let (_, _dir, path) = written();
    let bytes = std::fs::read(&path).unwrap();
    let opts = ReadOptions::default();
    // Truncated in the last section, and one byte too many.
    for bad in [
        &bytes[..bytes.len() - 1],
        &[&bytes[..], &[0u8]].concat()[..],
    ] {
        std::fs::write(&path, bad).unwrap();
        let whole = read_params(&path, &opts).map(|_| ()).unwrap_err();
        let header = read_params_header(&path, &opts).map(|_| ()).unwrap_err();
        assert_eq!(format!("{header:?}"), format!("{whole:?}"));
        assert!(matches!(
            header,
            ParamsError::Truncated {
                section: "b_g2",
                ..
            } | ParamsError::TrailingBytes { .. }
        ));
    }
}

/// A window [`Srs::stream_wire`] handed over: section, start, offset and bytes.
type Wired = (WireSection, usize, u64, Vec<u8>);

/// What [`Srs::stream_wire`] handed over, with each window's bytes checked to be whole points
/// within the options' window.
fn wire_windows(srs: &Srs, opts: &ReadOptions) -> Result<Vec<Wired>, ParamsError> {
    let mut out = Vec::new();
    srs.stream_wire::<ParamsError>(opts, |w| {
        let size = w.section.point_bytes();
        assert!(!w.bytes.is_empty() && w.bytes.len() % size == 0);
        assert!(w.bytes.len() <= opts.window_bytes.max(size));
        assert_eq!(w.check_subgroup, opts.check_points);
        out.push((w.section, w.start, w.offset, w.bytes.to_vec()));
        Ok(())
    })?;
    Ok(out)
}

/// Issue 29 item 4: the file's bytes as they are, read ahead on a thread, in file order, each
/// window where the file holds it; decoded on the host they are the points `stream_points`
/// hands over; a held copy encodes the same bytes; the host bytes it holds are counted.
#[test]
fn the_wire_stream_hands_over_the_files_bytes_in_order_and_they_decode_to_the_points() {
    let (generated, _dir, path) = written();
    let file = std::fs::read(&path).unwrap();
    let (header, _) = read_params_header(&path, &ReadOptions::default()).unwrap();
    let opts = ReadOptions {
        check_points: false,
        ..small_windows()
    };
    let windows = wire_windows(&header, &opts).unwrap();
    let mut next = [0usize; 5];
    let mut order = Vec::new();
    for (section, start, offset, bytes) in &windows {
        let k = section.index();
        assert_eq!(*start, next[k], "{section:?} windows are contiguous");
        next[k] += bytes.len() / section.point_bytes();
        let at = *offset as usize;
        assert_eq!(
            &file[at..at + bytes.len()],
            &bytes[..],
            "{section:?} at {start}"
        );
        order.push(k);
    }
    assert!(order.windows(2).all(|p| p[0] <= p[1]), "{order:?}");
    let c = header.counts();
    assert_eq!(next, [c.h, c.l, c.a, c.b_g1, c.b_g2]);
    assert_eq!(windows.len(), gather(&header, &opts).unwrap().windows);

    // Decoded on the host, window by window: the points.
    let mut decoded = Gathered::default();
    header
        .stream_wire::<ParamsError>(&opts, |w| {
            w.decode(|p| match p {
                PointsWindow::G1 {
                    section, points, ..
                } => decoded.g1[section as usize].extend_from_slice(points),
                PointsWindow::G2 { points, .. } => decoded.g2.extend_from_slice(points),
            })
        })
        .unwrap();
    let expected = held(&generated);
    assert_eq!((&decoded.g1, &decoded.g2), (&expected.g1, &expected.g2));

    // A held copy encodes what the file holds, at the same offsets.
    let (whole, _) = read_params(&path, &opts).unwrap();
    assert_eq!(wire_windows(&whole, &opts).unwrap(), windows);

    // The reader's windows and each upload's: 7 G1 points' bytes is the largest window.
    assert_eq!(header.wire_window_bytes(&opts), 7 * 96);
    assert_eq!(
        header.stream_wire_host_bytes(&opts, 2),
        (WIRE_READ_WINDOWS + 2 * WIRE_UPLOAD_WINDOWS) * 7 * 96
    );
    assert_eq!(whole.stream_wire_host_bytes(&opts, 2), 0);
}

/// A bad point reaches the decoder as bytes: decoding its window on the host is the error
/// `stream_points` gives (its section, index, offset and reason), and `bad_point` names it the
/// same way for a backend that decoded it elsewhere; a failing consumer and a file that
/// shrank each end the stream (no reader left waiting).
#[test]
fn a_bad_point_in_the_wire_stream_is_named_as_the_host_decoder_names_it() {
    let (_dir, path, point) = l_point_16_damaged();
    let (header, _) = read_params_header(&path, &ReadOptions::default()).unwrap();
    let opts = ReadOptions {
        check_points: false,
        ..small_windows()
    };
    let expected = gather(&header, &opts).unwrap_err();
    let mut named = None;
    let err = header
        .stream_wire::<ParamsError>(&opts, |w| {
            if w.section == WireSection::G1(G1Section::L) && w.start == 14 {
                named = Some(w.bad_point(2));
            }
            w.decode(|_| ())
        })
        .unwrap_err();
    assert_eq!(format!("{err:?}"), format!("{expected:?}"));
    assert_eq!(format!("{:?}", named.unwrap()), format!("{expected:?}"));
    assert!(
        matches!(err, ParamsError::BadPoint { section: "l", index: 16, offset, .. }
            if offset == point as u64),
        "{err:?}"
    );

    // The consumer's error ends the stream, at once.
    let mut calls = 0;
    let r = header.stream_wire::<ParamsError>(&opts, |_| {
        calls += 1;
        match calls {
            3 => Err(ParamsError::TrailingBytes {
                offset: 0,
                extra: 1,
            }),
            _ => Ok(()),
        }
    });
    assert!(matches!(r, Err(ParamsError::TrailingBytes { .. })));
    assert_eq!(calls, 3);
    // A file that shrank: an I/O error.
    std::fs::write(&path, b"short").unwrap();
    assert!(matches!(
        wire_windows(&header, &opts),
        Err(ParamsError::Io { .. })
    ));
}
