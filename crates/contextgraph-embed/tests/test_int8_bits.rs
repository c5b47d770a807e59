//! An int8 model is pooled from its int8 rows without widening them first,
//! and must give exactly the bits the widened rows gave: the stored vectors
//! of every index were computed that way, and a build and a query must
//! agree on them. The reference here is the pooling code as it was before
//! (dequantise the whole matrix at load, then add `f32` rows), read from
//! the file's tensors independently of the crate's loader.

use std::collections::BTreeMap;

use contextgraph_embed::builtin::BUILTIN_MODEL_BYTES;
use contextgraph_embed::safetensors::{dtype, write, SafeTensors, TensorData};
use contextgraph_embed::{ModelError, ModelSpec, StaticModel, Storage};

/// A deterministic generator (splitmix64), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Uniform in [-1, 1).
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// How the reference computes a sum; every variant but `Exact` breaks the
/// rule, to show the tests can tell.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Variant {
    /// Today's order: `f32(q) * scale` first, then `o + w0*a + w1*b + …`.
    Exact,
    /// The weight multiplies the integer before the scale does.
    ScaleLast,
    /// The four products summed pairwise before joining `o`.
    Pairwise,
    /// The scale forgotten.
    NoScale,
}

/// The widened matrix and the pooling code as they were before rows were
/// kept as int8.
struct Reference {
    dim: usize,
    q: Vec<i8>,
    scales: Vec<f32>,
    weights: Vec<f32>,
    vectors: Vec<f32>,
    variant: Variant,
}

impl Reference {
    fn new(bytes: &[u8], variant: Variant) -> Self {
        let st = SafeTensors::parse(bytes, "reference").expect("parses");
        let emb = st.tensor("embeddings").expect("embeddings");
        assert_eq!(emb.dtype, "I8");
        let dim = emb.shape[1] as usize;
        let f32s = |name: &str| -> Vec<f32> {
            let info = st.tensor(name).expect(name);
            st.bytes(info)
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect()
        };
        let scales = f32s("scales");
        let weights = f32s("weights");
        let q: Vec<i8> = st.bytes(emb).iter().map(|&b| b as i8).collect();
        let mut vectors = Vec::with_capacity(q.len());
        for (row, scale) in q.chunks_exact(dim).zip(&scales) {
            vectors.extend(row.iter().map(|&q| match variant {
                Variant::NoScale => f32::from(q),
                _ => f32::from(q) * scale,
            }));
        }
        Self {
            dim,
            q,
            scales,
            weights,
            vectors,
            variant,
        }
    }

    fn weighted_row(&self, id: u32) -> Option<(f32, &[f32])> {
        let id = id as usize;
        Some((
            *self.weights.get(id)?,
            self.vectors.get(id * self.dim..(id + 1) * self.dim)?,
        ))
    }

    fn add_row(&self, id: u32, out: &mut [f32]) {
        let Some((w, row)) = self.weighted_row(id) else {
            return;
        };
        if self.variant == Variant::ScaleLast {
            let (s, q) = (self.scales[id as usize], &self.q[id as usize * self.dim..]);
            out.iter_mut()
                .zip(q)
                .for_each(|(o, &q)| *o += w * f32::from(q) * s);
            return;
        }
        out.iter_mut().zip(row).for_each(|(o, r)| *o += w * r);
    }

