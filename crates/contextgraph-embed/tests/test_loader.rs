//! The loader reads what the writer writes, in every storage type, and
//! rejects each kind of malformed or mismatched file with the matching typed
//! error, naming the file.

use std::collections::BTreeMap;

use contextgraph_embed::safetensors::{dtype, write, TensorData};
use contextgraph_embed::{ModelError, ModelSpec, StaticModel, Storage};

/// A three-token, four-dimensional model.
fn tiny_spec() -> ModelSpec {
    ModelSpec {
        name: "tiny".to_string(),
        tokens: vec!["budget".into(), "cost".into(), "socket".into()],
        dim: 4,
        vectors: vec![
            1.0, 0.0, 0.0, 0.0, //
            0.8, 0.6, 0.0, 0.0, //
            0.0, 0.0, 1.0, 0.0,
        ],
        weights: Some(vec![1.0, 2.0, 0.5]),
        metadata: BTreeMap::new(),
    }
}

fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn tensor(name: &str, dtype: &str, shape: &[u64], bytes: Vec<u8>) -> TensorData {
    TensorData {
        name: name.into(),
        dtype: dtype.into(),
        shape: shape.to_vec(),
        bytes,
    }
}

fn meta(vocab: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("tokenizer".to_string(), "code-split-v1".to_string()),
        ("vocab".to_string(), vocab.to_string()),
    ])
}

/// A hand-built file with the given tensors and metadata.
fn raw(tensors: &[TensorData], metadata: &BTreeMap<String, String>) -> Vec<u8> {
    write(tensors, metadata)
}

