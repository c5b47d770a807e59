//! The catalogue: every mode has a name, a rule and a description, and every
//! mode is observed on the wire by one of this crate's tests (so no mode can
//! silently turn into `normal`).

use contextgraph_fixture_misbehaving::Mode;

/// The sources of the tests that drive the binary in a mode.
const WIRE_TESTS: [&str; 10] = [
    include_str!("misbehaving_readings.rs"),
    include_str!("misbehaving_baseline.rs"),
    include_str!("misbehaving_frames.rs"),
    include_str!("misbehaving_budget.rs"),
    include_str!("misbehaving_filters.rs"),
    include_str!("misbehaving_verify.rs"),
    include_str!("misbehaving_correlation.rs"),
    include_str!("misbehaving_handshake.rs"),
    include_str!("misbehaving_robustness.rs"),
    include_str!("misbehaving_transport.rs"),
];

#[test]
fn every_mode_but_normal_is_driven_by_a_wire_test() {
    for mode in Mode::ALL.into_iter().filter(|m| *m != Mode::Normal) {
        let quoted = format!("\"{}\"", mode.name());
        assert!(
            WIRE_TESTS.iter().any(|src| src.contains(&quoted)),
            "no wire test spawns --mode {mode}"
        );
    }
}

#[test]
fn every_mode_names_a_rule_and_only_the_gated_ones_are_conformant() {
    for mode in Mode::ALL {
        assert!(
            !mode.rule().is_empty() && !mode.description().is_empty(),
            "{mode}"
        );
    }
    let conformant: Vec<&str> = Mode::ALL
        .iter()
        .filter(|m| m.is_conformant())
        .map(|m| m.name())
        .collect();
    assert_eq!(
        conformant,
        [
            "normal",
            "egress",
            "egress-scope",
            "lockstep",
            "range-past-end",
            "ack-own-version",
            "own-name-verify",
            "anchored-low-score"
        ]
    );
    assert_eq!(Mode::ALL.len(), 44);
}
