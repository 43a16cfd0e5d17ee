use super::*;
use crate::parse::usual_jdk8_prefix;
use proptest::strategy::Strategy as _;

fn stitch(lines: &[&str]) -> Vec<(String, u64)> {
    let mut stitcher = Stitcher::new();
    let mut out = Vec::new();
    let mut emit = |l: &[u8], n: u64, _| out.push((String::from_utf8_lossy(l).into_owned(), n));
    for (i, line) in lines.iter().enumerate() {
        stitcher.push(line.as_bytes(), i as u64 + 1, &mut emit);
    }
    stitcher.finish(&mut emit);
    out
}

#[test]
fn lines_of_other_formats_pass_unchanged() {
    let text = ["[0.058s][info][gc] GC(0) Pause Young (Normal) (G1 Evacuation Pause) 12M->1M(256M) 1.626ms",
        "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]",
        "   [Eden: 24.0M(24.0M)->0.0B(24.0M) Survivors: 0.0B->4096.0K Heap: 24.0M(256.0M)->4784.0K(256.0M)]"];
    let out = stitch(&text);
    let expected: Vec<(String, u64)> = text
        .iter()
        .enumerate()
        .map(|(i, l)| (l.to_string(), i as u64 + 1))
        .collect();
    assert_eq!(out, expected);
}

#[test]
fn tenuring_distribution_inside_a_parallel_event_is_skipped() {
    let out = stitch(&[
        "2015-03-04T09:13:59.445+0100: 55047,616: [GC (Allocation Failure)AdaptiveSizePolicy::compute_survivor_space_size_and_thresh:  survived: 1246904  promoted: 139280  overflow: falseAdaptiveSizeStart: 55047,624 collection: 21",
        "  avg_survived_padded_avg: 75561280,000000  avg_promoted_padded_avg: 10916049,000000",
        "Desired survivor size 76021760 bytes, new threshold 1 (max 15)",
        "PSAdaptiveSizePolicy::compute_generation_free_space: costs minor_time: 0,000128",
        "AdaptiveSizeStop: collection: 21",
        " [PSYoungGen: 540800K->1217K(617472K)] 592910K->53464K(2015744K), 0,0082230 secs] [Times: user=0,02 sys=0,00, real=0,01 secs]",
        "2015-03-04T09:13:59.454+0100: 55047,624: Total time for which application threads were stopped: 0,0091380 seconds",
    ]);
    assert_eq!(out.len(), 2);
    assert_eq!(out[0].0, "2015-03-04T09:13:59.445+0100: 55047,616: [GC (Allocation Failure) [PSYoungGen: 540800K->1217K(617472K)] 592910K->53464K(2015744K), 0,0082230 secs] [Times: user=0,02 sys=0,00, real=0,01 secs]");
    assert_eq!(out[0].1, 1);
    assert_eq!(out[1].1, 7);
}

#[test]
fn concurrent_phase_printed_into_a_pause_is_cut_out_and_kept_after_it() {
    let out = stitch(&[
        "49.384: [GC 49.384: [ParNew: 1000K->100K(2000K), 0.0100000 secs]49.394: [CMS51.622: [CMS-concurrent-mark: 2.830/3.179 secs] [Times: user=5.00 sys=0.10, real=3.18 secs]",
        " (concurrent mode failure): 23591969K->23342845K(25165824K), 127.2159440 secs] 30431568K->23342845K(32098112K), [CMS Perm : 137329K->97298K(262912K)], 129.9468220 secs] [Times: user=131.28 sys=0.07, real=129.93 secs]",
    ]);
    assert_eq!(out.len(), 2, "{out:?}");
    assert_eq!(
        out[1].0,
        "51.622: [CMS-concurrent-mark: 2.830/3.179 secs] [Times: user=5.00 sys=0.10, real=3.18 secs]"
    );
    assert!(out[0].0.starts_with("49.384: [GC 49.384: [ParNew: 1000K->100K(2000K), 0.0100000 secs]49.394: [CMS (concurrent mode failure)"));
    assert!(out[0]
        .0
        .ends_with("129.9468220 secs] [Times: user=131.28 sys=0.07, real=129.93 secs]"));
}

