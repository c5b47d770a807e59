//! The composed bytes are a contract (prompt caches key on them, D2): the
//! benchmark workload must compose to exactly these digests, whatever
//! optimisation the composer gets. A change here is a change of output.

use crate::workload;

use contextgraph_compose::{compose, sha256_digest, Budget, Composition, Options, Placement};

fn digest_of(c: &Composition) -> String {
    sha256_digest(serde_json::to_string(c).expect("serialises").as_bytes())
}

fn composed(n: usize, budget: Budget, placement: Placement) -> Composition {
    let outcomes = workload::candidates(n);
    compose(&outcomes, &Options::new(budget).with_placement(placement)).expect("composes")
}

#[test]
fn d2_golden_stable_composition_of_the_bench_workload_is_byte_identical() {
    let c = composed(3000, Budget::model_tokens(8000), Placement::Stable);
    assert_eq!(
        digest_of(&c),
        "sha256:45cc5e9adab215394ddcd31b560906ede97e2208f5e39f8f2afd14a5f3ff20cb"
    );
}

#[test]
fn d2_golden_ranked_composition_of_the_bench_workload_is_byte_identical() {
    let c = composed(3000, Budget::budget_tokens(400_000), Placement::Ranked);
    assert_eq!(
        digest_of(&c),
        "sha256:26e9323ac595844de637f79c0a4fe9894180f485a28233ad610f4728b87d15af"
    );
}
