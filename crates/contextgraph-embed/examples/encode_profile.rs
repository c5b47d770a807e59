//! Encodes a 50-line chunk of this crate's source N times with the built-in
//! model, for instruction counts under callgrind or `perf stat`, which stay
//! meaningful on a busy machine where wall-clock benches do not.
//!
//! ```text
//! valgrind --tool=callgrind target/release/examples/encode_profile 1000
//! ```

use std::hint::black_box;

use contextgraph_embed::builtin;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1000);
    let model = match builtin() {
        Ok(m) => m,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let chunk: String = include_str!("../src/encode.rs")
        .lines()
        .skip(60)
        .take(50)
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = vec![0.0f32; model.dim()];
    let mut known = 0usize;
    for _ in 0..n {
        known += usize::from(model.encode_into(black_box(&chunk), &mut out));
    }
    println!("{} bytes, {n} encodings, {known} non-empty", chunk.len());
}