#[test]
fn g1_pause_with_ergonomics_and_tenuring_closes_on_the_comma_line() {
    let out = stitch(&[
        "26.214: [GC pause (G1 Evacuation Pause) (young) 26.214: [G1Ergonomics (CSet Construction) start choosing CSet, _pending_cards: 0]",
        "Desired survivor size 1342177280 bytes, new threshold 15 (max 15)",
        " 26.215: [G1Ergonomics (CSet Construction) finish choosing CSet, eden: 25 regions]",
        ", 16.7578613 secs]",
        "   [Parallel Time: 16638.4 ms, GC Workers: 18]",
        " [Times: user=152.96 sys=93.94, real=16.76 secs]",
    ]);
    assert_eq!(
        out[0].0,
        "26.214: [GC pause (G1 Evacuation Pause) (young) , 16.7578613 secs]"
    );
    assert_eq!(out.len(), 3);
}

#[test]
fn an_event_that_never_closes_is_handed_on_at_the_next_safepoint_line() {
    let out = stitch(&[
        "1.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)]",
        "1.010: Total time for which application threads were stopped: 0.0100000 seconds",
        "2.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 3000K->200K(9000K), 0.0050000 secs]",
    ]);
    assert_eq!(out.len(), 3);
    assert_eq!(
        out[0],
        (
            "1.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)]".to_string(),
            1
        )
    );
    assert_eq!(out[1].1, 2);
    assert_eq!(out[2].1, 3);
}

#[test]
fn a_cms_remark_keeps_the_young_collection_it_holds() {
    let out = stitch(&[
        "1.157: [GC (CMS Final Remark) [YG occupancy: 10451 K (47936 K)]{Heap before GC invocations=22 (full 13):",
        " par new generation   total 47936K, used 10451K [0x00000000f6400000, 0x00000000f9800000, 0x00000000f9800000)",
        "1.158: [GC (CMS Final Remark) 1.158: [ParNew: 10451K->10451K(47936K), 0.0000303 secs] 111291K->111291K(154432K), 0.0000778 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]",
        "Heap after GC invocations=23 (full 13):",
        "}",
        "1.158: [Rescan (parallel) , 0.0002732 secs][1 CMS-remark: 100839K(106496K)] 111291K(154432K), 0.0019970 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]",
    ]);
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0]
        .0
        .ends_with("0.0019970 secs] [Times: user=0.00 sys=0.00, real=0.00 secs]"));
}

#[test]
fn an_event_with_doubled_stamps_is_joined_to_its_tail() {
    let out = stitch(&[
        "2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250: [Full GC (Metadata GC Threshold) [GC concurrent-root-region-scan-start]",
        "2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-root-region-scan-end, 0.0004000 secs]",
        " 600M->590M(4096M), 2.1500000 secs]",
        "   [Eden: 0.0B(300.0M)->0.0B(300.0M) Survivors: 2048.0K->0.0B Heap: 600.5M(4096.0M)->590.1M(4096.0M)]",
    ]);
    assert_eq!(out[0], ("2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250: [Full GC (Metadata GC Threshold)  600M->590M(4096M), 2.1500000 secs]".to_string(), 1));
    assert_eq!(out[1].0, "[GC concurrent-root-region-scan-start]");
    assert_eq!(out[2].1, 2);
    assert_eq!(out.len(), 4, "{out:?}");
}

#[test]
fn an_event_with_stamps_run_together_is_joined_to_its_tail() {
    let out = stitch(&[
        "2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 4321.5004321.500: : [Full GC (Metadata GC Threshold) [GC concurrent-root-region-scan-start]",
        " 900M->899M(2048M), 1.2000000 secs]",
    ]);
    assert_eq!(out[0].0, "2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 4321.5004321.500: : [Full GC (Metadata GC Threshold)  900M->899M(2048M), 1.2000000 secs]");
    assert_eq!(out.len(), 2, "{out:?}");
}

#[test]
fn an_event_whose_stamps_ended_the_previous_line_gets_them_back() {
    // One thread wrote its stamps, the concurrent thread its phase and a newline, then the
    // first thread the `: ` and its event.
    let out = stitch(&[
        "2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250[GC concurrent-root-region-scan-start]",
        ": [Full GC (Metadata GC Threshold) 2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-root-region-scan-end, 0.0004000 secs]",
        "2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-mark-start]",
        " 600M->590M(4096M), 2.1500000 secs]",
        " [Times: user=4.10 sys=0.00, real=2.15 secs]",
    ]);
    assert_eq!(out[0].1, 1);
    assert_eq!(out[1], ("2021-03-04T10:20:30.400+0100: 2021-03-04T10:20:30.400+0100: 512.250: 512.250: [Full GC (Metadata GC Threshold)  600M->590M(4096M), 2.1500000 secs]".to_string(), 2));
    assert_eq!(out[2].0, "2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-root-region-scan-end, 0.0004000 secs]");
    assert_eq!(
        out[3].0,
        "2021-03-04T10:20:30.401+0100: 512.251: [GC concurrent-mark-start]"
    );
    assert_eq!(out.len(), 5, "{out:?}");
}

