//! Reading a file's windows ahead of their use: a thread of its own reads window `k + 1` (in
//! parallel pieces, positioned reads) while the caller works on window `k`, into a few buffers
//! allocated once and handed back and forth. The parameter file's points
//! ([`crate::Srs::stream_wire`]) and a compiled circuit's matrices
//! ([`crate::CompiledCircuit::stream_matrices`]) stream this way.
use rayon::prelude::*;
use std::fs::File;
use std::io;
use std::sync::mpsc;

/// Buffers a read-ahead holds at most: one the reader fills, one waiting, one the caller holds.
pub(crate) const BUFFERS: usize = 3;

/// Bytes one task reads of a window at a time.
const READ_PIECE: usize = 1 << 20;

/// Fills `buf` with the bytes of `file` from `offset`, in pieces read in parallel (a
/// positioned read each, so no shared file offset). Plain reads, no mapping: a file that
/// changes or shrinks underneath only makes the reader see garbage or fail with an I/O error,
/// never fault.
pub(crate) fn read_into(file: &File, offset: u64, buf: &mut [u8]) -> io::Result<()> {
    use std::os::unix::fs::FileExt;
    buf.par_chunks_mut(READ_PIECE)
        .enumerate()
        .try_for_each(|(i, piece)| file.read_exact_at(piece, offset + (i * READ_PIECE) as u64))
}

/// Reads `windows` (offset, bytes) of `file` in order, ahead of their use, and hands each to
/// `f` with its index. A read that fails (or a reader that stops) is `io_err` of its error; an
/// error from `f` ends it too. Either way the reader stops with it.
pub(crate) fn read_ahead<E>(
    file: &File,
    windows: &[(u64, usize)],
    io_err: impl Fn(io::Error) -> E,
    mut f: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    std::thread::scope(|s| {
        // Bounded: the reader is at most one window ahead of the one waiting.
        let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(usize, Vec<u8>)>>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Vec<u8>>();
        for _ in 0..BUFFERS {
            let _ = empty_tx.send(Vec::new());
        }
        s.spawn(move || {
            for (k, &(offset, len)) in windows.iter().enumerate() {
                let Ok(mut buf) = empty_rx.recv() else { return };
                buf.resize(len, 0);
                let read = read_into(file, offset, &mut buf).map(|()| (k, buf));
                let failed = read.is_err();
                if full_tx.send(read).is_err() || failed {
                    return;
                }
            }
        });
        // Both channels' ends here drop when this returns, so a reader waiting on either
        // stops, and the scope's join does not wait for ever.
        for _ in 0..windows.len() {
            let (k, buf) = full_rx
                .recv()
                .map_err(|_| io_err(io::Error::other("the reader thread stopped")))?
                .map_err(&io_err)?;
            f(k, &buf)?;
            let _ = empty_tx.send(buf);
        }
        Ok(())
    })
}
