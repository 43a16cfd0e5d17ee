//! A real recording truncated anywhere or with bytes flipped anywhere: reading it must end
//! in a result or an error naming the file, never a panic, a hang or unbounded memory.

use crate::support;

use std::io::Cursor;

use pauselab_jfr::{Assembler, Error, Item, Recording};
use proptest::prelude::*;
use support::{record, JDK17};

/// Reads every chunk; returns how many pause and safepoint items came out, or the error.
fn read_all(bytes: &[u8]) -> Result<usize, Error> {
    let mut rec = Recording::new(Cursor::new(bytes), "rec.jfr".to_string())?;
    let mut asm = Assembler::new();
    let mut items = Vec::new();
    while let Some(chunk) = rec.next_chunk()? {
        items.extend(asm.chunk(chunk));
    }
    items.extend(asm.finish().0);
    let stops = |i: &Item| matches!(i, Item::Pause(_) | Item::Safepoint(_));
    Ok(items.iter().filter(|i| stops(i)).count())
}

fn assert_names_file(result: Result<usize, Error>) {
    if let Err(e) = result {
        let msg = e.to_string();
        assert!(msg.starts_with("rec.jfr: "), "{msg}");
        assert!(!msg.contains('\n'), "{msg}");
    }
}

#[test]
fn truncations_and_byte_flips_of_a_real_recording() {
    let Some(run) = record(JDK17, "-XX:+UseG1GC") else {
        return;
    };
    let bytes = std::fs::read(&run.jfr).unwrap();
    let whole = read_all(&bytes).expect("the untouched recording reads");
    assert!(whole > 0);
    // The same recording stamped with JDK 9's chunk format (1.0, events named
    // `com.oracle.jdk.*`): refused in one line naming the version, never read as 0 events.
    let mut jdk9 = bytes.clone();
    jdk9[4..8].copy_from_slice(&[0, 1, 0, 0]);
    let refused = read_all(&jdk9).unwrap_err().to_string();
    assert!(
        refused.starts_with("rec.jfr: ")
            && refused.contains("format version 1.0")
            && refused.contains("JDK 9"),
        "{refused}"
    );
    assert!(!refused.contains('\n'), "{refused}");
    // Two recordings back to back are one recording of two chunks.
    assert_eq!(read_all(&bytes.repeat(2)).unwrap(), 2 * whole);
    // Cut inside the second chunk: an error naming the chunk.
    let cut_second = read_all(&bytes.repeat(2)[..bytes.len() + bytes.len() / 2]).unwrap_err();
    assert!(cut_second.to_string().contains("chunk 2"), "{cut_second}");
    // Every cut inside the header, and a sample of cuts further on.
    for len in 0..80 {
        assert_names_file(read_all(&bytes[..len]));
    }
    let cfg = ProptestConfig {
        cases: 192,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(cfg, |(cut in 0..bytes.len(), flips in prop::collection::vec((0..bytes.len(), any::<u8>()), 1..8))| {
        assert_names_file(read_all(&bytes[..cut]));
        let mut flipped = bytes.clone();
        for (at, value) in flips {
            flipped[at] = value;
        }
        assert_names_file(read_all(&flipped));
    });
}

#[test]
fn foreign_files_are_refused_by_name() {
    for bytes in [&b""[..], b"FLR", b"FLR\0", b"PK\x03\x04 zip", &[0u8; 100]] {
        let e = read_all(bytes).unwrap_err();
        assert!(e.to_string().starts_with("rec.jfr: "), "{e}");
    }
    // A header claiming a chunk larger than the file.
    let mut header = b"FLR\0\0\x02\0\x01".to_vec();
    header.extend_from_slice(&u64::MAX.to_be_bytes());
    header.resize(68, 0);
    let e = read_all(&header).unwrap_err();
    assert!(e.to_string().contains("chunk 1"), "{e}");
}