#[test]
fn a_separator_without_stamps_before_it_is_handed_on_as_it_is() {
    // Only the line right after the stamps may take them.
    let lines = [
        "512.250[GC concurrent-root-region-scan-start]",
        "512.300: Total time for which application threads were stopped: 0.0001000 seconds",
        ": [Full GC (Metadata GC Threshold)  600M->590M(4096M), 2.1500000 secs]",
    ];
    let out = stitch(&lines);
    let texts: Vec<&str> = out.iter().map(|(l, _)| l.as_str()).collect();
    assert_eq!(texts, lines);
}

#[test]
fn a_cms_remark_without_details_keeps_the_young_collection_it_holds() {
    let out = stitch(&[
        "2021-03-04T10:20:30.400+0100: 41.200: [GC (CMS Final Remark) {Heap before GC invocations=9 (full 3):",
        " par new generation   total 2000000K, used 400000K [0x0000000600000000, 0x0000000680000000, 0x0000000680000000)",
        "2021-03-04T10:20:30.401+0100: 41.201: [GC (CMS Final Remark)  900000K->700000K(8000000K), 0.1000000 secs]",
        "Heap after GC invocations=10 (full 3):",
        " par new generation   total 2000000K, used 150000K [0x0000000600000000, 0x0000000680000000, 0x0000000680000000)",
        "}",
        " 700000K(8000000K), 0.2100000 secs]",
    ]);
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0], ("2021-03-04T10:20:30.400+0100: 41.200: [GC (CMS Final Remark) 2021-03-04T10:20:30.401+0100: 41.201: [GC (CMS Final Remark)  900000K->700000K(8000000K), 0.1000000 secs] 700000K(8000000K), 0.2100000 secs]".to_string(), 1));
}

#[test]
fn pending_text_is_capped() {
    let mut stitcher = Stitcher::new();
    let mut emitted = 0usize;
    let mut longest = 0usize;
    let mut emit = |l: &[u8], _: u64, _| {
        emitted += 1;
        longest = longest.max(l.len());
    };
    stitcher.push(b"1.0: [GC (Allocation Failure) ", 1, &mut emit);
    let part = vec![b'['; 1000];
    for i in 0..1000 {
        stitcher.push(&part, i + 2, &mut emit);
    }
    stitcher.finish(&mut emit);
    assert!(stitcher.overflows() >= 1);
    assert!(longest <= MAX_PENDING);
    assert!(emitted >= 2);
}

/// `lines`, each ended by `\n`.
fn lines_of(lines: &[&str]) -> Vec<u8> {
    lines
        .iter()
        .flat_map(|line| [line.as_bytes(), b"\n"])
        .flatten()
        .copied()
        .collect()
}