/// A file whose header is `header` verbatim, followed by `data`.
fn with_header(header: &str, data: &[u8]) -> Vec<u8> {
    let mut out = (header.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[test]
fn every_storage_round_trips_within_its_precision() {
    for (storage, tolerance) in [
        (Storage::Float32, 0.0),
        (Storage::Float16, 1e-3),
        (Storage::Int8, 1e-2),
    ] {
        let bytes = tiny_spec().to_safetensors(storage).expect("valid spec");
        let model = StaticModel::from_bytes(&bytes, "tiny.safetensors").expect("loads");
        assert_eq!(
            (model.vocab_len(), model.dim(), model.name()),
            (3, 4, "tiny")
        );
        assert_eq!(model.token_id("cost"), Some(1));
        assert_eq!(model.weight(1), Some(2.0));
        let row = model.row(1).expect("row 1");
        for (got, want) in row.iter().zip([0.8, 0.6, 0.0, 0.0]) {
            assert!(
                (got - want).abs() <= tolerance,
                "{storage:?}: {got} vs {want}"
            );
        }
    }
}

#[test]
fn loads_from_a_path_and_reads_a_sibling_vocab_when_the_metadata_has_none() {
    let dir = tempfile::tempdir().expect("tempdir");
    let spec = tiny_spec();
    let tensors = [
        tensor(
            "embeddings",
            dtype::FLOAT32,
            &[3, 4],
            f32_bytes(&spec.vectors),
        ),
        tensor("weights", dtype::FLOAT32, &[3], f32_bytes(&[1.0, 2.0, 0.5])),
    ];
    let metadata = BTreeMap::from([("tokenizer".to_string(), "code-split-v1".to_string())]);
    let path = dir.path().join("model.safetensors");
    std::fs::write(&path, raw(&tensors, &metadata)).expect("write model");

    let err = StaticModel::load(&path).expect_err("no vocab anywhere yet");
    assert!(matches!(err, ModelError::Vocab { .. }), "{err}");
    assert!(err.to_string().contains("vocab.txt"), "{err}");

    std::fs::write(dir.path().join("vocab.txt"), "budget\ncost\nsocket\n").expect("write vocab");
    let model = StaticModel::load(&path).expect("loads with the sibling vocab");
    assert_eq!(model.token_id("socket"), Some(2));
    assert_eq!(model.file(), path.display().to_string());
}

#[test]
fn a_missing_file_is_an_io_error_naming_it() {
    let err = StaticModel::load(std::path::Path::new("/nonexistent/model.safetensors"))
        .expect_err("no such file");
    assert!(matches!(err, ModelError::Io { .. }), "{err}");
    assert!(
        err.to_string().contains("/nonexistent/model.safetensors"),
        "{err}"
    );
}

#[test]
fn a_file_shorter_than_the_length_prefix_is_truncated() {
    let err = StaticModel::from_bytes(&[1, 2, 3], "short.safetensors").expect_err("3 bytes");
    assert!(matches!(err, ModelError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("short.safetensors"), "{err}");
}

#[test]
fn a_header_longer_than_the_file_is_truncated() {
    let mut bytes = 1000u64.to_le_bytes().to_vec();
    bytes.extend_from_slice(b"{}");
    let err = StaticModel::from_bytes(&bytes, "cut.safetensors").expect_err("cut header");
    assert!(matches!(err, ModelError::Truncated { .. }), "{err}");
}

#[test]
fn a_huge_header_length_is_refused_before_allocating() {
    let bytes = u64::MAX.to_le_bytes().to_vec();
    let err = StaticModel::from_bytes(&bytes, "huge.safetensors").expect_err("huge header");
    assert!(matches!(err, ModelError::MalformedHeader { .. }), "{err}");
}

#[test]
fn a_header_that_is_not_json_is_malformed() {
    let err = StaticModel::from_bytes(&with_header("{not json", &[]), "bad.safetensors")
        .expect_err("bad JSON");
    assert!(matches!(err, ModelError::MalformedHeader { .. }), "{err}");
    let err = StaticModel::from_bytes(&with_header("[1, 2]", &[]), "bad.safetensors")
        .expect_err("not an object");
    assert!(matches!(err, ModelError::MalformedHeader { .. }), "{err}");
}

#[test]
fn tensor_entries_are_checked_field_by_field() {
    let cases = [
        // Unknown dtype.
        r#"{"embeddings": {"dtype": "QUAD", "shape": [1, 1], "data_offsets": [0, 1]}}"#,
        // Shape is not integers.
        r#"{"embeddings": {"dtype": "I8", "shape": [1, -1], "data_offsets": [0, 1]}}"#,
        // Offsets backwards.
        r#"{"embeddings": {"dtype": "I8", "shape": [1, 1], "data_offsets": [1, 0]}}"#,
        // Byte length disagrees with the shape.
        r#"{"embeddings": {"dtype": dtype::FLOAT32, "shape": [1, 1], "data_offsets": [0, 1]}}"#,
        // Metadata values must be strings.
        r#"{"__metadata__": {"vocab": 3}}"#,
    ];
    for header in cases {
        let err = StaticModel::from_bytes(&with_header(header, &[0]), "entry.safetensors")
            .expect_err(header);
        assert!(
            matches!(err, ModelError::MalformedHeader { .. }),
            "{header}: {err}"
        );
    }
}

#[test]
fn data_shorter_than_the_offsets_is_truncated() {
    let mut bytes = tiny_spec()
        .to_safetensors(Storage::Float32)
        .expect("valid spec");
    bytes.truncate(bytes.len() - 5);
    let err = StaticModel::from_bytes(&bytes, "cut.safetensors").expect_err("cut data");
    assert!(matches!(err, ModelError::Truncated { .. }), "{err}");
    assert!(err.to_string().contains("cut.safetensors"), "{err}");
}

#[test]
fn trailing_or_overlapping_bytes_are_malformed() {
    let mut bytes = tiny_spec()
        .to_safetensors(Storage::Float32)
        .expect("valid spec");
    bytes.extend_from_slice(&[0; 4]);
    let err = StaticModel::from_bytes(&bytes, "long.safetensors").expect_err("trailing data");
    assert!(matches!(err, ModelError::MalformedHeader { .. }), "{err}");

    let header = r#"{"a": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]}, "b": {"dtype": "I8", "shape": [2], "data_offsets": [1, 3]}}"#;
    let err = StaticModel::from_bytes(&with_header(header, &[0; 3]), "overlap.safetensors")
        .expect_err("overlap");
    assert!(matches!(err, ModelError::MalformedHeader { .. }), "{err}");
}

#[test]
fn embeddings_in_an_unsupported_dtype_are_a_wrong_dtype() {
    let tensors = [tensor("embeddings", dtype::FLOAT64, &[3, 4], vec![0; 96])];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "f64.safetensors",
    )
    .expect_err(dtype::FLOAT64);
    match err {
        ModelError::WrongDtype { tensor, found, .. } => {
            assert_eq!(
                (tensor.as_str(), found.as_str()),
                ("embeddings", dtype::FLOAT64)
            );
        }
        other => panic!("expected WrongDtype, got {other}"),
    }
}

#[test]
fn weights_in_the_wrong_dtype_or_length_are_rejected() {
    let spec = tiny_spec();
    let emb = || {
        tensor(
            "embeddings",
            dtype::FLOAT32,
            &[3, 4],
            f32_bytes(&spec.vectors),
        )
    };
    let tensors = [emb(), tensor("weights", dtype::FLOAT16, &[3], vec![0; 6])];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "w.safetensors",
    )
    .expect_err("f16 weights");
    assert!(matches!(err, ModelError::WrongDtype { .. }), "{err}");

    let tensors = [
        emb(),
        tensor("weights", dtype::FLOAT32, &[2], f32_bytes(&[1.0, 1.0])),
    ];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "w.safetensors",
    )
    .expect_err("short weights");
    assert!(matches!(err, ModelError::BadShape { .. }), "{err}");

    let tensors = [
        emb(),
        tensor(
            "weights",
            dtype::FLOAT32,
            &[3],
            f32_bytes(&[1.0, -1.0, 1.0]),
        ),
    ];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "w.safetensors",
    )
    .expect_err("negative weight");
    assert!(matches!(err, ModelError::BadValue { row: 1, .. }), "{err}");
}

