//! The hsperfdata parser on regions built byte by byte (versions 2.0 and 1.0, both byte
//! orders) and on damaged ones: truncated, zeroed, bit-flipped, random. Damage must give an
//! error naming the file or a shorter valid result, never a panic or a wrong value.

use std::io::Write;

use pauselab_hsperf::{Snapshot, Units, Value, Variability};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Data {
    Long(i64),
    Text(String, usize),
}

#[derive(Debug, Clone)]
struct Item {
    name: String,
    data: Data,
    variability: u8,
}

fn put_i32(out: &mut Vec<u8>, v: i32, big: bool) {
    out.extend_from_slice(&if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    });
}

fn put_i64(out: &mut Vec<u8>, v: i64, big: bool) {
    out.extend_from_slice(&if big {
        v.to_be_bytes()
    } else {
        v.to_le_bytes()
    });
}

/// Builds a region the way HotSpot lays it out; `capacity` pads with zeroes.
fn build(major: u8, big: bool, items: &[Item], capacity: usize) -> Vec<u8> {
    let mut entries = Vec::new();
    for item in items {
        let mut e = Vec::new();
        let name_len = item.name.len() + 1;
        let (vector_length, type_code, units, data): (i32, u8, u8, Vec<u8>) = match &item.data {
            Data::Long(v) => {
                let mut d = Vec::new();
                put_i64(&mut d, *v, big);
                (0, b'J', 4, d)
            }
            Data::Text(s, size) => {
                let mut d = s.as_bytes().to_vec();
                d.resize(*size, 0);
                (*size as i32, b'B', 5, d)
            }
        };
        let header = if major == 2 { 20 } else { 16 };
        // Data aligned to 8 after the name.
        let data_offset = (header + name_len).div_ceil(8) * 8;
        let entry_length = (data_offset + data.len()).div_ceil(8) * 8;
        put_i32(&mut e, entry_length as i32, big);
        put_i32(
            &mut e,
            // Version 1.0 counts the name's padding in its length: data follows it.
            if major == 2 {
                header as i32
            } else {
                (data_offset - header) as i32
            },
            big,
        );
        put_i32(&mut e, vector_length, big);
        e.extend_from_slice(&[type_code, 1, units, item.variability]);
        if major == 2 {
            put_i32(&mut e, data_offset as i32, big);
        }
        e.extend_from_slice(item.name.as_bytes());
        e.push(0);
        if major == 1 && vector_length == 0 {
            // Version 1.0 keeps a scalar in the last 8 bytes of its entry.
            e.resize(entry_length - 8, 0);
        } else {
            e.resize(data_offset, 0);
        }
        e.extend_from_slice(&data);
        e.resize(entry_length, 0);
        entries.extend_from_slice(&e);
    }
    let prologue_len = if major == 2 { 32 } else { 24 };
    let mut out = vec![0xCA, 0xFE, 0xC0, 0xC0, u8::from(!big), major, 0, 1];
    put_i32(&mut out, (prologue_len + entries.len()) as i32, big);
    put_i32(&mut out, 0, big);
    put_i64(&mut out, 12345, big);
    if major == 2 {
        put_i32(&mut out, 32, big);
        put_i32(&mut out, items.len() as i32, big);
    }
    out.extend_from_slice(&entries);
    out.resize(capacity.max(out.len()), 0);
    out
}

fn items() -> Vec<Item> {
    vec![
        Item {
            name: "sun.os.hrt.frequency".into(),
            data: Data::Long(1_000_000_000),
            variability: 1,
        },
        Item {
            name: "sun.gc.collector.0.time".into(),
            data: Data::Long(2_500_000_000),
            variability: 2,
        },
        Item {
            name: "sun.gc.lastCause".into(),
            data: Data::Text("G1 Evacuation Pause".into(), 64),
            variability: 3,
        },
        Item {
            name: "java.cls.loadedClasses".into(),
            data: Data::Long(-7),
            variability: 2,
        },
    ]
}