/// Indented lines, and lines that look like them: G1's details (`[Times: ...]` and
/// `[Eden: ...]` are records), heap printouts, a thread's state, blanks, CRLF.
fn indented_pieces() -> Vec<&'static str> {
    vec![
        "   [Parallel Time: 18.9 ms, GC Workers: 1]",
        "      [GC Worker Start (ms):  3793.7]",
        "   [Eden: 5120.0K(5120.0K)->0.0B(5120.0K) Survivors: 1024.0K->1024.0K Heap: 125.9M(128.0M)->128.0M(128.0M)]",
        " [Times: user=0.03 sys=0.00, real=0.03 secs] ",
        "   [Times: user=0.03 sys=0.00, real=0.03 secs]",
        " par new generation   total 1310720K, used 25255K [0x0000000640000000, 0x00000006a0000000)",
        "  eden space 1048576K,   0% used [0x0000000640000000, 0x0000000640000000)",
        "   java.lang.Thread.State: RUNNABLE",
        "   jjj",
        "   [Ref Proc: 25.0 ms]\r",
        "   ",
        " ",
        "\t[Parallel Time: 1.0 ms]",
        "  12.5: [GC pause (young), 0.01 secs]",
        "   [",
        "   [Tim",
        "  ]",
        "  (concurrent mode failure)",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

    /// Passing over the indented lines `indented_lines_ahead` names hands on what pushing
    /// them one by one does (each line as it is, the stitcher idle after it), and the
    /// parser reads each as a JDK 8 line without a record nor a stamp.
    #[test]
    fn passing_over_indented_lines_changes_nothing(
        lines in proptest::collection::vec(
            proptest::sample::select(
                indented_pieces().into_iter().chain(sweep_pieces()).collect::<Vec<_>>()
            ),
            1..60,
        ),
        visible in 1usize..600,
        max_line in 20usize..200,
    ) {
        let text = lines_of(&lines);
        let mut stitcher = Stitcher::new();
        let (mut at, mut number) = (0, 0u64);
        while at < text.len() {
            let end = at + memchr::memchr(b'\n', &text[at..]).unwrap();
            number += 1;
            stitcher.push(&text[at..end], number, &mut |_: &[u8], _, _| {});
            at = end + 1;
            let ahead = &text[at..(at + visible).min(text.len())];
            let (bytes, passed) = stitcher.indented_lines_ahead(ahead, max_line);
            proptest::prop_assert!(bytes == 0 || ahead[bytes - 1] == b'\n');
            let swept: Vec<&[u8]> = ahead[..bytes]
                .split(|&b| b == b'\n')
                .take(passed as usize)
                .collect();
            proptest::prop_assert_eq!(swept.len() as u64, passed);
            proptest::prop_assert_eq!(
                passed as usize,
                memchr::memchr_iter(b'\n', &ahead[..bytes]).count()
            );
            for line in swept {
                proptest::prop_assert!(line.len() <= max_line);
                let mut handed_on = Vec::new();
                number += 1;
                stitcher.push(line, number, &mut |l: &[u8], n, piece| {
                    handed_on.push((l.to_vec(), n, matches!(piece, Piece::Lines)));
                });
                proptest::prop_assert_eq!(handed_on, vec![(line.to_vec(), number, true)]);
                proptest::prop_assert!(stitcher.is_idle());
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                proptest::prop_assert_eq!(
                    crate::parse::LineParser::default().parse(line),
                    Ok(crate::parse::Parsed {
                        format: crate::parse::Format::Jdk8,
                        stamp: crate::parse::Stamp::default(),
                        record: crate::parse::Record::Other,
                    })
                );
            }
            at += bytes;
        }
    }
}

/// Lines of JDK 8 events and what may come between them: the pieces the chunks test cuts
/// logs from, printouts with and without brackets, blank lines and lines holding a
/// concurrent phase or G1 ergonomics after a printout's text.
fn sweep_pieces() -> Vec<&'static str> {
    let extra = [
        "",
        "   ",
        "\t",
        "Statistics for BinaryTreeDictionary:",
        "Total Free Space: 469745664",
        "  eden space 1048576K,  76% used [0x0000000640000000, 0x000000067140a1f0, 0x0000000680000000)",
        "size[3] : demand: 1693, old_rate: 0.000000",
        "text [CMS-concurrent-sweep: 0.1/0.2 secs] more",
        "text [GC concurrent-mark-end, 0.0010000 secs]",
        "text [G1Ergonomics (Heap Sizing) expand]",
        "text [Cx] [Gy]",
        "[",
        " , 0.1 secs]",
        " 10.0: [ParNew: 1K->1K(2K), 0.1 secs]",
        "[YG occupancy: 1 K (2 K)]",
        "[YG",
        "x [YG occupancy",
        "Before GC:[YG occupancy: 1 K (2 K)]",
    ];
    include_str!("../../tests/data/event_pieces.txt")
        .lines()
        .chain(extra)
        .collect()
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

    /// Passing over the printouts `printouts_ahead` names, in one sweep of the text that
    /// follows each line, hands on the same lines with the same numbers as pushing every
    /// line, whatever the lines and however little of the text is visible.
    #[test]
    fn sweeping_printouts_changes_nothing(
        lines in proptest::collection::vec(proptest::sample::select(sweep_pieces()), 1..120),
        visible in 1usize..400,
        max_line in 20usize..200,
    ) {
        let text = lines_of(&lines);
        let one_by_one = stitch(&lines);

        let mut stitcher = Stitcher::new();
        let mut swept = Vec::new();
        let mut emit = |l: &[u8], n: u64, _| swept.push((String::from_utf8_lossy(l).into_owned(), n));
        let (mut at, mut number) = (0, 0u64);
        while at < text.len() {
            let end = at + memchr::memchr(b'\n', &text[at..]).unwrap();
            number += 1;
            stitcher.push(&text[at..end], number, &mut emit);
            at = end + 1;
            let ahead = &text[at..(at + visible).min(text.len())];
            let (bytes, passed) = stitcher.printouts_ahead(ahead, max_line);
            proptest::prop_assert_eq!(
                passed as usize,
                memchr::memchr_iter(b'\n', &ahead[..bytes]).count()
            );
            proptest::prop_assert!(bytes == 0 || ahead[bytes - 1] == b'\n');
            at += bytes;
            number += passed;
        }
        stitcher.finish(&mut emit);
        proptest::prop_assert_eq!(one_by_one, swept);
    }

    /// One pass over a line finds what the three searches it stands for find: whether a
    /// fragment is to be cut out, where the printout starts, and the brackets before it.
    #[test]
    fn one_scan_of_a_line_finds_what_three_searches_find(
        pieces in proptest::collection::vec(proptest::sample::select(sweep_pieces()), 1..6),
        depth in 0usize..3,
    ) {
        let line = pieces.concat();
        let text = line.as_bytes();
        let printout = printout_start(text);
        let before = &text[..printout.unwrap_or(text.len())];
        let expected = LineScan {
            fragment: false,
            printout,
            brackets: bracket_depth(before, depth),
            young_occupancy: crate::num::find(before, YOUNG_OCCUPANCY).is_some(),
        };
        proptest::prop_assert_eq!(&scan_line(text, depth, Fragments::CutOut), &expected);
        let sought = scan_line(text, depth, Fragments::Sought);
        if next_fragment(text).is_some() {
            proptest::prop_assert!(sought.fragment, "{line}");
        } else {
            proptest::prop_assert_eq!(&sought, &expected);
        }
    }
}