#[test]
fn int8_embeddings_need_scales_and_float_embeddings_refuse_them() {
    let tensors = [tensor("embeddings", "I8", &[3, 4], vec![0; 12])];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "q.safetensors",
    )
    .expect_err("no scales");
    assert!(
        matches!(err, ModelError::MissingTensor { ref tensor, .. } if tensor == "scales"),
        "{err}"
    );

    let spec = tiny_spec();
    let tensors = [
        tensor(
            "embeddings",
            dtype::FLOAT32,
            &[3, 4],
            f32_bytes(&spec.vectors),
        ),
        tensor("scales", dtype::FLOAT32, &[3], f32_bytes(&[1.0; 3])),
    ];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "q.safetensors",
    )
    .expect_err("stray scales");
    assert!(matches!(err, ModelError::BadShape { .. }), "{err}");
}

#[test]
fn a_file_without_embeddings_is_a_missing_tensor() {
    let tensors = [tensor("weights", dtype::FLOAT32, &[1], f32_bytes(&[1.0]))];
    let err = StaticModel::from_bytes(&raw(&tensors, &meta("budget")), "none.safetensors")
        .expect_err("no embeddings");
    assert!(
        matches!(err, ModelError::MissingTensor { ref tensor, .. } if tensor == "embeddings"),
        "{err}"
    );
}

#[test]
fn embeddings_of_the_wrong_rank_or_empty_are_a_bad_shape() {
    for shape in [vec![12u64], vec![3, 0], vec![1, 3, 4]] {
        let n: u64 = shape.iter().product();
        let tensors = [tensor("embeddings", "I8", &shape, vec![0; n as usize])];
        let err = StaticModel::from_bytes(&raw(&tensors, &meta("budget")), "rank.safetensors")
            .expect_err("bad rank");
        assert!(
            matches!(err, ModelError::BadShape { .. }),
            "{shape:?}: {err}"
        );
    }
}

