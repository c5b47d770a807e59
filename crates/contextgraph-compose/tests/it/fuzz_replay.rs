//! The kept inputs of the `fence` fuzz target (`fuzz/seeds/fence`,
//! `fuzz/regressions/fence`), replayed through the body the libFuzzer
//! program runs.

use contextgraph_compose::fuzz;
use contextgraph_testkit::fuzz_replay::replay;

#[test]
fn fence_inputs_replay_without_a_broken_property() {
    replay("fence", fuzz::fence);
}

/// Finding N4 of issue 26 (look-alike letters forge the fence token):
/// every kept input with the look-alike property asserted (the `N4-…`
/// inputs in `fuzz/regressions/fence/` fail on the code before the fix).
#[test]
fn fence_inputs_hold_the_lookalike_property_n4() {
    replay("fence", |data| fuzz::fence_with(data, true));
}

/// The look-alike oracle itself: it sees the forgeries N4 names, and only
/// through the letters it lists.
#[test]
fn the_lookalike_oracle_reads_cyrillic_and_greek_hex_lookalikes() {
    assert_eq!(fuzz::lookalike_hex('\u{0441}'), Some('c')); // Cyrillic es
    assert_eq!(fuzz::lookalike_hex('\u{043E}'), Some('0')); // Cyrillic o
    assert_eq!(fuzz::lookalike_hex('\u{0417}'), Some('3')); // Cyrillic Ze
    assert_eq!(fuzz::lookalike_hex('\u{0501}'), Some('d')); // Cyrillic komi de
    assert_eq!(fuzz::lookalike_hex('\u{03BF}'), Some('0')); // Greek omicron
    assert_eq!(fuzz::lookalike_hex('c'), None);
    assert_eq!(fuzz::lookalike_hex('\u{0444}'), None); // Cyrillic ef: no hex look-alike
}