proptest::proptest! {
    /// A CMS remark's opening is told as reading its stamps tells it, whatever the stamps
    /// (dated or not, repeated, run together, cut, glued to the bracket) and the text after.
    #[test]
    fn a_cms_remark_is_told_as_its_stamps_read(
        pieces in proptest::collection::vec(proptest::sample::select(vec![
            "2014-10-21T21:00:01.180+0200: ", "2014-10-21T21:00:01.180+0200", "21.197: ",
            "2014-10-21T21:00x01.180+0200: ",
            "21.197", "21,197: ", "#12: ", ": ", " ", "1", "-", "[GC (CMS Final Remark)",
            "[GC (CMS Final Remark) [YG occupancy: 1 K (2 K)]", "[GC ", "x",
        ]), 0..6),
    ) {
        let line = pieces.concat();
        let text = line.as_bytes();
        proptest::prop_assert_eq!(
            opens_cms_final_remark(text),
            jdk8_prefix(text).1.starts_with(b"[GC (CMS Final Remark)"),
            "{}", line
        );
    }
}

proptest::proptest! {
    /// A printout starts where one of the starts does, compared at every byte.
    #[test]
    fn printouts_start_where_a_start_is(
        pieces in proptest::collection::vec(proptest::sample::select(sweep_pieces()), 1..4),
        starts in proptest::collection::vec(proptest::sample::select(PRINTOUT_STARTS.to_vec()), 0..3),
    ) {
        let mut text = pieces.concat().into_bytes();
        for start in starts {
            text.extend_from_slice(start);
            text.extend_from_slice(b"Before GC:".get(..text.len() % 11).unwrap_or_default());
        }
        for at in 0..text.len() {
            let expected = if text[at] == b'z' {
                at.checked_sub(2).filter(|&start| text[start..].starts_with(FREE_LIST_CENSUS))
            } else {
                PRINTOUT_STARTS.iter().any(|start| text[at..].starts_with(start)).then_some(at)
            };
            proptest::prop_assert_eq!(printout_at(&text, at), expected);
        }
    }
}

