//! The integration tests of `contextgraph-compose`, one module per behaviour, in one
//! test binary (one link instead of one per file).

mod arrival_order;
mod audit;
mod citation_labels;
mod common;
mod composition_json;
mod fence_injection;
mod fencing_round_trip;
mod fuzz_replay;
mod global_budget;
mod golden_output;
mod html_report;
mod parallel_hashing;
mod per_frame_pass;
mod placement;
mod reference_frames;
mod trusted_dedup;
mod wire_frames;
#[path = "../../benches/support/workload.rs"]
mod workload;