    fn add_rows(&self, ids: &[u32], out: &mut [f32]) {
        let mut quads = ids.chunks_exact(4);
        for quad in &mut quads {
            let rows = [
                self.weighted_row(quad[0]),
                self.weighted_row(quad[1]),
                self.weighted_row(quad[2]),
                self.weighted_row(quad[3]),
            ];
            match rows {
                [Some((w0, r0)), Some((w1, r1)), Some((w2, r2)), Some((w3, r3))]
                    if matches!(self.variant, Variant::Exact | Variant::NoScale) =>
                {
                    out.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3).for_each(
                        |((((o, a), b), c), d)| {
                            *o = *o + w0 * a + w1 * b + w2 * c + w3 * d;
                        },
                    );
                }
                [Some((w0, r0)), Some((w1, r1)), Some((w2, r2)), Some((w3, r3))]
                    if self.variant == Variant::Pairwise =>
                {
                    out.iter_mut().zip(r0).zip(r1).zip(r2).zip(r3).for_each(
                        |((((o, a), b), c), d)| {
                            *o += (w0 * a + w1 * b) + (w2 * c + w3 * d);
                        },
                    );
                }
                _ => quad.iter().for_each(|&id| self.add_row(id, out)),
            }
        }
        for &id in quads.remainder() {
            self.add_row(id, out);
        }
    }

    fn encode_ids(&self, ids: &[u32]) -> Option<Vec<f32>> {
        let mut out = vec![0.0; self.dim];
        ids.iter().for_each(|&id| self.add_row(id, &mut out));
        let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt();
        if !(norm.is_finite() && norm > 0.0) {
            return None;
        }
        out.iter_mut().for_each(|x| *x /= norm);
        Some(out)
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// A distinct lowercase word for `i` that the tokenizer keeps whole (no
/// digits, no plural `s`).
fn word(mut i: usize) -> String {
    const LETTERS: &[u8] = b"abcdefghijklmnopqrtuvwxyz";
    let mut w = String::from("zq");
    loop {
        w.push(char::from(LETTERS[i % LETTERS.len()]));
        i /= LETTERS.len();
        if i == 0 {
            return w;
        }
    }
}

/// A random int8 model: `rows` tokens `t0…`, `dim` components, rows of
/// very different lengths and weights (some zero).
fn random_int8_model(rng: &mut Rng, rows: usize, dim: usize) -> Vec<u8> {
    let vectors = (0..rows)
        .flat_map(|_| {
            let len = [1e-3, 0.5, 3.0, 1e3][rng.below(4)];
            (0..dim).map(|_| rng.unit() * len).collect::<Vec<f32>>()
        })
        .collect();
    let weights = (0..rows)
        .map(|_| match rng.below(8) {
            0 => 0.0,
            _ => rng.unit().abs() * 4.0,
        })
        .collect();
    ModelSpec {
        name: "random".into(),
        tokens: (0..rows).map(word).collect(),
        dim,
        vectors,
        weights: Some(weights),
        metadata: BTreeMap::new(),
    }
    .to_safetensors(Storage::Int8)
    .expect("valid spec")
}

/// Random id sequences (with ids past the vocabulary, and every length
/// modulo 4), each summed from a random start by the model and by `reference`;
/// the number of sequences whose bits differ by `add_rows`, by `add_text`
/// and by `encode`.
fn mismatches(
    model: &StaticModel,
    reference: &Reference,
    rng: &mut Rng,
    runs: usize,
) -> [usize; 3] {
    let rows = model.vocab_len();
    let dim = model.dim();
    let mut bad = [0; 3];
    for run in 0..runs {
        let len = run % 67;
        let ids: Vec<u32> = (0..len)
            .map(|_| match rng.below(16) {
                0 => (rows + rng.below(3)) as u32,
                1 => u32::MAX,
                _ => rng.below(rows) as u32,
            })
            .collect();
        let start: Vec<f32> = (0..dim)
            .map(|_| if run % 2 == 0 { 0.0 } else { rng.unit() })
            .collect();

        let (mut got, mut want) = (start.clone(), start.clone());
        model.add_rows(&ids, &mut got);
        reference.add_rows(&ids, &mut want);
        let rows_differ = bits(&got) != bits(&want);

        // The one-row path, through the text the ids' tokens spell.
        let text: Vec<&str> = ids
            .iter()
            .filter_map(|&i| model.token(i as usize))
            .collect();
        let text = text.join(" ");
        let mut known = Vec::new();
        model.for_each_known_token(&text, |id, _| known.push(id));
        assert!(
            known.len() * 2 >= text.len() / 8,
            "the tokens are mostly known"
        );
        let (mut got, mut want) = (start.clone(), start);
        model.add_text(&text, &mut got);
        known.iter().for_each(|&i| reference.add_row(i, &mut want));
        let text_differs = bits(&got) != bits(&want);

        let encoded = model.encode(&text).map(|e| bits(e.as_slice()));
        let encode_differs = encoded != reference.encode_ids(&known).map(|v| bits(&v));

        bad[0] += usize::from(rows_differ);
        bad[1] += usize::from(text_differs);
        bad[2] += usize::from(encode_differs);
    }
    bad
}

#[test]
fn int8_pooling_gives_the_bits_of_the_dequantised_matrix() {
    let mut rng = Rng(29);
    for (rows, dim) in [(300, 37), (64, 128), (9, 1), (40, 8)] {
        let bytes = random_int8_model(&mut rng, rows, dim);
        let model = StaticModel::from_bytes(&bytes, "random").expect("loads");
        let reference = Reference::new(&bytes, Variant::Exact);
        assert_eq!(
            mismatches(&model, &reference, &mut rng, 600),
            [0; 3],
            "{rows}×{dim}"
        );
        for id in 0..rows {
            let want = &reference.vectors[id * dim..(id + 1) * dim];
            assert_eq!(model.row(id).map(bits), Some(bits(want)), "row {id}");
        }
        assert_eq!(model.row(rows), None);
    }
}

#[test]
fn the_builtin_model_pools_as_its_dequantised_matrix_did() {
    let reference = Reference::new(BUILTIN_MODEL_BYTES, Variant::Exact);
    let builtin = contextgraph_embed::builtin().expect("built-in model");
    let copied = StaticModel::from_bytes(BUILTIN_MODEL_BYTES, "copy").expect("loads");
    let mut rng = Rng(7);
    assert_eq!(mismatches(builtin, &reference, &mut rng, 400), [0; 3]);
    assert_eq!(mismatches(&copied, &reference, &mut rng, 400), [0; 3]);
    assert_eq!(builtin.fingerprint(), copied.fingerprint());
    for id in [0, 1, 17, 4096, builtin.vocab_len() - 1] {
        let want = &reference.vectors[id * 128..(id + 1) * 128];
        assert_eq!(builtin.row(id).map(bits), Some(bits(want)), "row {id}");
    }
}

#[test]
fn a_wrong_order_or_a_dropped_scale_would_be_caught() {
    let mut rng = Rng(3);
    let bytes = random_int8_model(&mut rng, 300, 37);
    let model = StaticModel::from_bytes(&bytes, "random").expect("loads");
    // The quad order shows in `add_rows` only; the others everywhere.
    for (variant, least) in [
        (Variant::ScaleLast, [300; 3]),
        (Variant::Pairwise, [300, 0, 0]),
        (Variant::NoScale, [300; 3]),
    ] {
        let wrong = Reference::new(&bytes, variant);
        let bad = mismatches(&model, &wrong, &mut rng, 600);
        assert!(
            bad.iter().zip(least).all(|(b, l)| *b >= l),
            "{variant:?}: only {bad:?} of 600 sums differ"
        );
    }
    let builtin = contextgraph_embed::builtin().expect("built-in model");
    let wrong = Reference::new(BUILTIN_MODEL_BYTES, Variant::Pairwise);
    assert!(mismatches(builtin, &wrong, &mut rng, 200)[0] > 100);
}

fn int8_file(q: Vec<u8>, scales: &[f32]) -> Vec<u8> {
    let rows = scales.len();
    let dim = q.len() / rows;
    let f32_bytes = |v: &[f32]| v.iter().flat_map(|x| x.to_le_bytes()).collect();
    let tensor = |name: &str, dtype: &str, shape: &[usize], bytes| TensorData {
        name: name.into(),
        dtype: dtype.into(),
        shape: shape.iter().map(|&d| d as u64).collect(),
        bytes,
    };
    let vocab: Vec<String> = (0..rows).map(|i| format!("t{i}")).collect();
    write(
        &[
            tensor("embeddings", "I8", &[rows, dim], q),
            tensor("scales", dtype::FLOAT32, &[rows], f32_bytes(scales)),
        ],
        &BTreeMap::from([
            ("tokenizer".to_string(), "code-split-v1".to_string()),
            ("vocab".to_string(), vocab.join("\n")),
        ]),
    )
}

#[test]
fn a_finite_scale_whose_values_overflow_is_a_bad_value_on_its_row() {
    let big = f32::MAX / 100.0;
    // Row 1's largest value is 2 × big: finite. Row 2's is 127 × big.
    let q = vec![1, 0, 0, 2, 0, 127, 1, 0];
    let file = int8_file(q, &[1.0, big, big, f32::MAX]);
    let err = StaticModel::from_bytes(&file, "big").expect_err("overflow");
    assert!(
        matches!(err, ModelError::BadValue { ref tensor, row: 2, .. } if tensor == "embeddings"),
        "{err}"
    );
    // -128 × (f32::MAX / 128) is exactly -f32::MAX: finite.
    let edge = f32::MAX / 128.0;
    let file = int8_file(vec![0x80, 0x7f], &[edge, -edge]);
    let model = StaticModel::from_bytes(&file, "edge").expect("finite");
    assert_eq!(model.row(0), Some(&[-f32::MAX][..]));
    assert_eq!(model.row(1), Some(&[-127.0 * edge][..]));
    // Just past it, -128 overflows.
    let file = int8_file(
        vec![0x7f, 0x80],
        &[edge, f32::from_bits(edge.to_bits() + 1)],
    );
    let err = StaticModel::from_bytes(&file, "edge").expect_err("overflow");
    assert!(matches!(err, ModelError::BadValue { row: 1, .. }), "{err}");
}