/// CMS's free-list census printed into a collection that failed (GCViewer's
/// `SampleSun1_7_0CmsPrintFlsStats2.txt`, the census shortened), in both its forms: every
/// size on the line after `(concurrent mode failure)`, or one size per line with its demand.
#[test]
fn free_list_census_inside_an_event_is_passed_over() {
    let sizes: String = (3..=256).map(|size| format!("size[{size}] : ")).collect();
    let every_size_on_one_line =
        format!(" (concurrent mode failure){sizes}CMS: Large block 0x00000000f5e8cf98");
    let one_size_a_line = [
        " (concurrent mode failure)size[3] : demand: 1693, old_rate: 0.000000, current_rate: 5079.955078, new_rate: 5079.955078, old_desired: 0, new_desired: 0",
        "size[4] : demand: 726, old_rate: 0.000000, current_rate: 2178.409424, new_rate: 2178.409424, old_desired: 0, new_desired: 0",
        "demand: 1, old_rate: 0.000000, current_rate: 3.000564, new_rate: 3.000564, old_desired: 0, new_desired: 0",
    ];
    for census in [
        vec![every_size_on_one_line.as_str()],
        one_size_a_line.to_vec(),
    ] {
        let mut lines = vec![
            "2014-10-21T21:00:01.180+0200: 21.197: [GCBefore GC:",
            "Statistics for BinaryTreeDictionary:",
            " free=0 frag=0.0000",
            "2014-10-21T21:00:01.180+0200: 21.198: [ParNew: 42954K->42954K(43008K), 0.0000377 secs]2014-10-21T21:00:01.180+0200: 21.198: [CMSCMS: Large block 0x00000000f8424ec0",
            "2014-10-21T21:00:01.180+0200: 21.198: [CMS-concurrent-sweep: 0.002/0.002 secs] [Times: user=0.00 sys=0.00, real=0.00 secs] ",
        ];
        lines.extend(census);
        lines.extend([
            ": 58661K->14131K(95616K), 0.0261361 secs] 101616K->14131K(138624K), [CMS Perm : 2471K->2471K(21248K)]After GC:",
            "Statistics for BinaryTreeDictionary:",
            ", 0.0264843 secs] [Times: user=0.02 sys=0.00, real=0.03 secs] ",
        ]);
        let out = stitch(&lines);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(
            out[0],
            (
                "2014-10-21T21:00:01.180+0200: 21.197: [GC2014-10-21T21:00:01.180+0200: 21.198: [ParNew: 42954K->42954K(43008K), 0.0000377 secs]2014-10-21T21:00:01.180+0200: 21.198: [CMSCMS: Large block 0x00000000f8424ec0 (concurrent mode failure): 58661K->14131K(95616K), 0.0261361 secs] 101616K->14131K(138624K), [CMS Perm : 2471K->2471K(21248K)], 0.0264843 secs] [Times: user=0.02 sys=0.00, real=0.03 secs] ".to_string(),
                1
            )
        );
        assert!(out[1].0.contains("[CMS-concurrent-sweep: "), "{out:?}");
    }
}

#[test]
fn events_whose_line_breaks_were_lost_are_taken_apart() {
    let first = "2.193: [GC 2.193: [DefNew: 17024K->643K(19136K), 0.0084810 secs] 17024K->643K(260032K), 0.0085510 secs] [Times: user=0.00 sys=0.00, real=0.01 secs]";
    let second = "3.001: [Full GC 3.001: [Tenured: 643K->600K(240896K), 0.0200000 secs] 1000K->600K(260032K), [Perm : 2000K->2000K(21248K)], 0.0200000 secs]";
    // Two one-line events, with and without the blanks and the `[Times: ...]` between.
    for glue in ["", " ", "  "] {
        let out = stitch(&[&format!("{first}{glue}{second}")]);
        assert_eq!(
            out,
            [(format!("{first}{glue}"), 1), (second.to_string(), 1)],
            "glued by {glue:?}"
        );
    }
    let without_times = first.split(" [Times").next().unwrap();
    let out = stitch(&[&format!("{without_times} {second}")]);
    assert_eq!(out[1], (second.to_string(), 1));
    // An event whose end, on the next line, runs into another event.
    let out = stitch(&[
        "2.193: [GC (Allocation Failure) ",
        &format!("[PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] {second}"),
        "4.000: [GC (Allocation Failure) ",
        "[PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs]",
    ]);
    assert_eq!(
        out,
        [
            ("2.193: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs] ".to_string(), 1),
            (second.to_string(), 2),
            ("4.000: [GC (Allocation Failure) [PSYoungGen: 1000K->100K(2000K)] 5000K->4100K(9000K), 0.0100000 secs]".to_string(), 3),
        ]
    );
    // Whatever else follows an event on its line stays with it.
    let tail = format!("{first} Heap after GC");
    assert_eq!(stitch(&[&tail]), [(tail.clone(), 1)]);
}