#[test]
fn a_vocabulary_that_does_not_match_the_rows_is_rejected() {
    let spec = tiny_spec();
    let emb = || {
        [tensor(
            "embeddings",
            dtype::FLOAT32,
            &[3, 4],
            f32_bytes(&spec.vectors),
        )]
    };
    for (vocab, why) in [
        ("budget\ncost", "too few tokens"),
        ("budget\ncost\nsocket\nextra", "too many tokens"),
        ("budget\nbudget\nsocket", "a duplicate"),
        ("budget\n\nsocket", "an empty token"),
        ("budget\nco st\nsocket", "whitespace in a token"),
    ] {
        let err = StaticModel::from_bytes(&raw(&emb(), &meta(vocab)), "vocab.safetensors")
            .expect_err(why);
        assert!(matches!(err, ModelError::Vocab { .. }), "{why}: {err}");
        assert!(err.to_string().contains("vocab.safetensors"), "{err}");
    }
}

#[test]
fn a_model_from_another_tokenizer_or_without_one_is_refused() {
    let spec = tiny_spec();
    let tensors = [tensor(
        "embeddings",
        dtype::FLOAT32,
        &[3, 4],
        f32_bytes(&spec.vectors),
    )];
    let mut metadata = meta("budget\ncost\nsocket");
    metadata.insert("tokenizer".into(), "wordpiece".into());
    let err = StaticModel::from_bytes(&raw(&tensors, &metadata), "bert.safetensors")
        .expect_err("other tokenizer");
    assert!(
        matches!(err, ModelError::Metadata { ref key, .. } if key == "tokenizer"),
        "{err}"
    );
    metadata.remove("tokenizer");
    let err = StaticModel::from_bytes(&raw(&tensors, &metadata), "bert.safetensors")
        .expect_err("no tokenizer");
    assert!(matches!(err, ModelError::Metadata { .. }), "{err}");
}

#[test]
fn nan_vectors_and_scales_are_bad_values() {
    let mut spec = tiny_spec();
    spec.vectors[5] = f32::NAN;
    let bytes = spec
        .to_safetensors(Storage::Float32)
        .expect("writer does not judge values");
    let err = StaticModel::from_bytes(&bytes, "nan.safetensors").expect_err("NaN");
    assert!(matches!(err, ModelError::BadValue { row: 1, .. }), "{err}");

    let tensors = [
        tensor("embeddings", "I8", &[3, 4], vec![1; 12]),
        tensor(
            "scales",
            dtype::FLOAT32,
            &[3],
            f32_bytes(&[1.0, 1.0, f32::INFINITY]),
        ),
    ];
    let err = StaticModel::from_bytes(
        &raw(&tensors, &meta("budget\ncost\nsocket")),
        "inf.safetensors",
    )
    .expect_err("infinite scale");
    assert!(matches!(err, ModelError::BadValue { row: 2, .. }), "{err}");
}

#[test]
fn vectors_stored_by_an_index_are_checked_against_the_model() {
    let bytes = tiny_spec()
        .to_safetensors(Storage::Int8)
        .expect("valid spec");
    let model = StaticModel::from_bytes(&bytes, "tiny.safetensors").expect("loads");
    assert!(model.check_dim(4).is_ok());
    let err = model.check_dim(96).expect_err("dimension mismatch");
    assert!(
        matches!(
            err,
            ModelError::DimMismatch {
                model_dim: 4,
                expected_dim: 96,
                ..
            }
        ),
        "{err}"
    );
    assert!(model.check_compatible(4, model.fingerprint()).is_ok());
    let err = model.check_compatible(4, "0123").expect_err("other model");
    assert!(matches!(err, ModelError::ModelMismatch { .. }), "{err}");

    // A different model of the same shape has a different fingerprint.
    let mut other = tiny_spec();
    other.vectors[0] = 0.5;
    let other = StaticModel::from_bytes(&other.to_safetensors(Storage::Int8).expect("valid"), "o")
        .expect("loads");
    assert_ne!(other.fingerprint(), model.fingerprint());
}

#[test]
fn the_writer_refuses_inconsistent_specs() {
    let mut spec = tiny_spec();
    spec.vectors.pop();
    assert!(spec.to_safetensors(Storage::Float32).is_err());
    let mut spec = tiny_spec();
    spec.weights = Some(vec![1.0]);
    assert!(spec.to_safetensors(Storage::Float32).is_err());
    let mut spec = tiny_spec();
    spec.tokens[0] = "two words".into();
    assert!(spec.to_safetensors(Storage::Float32).is_err());
}