fn check_values(s: &Snapshot) {
    assert_eq!(s.len(), 4);
    assert_eq!(s.value_i64("sun.os.hrt.frequency"), Some(1_000_000_000));
    assert_eq!(s.seconds("sun.gc.collector.0.time"), Some(2.5));
    assert_eq!(
        s.value_str("sun.gc.lastCause").as_deref(),
        Some("G1 Evacuation Pause")
    );
    assert_eq!(s.value_i64("java.cls.loadedClasses"), Some(-7));
    let c = s.get("sun.gc.lastCause").unwrap();
    assert_eq!(
        (c.units, c.variability),
        (Units::String, Variability::Variable)
    );
    let c = s.get("sun.gc.collector.0.time").unwrap();
    assert_eq!(c.variability, Variability::Monotonic);
    assert!(s.get("no.such.counter").is_none());
}

#[test]
fn all_versions_and_byte_orders_parse() {
    for major in [1, 2] {
        for big in [false, true] {
            let region = build(major, big, &items(), 4096);
            let s = Snapshot::parse(region, 4096, "test").unwrap();
            assert_eq!((s.prologue().major, s.prologue().big_endian), (major, big));
            assert_eq!(s.prologue().mod_time_stamp, 12345);
            check_values(&s);
            let pseudo = s.prologue_counters();
            assert_eq!(pseudo[3].name, "sun.perfdata.size");
            assert_eq!(pseudo[3].value, Value::Long(4096));
        }
    }
}

#[test]
fn saved_files_are_read_and_damaged_ones_named_in_errors() {
    let dir = std::env::temp_dir().join(format!("pauselab-hsperf-format-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = build(2, false, &items(), 32768);
    let path = dir.join("good");
    std::fs::write(&path, &good).unwrap();
    check_values(&Snapshot::read_path(&path).unwrap());

    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("empty", Vec::new()),
        ("short", good[..10].to_vec()),
        ("zeroed", vec![0; 32768]),
        (
            "random",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
                .collect(),
        ),
    ];
    for (name, bytes) in cases {
        let p = dir.join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(&bytes)
            .unwrap();
        let err = Snapshot::read_path(&p).unwrap_err().to_string();
        assert!(err.contains(&p.display().to_string()), "{name}: {err}");
        assert!(!err.contains('\n'), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn truncation_inside_entries_is_an_error() {
    let good = build(2, false, &items(), 0);
    // `used` still claims the full length: every cut inside the entries is detected.
    for cut in 33..good.len() {
        let r = Snapshot::parse(good[..cut].to_vec(), cut, "cut");
        assert!(r.is_err() || r.unwrap().len() < 4, "cut at {cut}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn damaged_regions_never_panic(
        major in 1u8..=2,
        big in any::<bool>(),
        flips in proptest::collection::vec((0usize..400, any::<u8>()), 0..8),
        cut in 0usize..420,
    ) {
        let mut region = build(major, big, &items(), 400);
        for (at, byte) in flips {
            region[at] = byte;
        }
        region.truncate(cut);
        if let Ok(s) = Snapshot::parse(region, cut, "prop") {
            // Whatever parsed is readable end to end.
            for c in s.counters() {
                let _ = c.value.to_string();
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let len = bytes.len();
        let _ = Snapshot::parse(bytes, len, "random");
    }

    #[test]
    fn values_round_trip(
        values in proptest::collection::vec(any::<i64>(), 1..20),
        big in any::<bool>(),
        major in 1u8..=2,
    ) {
        let items: Vec<Item> = values
            .iter()
            .enumerate()
            .map(|(i, v)| Item { name: format!("c.{i}"), data: Data::Long(*v), variability: 3 })
            .collect();
        let s = Snapshot::parse(build(major, big, &items, 0), 0, "rt").unwrap();
        prop_assert_eq!(s.len(), values.len());
        for (i, v) in values.iter().enumerate() {
            prop_assert_eq!(s.value_i64(&format!("c.{i}")), Some(*v));
        }
    }
}