/// Event openings and what follows them: stamps of every form, the words an event opens
/// with and near misses of them, printout starts and fragments.
fn opening_pieces() -> Vec<&'static str> {
    vec![
        "2020-09-13T12:26:37.504+0000: ",
        "2020-09-13T12:26:37.504+0000",
        "2020-13-13T12:26:37.504+0000: ",
        "10.000: ",
        "10.000",
        "10,5: ",
        "#12: ",
        ": ",
        " ",
        "1",
        "-",
        "[GC",
        "[GC ",
        "[Full GC ",
        "[Full",
        "[G",
        "(Allocation Failure) ",
        "[ParNew: 1K->1K(2K), 0.1 secs]",
        "]",
        "Before GC:",
        "{Heap before",
        "[CMS-concurrent-mark: 0.1/0.2 secs]",
        "[GC concurrent-mark-end, 0.0010000 secs]",
        "x",
        "[Times: ",
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// The start of a line that may open an event, cut anywhere after its stamps (where a
    /// printout starts), may open one as [`may_open_event`] tells when asked again.
    #[test]
    fn a_line_cut_after_the_stamps_it_opens_with_opens_as_asked_again(
        pieces in proptest::collection::vec(proptest::sample::select(opening_pieces()), 1..8),
    ) {
        let line = pieces.concat();
        let text = line.as_bytes();
        let mut reader = StampReader::default();
        if let (Outside::MayOpen, Some(stamps)) = (outside_event(text, &mut reader), reader.opening) {
            proptest::prop_assert_eq!(Some(stamps), usual_jdk8_prefix(text), "{}", line);
            for end in stamps.rest_at + 1..=text.len() {
                proptest::prop_assert_eq!(
                    opens_after_stamps(&text[..end], stamps),
                    may_open_event(&text[..end]),
                    "{}", &line[..end]
                );
            }
        }
    }

    /// A line told plain by its last word and the lack of a `[` is one the walk over its
    /// stamps tells plain, leaving no stamps for the next line; every other line is told
    /// by that walk.
    #[test]
    fn a_line_of_stopped_time_is_told_as_its_stamps_tell(
        pieces in proptest::collection::vec(proptest::sample::select(opening_pieces()), 0..6),
        text in proptest::sample::select(vec![
            "Total time for which application threads were stopped: 0.0001 seconds",
            "Application time: 0.0001 seconds", " seconds", "seconds", "0.1 seconds",
        ]),
    ) {
        let line = format!("{}{text}", pieces.concat());
        let (mut quick, mut walked) = (StampReader::default(), StampReader::default());
        let told = outside_event(line.as_bytes(), &mut quick);
        let stamped = if line.starts_with(|c: char| c.is_ascii_digit()) {
            stamped_outside_event(line.as_bytes(), &mut walked)
        } else {
            outside_event(line.as_bytes(), &mut walked)
        };
        proptest::prop_assert_eq!(told, stamped, "{}", line);
        proptest::prop_assert_eq!(quick.opening, walked.opening, "{}", line);
    }

    /// The stamps handed on with an event are those its text starts with, read as the
    /// parser reads them: whatever was cut out of its first line, printed into it or
    /// followed it on the same line.
    #[test]
    fn the_stamps_handed_on_with_an_event_are_its_own(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::sample::select(sweep_pieces()).prop_map(str::to_string),
                proptest::collection::vec(proptest::sample::select(opening_pieces()), 1..8)
                    .prop_map(|pieces| pieces.concat()),
                (
                    proptest::sample::select(vec![
                        "", "2020-09-13T12:26:37.504+0000: ", "2020-09-13T12:26:59.999+0100: ",
                        "2020-09-13T12:27:01.000+0100: ", "2020-13-13T12:26:37.504+0000: ",
                    ]),
                    proptest::sample::select(vec!["", "10.000: ", "10.000: #12: "]),
                    proptest::sample::select(vec!["[GC ", "[Full GC ", "[GC", "[G", "x"]),
                    proptest::collection::vec(proptest::sample::select(opening_pieces()), 0..4),
                )
                    .prop_map(|(date, uptime, word, rest)| format!("{date}{uptime}{word}{}", rest.concat())),
            ],
            1..40,
        ),
    ) {
        let mut stitcher = Stitcher::new();
        let mut handed = Vec::new();
        let mut emit = |l: &[u8], _: u64, piece| {
            if let Piece::Event(stamps) = piece {
                handed.push((l.to_vec(), stamps));
            }
        };
        for (i, line) in lines.iter().enumerate() {
            stitcher.push(line.as_bytes(), i as u64 + 1, &mut emit);
        }
        stitcher.finish(&mut emit);
        for (text, stamps) in handed {
            proptest::prop_assert_eq!(usual_jdk8_prefix(&text), Some(stamps), "{}", String::from_utf8_lossy(&text));
            // Read afresh: neither the stitcher's minute nor the thread's.
            let date = stamps.stamp().wall_ms.map(|_| crate::num::any_iso_timestamp_ms(&text[..28]));
            proptest::prop_assert_eq!(date.flatten(), stamps.stamp().wall_ms);
            proptest::prop_assert_eq!(text.get(stamps.rest_at), Some(&b'['));
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]

    /// A line told to be G1 ergonomics alone is one that the general way, inside an event,
    /// passes over without changing anything: nothing handed on, the event's text, depth
    /// and held lines as they were.
    #[test]
    fn an_ergonomics_line_is_one_the_general_way_passes_over(
        blanks in proptest::sample::select(vec!["", " ", "   ", "\t", " \t"]),
        stamps in proptest::sample::select(vec![
            "", "12.345: ", "2014-03-12T21:18:31.372-0500: 13300.980: ", ": ", "- 1: ",
            "12.345:", "1,5: 2,5: ", "12.345: 12.346: ",
        ]),
        start in proptest::sample::select(vec![
            "[G1Ergonomics (CSet Construction) add young regions to CSet, eden: 10 regions",
            "[G1Ergonomics", "[G1Ergo", "[GC concurrent-mark-start", "[CMS-concurrent-mark: 1.0/1.0 secs",
            "[Eden: 1.0M(1.0M)->0.0B(1.0M)",
        ]),
        middle in proptest::sample::select(vec!["", " [nested: 1]", " x ]", "[[", " ]]"]),
        end in proptest::sample::select(vec![
            "]", "", "] tail", "]]", "] [G1Ergonomics x]", "] 12.3: [GC concurrent-mark-end]",
            ", 0.0071588 secs]",
        ]),
        opening in proptest::sample::select(vec![
            "1.000: [GC pause (G1 Evacuation Pause) (young)",
            "1.000: [GC pause (young) 1.000: [G1Ergonomics (CSet Construction) start]",
            "1.000: [Full GC (Allocation Failure)  1.0M->1.0M(2.0M)",
        ]),
    ) {
        let line = format!("{blanks}{stamps}{start}{middle}{end}");
        if is_ergonomics_line(line.as_bytes()) {
            let mut stitcher = Stitcher::new();
            let mut out = Vec::new();
            let mut emit = |l: &[u8], n: u64, _: Piece| out.push((l.to_vec(), n));
            stitcher.push(opening.as_bytes(), 1, &mut emit);
            proptest::prop_assert!(stitcher.holds_event());
            let before = (stitcher.pending.clone(), stitcher.depth, stitcher.held.text.clone());
            let scan = scan_line(line.as_bytes(), stitcher.depth, Fragments::Sought);
            stitcher.continue_scanned_generally(line.as_bytes(), 2, scan, &mut emit);
            let after = (stitcher.pending.clone(), stitcher.depth, stitcher.held.text.clone());
            proptest::prop_assert_eq!(before, after, "{}", line);
            proptest::prop_assert!(out.is_empty(), "{}: {:?}", line, out);
        }
    }
}

#[test]
fn ergonomics_lines_are_told_by_what_surrounds_the_decision() {
    for line in [
        " 323.580: [G1Ergonomics (CSet Construction) add young regions to CSet, eden: 10 regions]",
        "[G1Ergonomics (Heap Sizing) expand the heap, requested expansion amount: 5242880 bytes]",
        "2014-03-12T21:18:31.372-0500: 13300.980: [G1Ergonomics (Mixed GCs) do not start mixed GCs",
        " 1.0: [G1Ergonomics (CSet Construction) [nested] x]",
    ] {
        assert!(is_ergonomics_line(line.as_bytes()), "{line}");
    }
    for line in [
        " 323.580: [G1Ergonomics (CSet Construction) add young regions] , 0.0071588 secs]",
        " : [G1Ergonomics (CSet Construction) add young regions]",
        "\t323.580: [G1Ergonomics (CSet Construction) add young regions]",
        " 323.580: [GC concurrent-mark-start]",
        ", 0.0071588 secs]",
    ] {
        assert!(!is_ergonomics_line(line.as_bytes()), "{line}");
    }
}
