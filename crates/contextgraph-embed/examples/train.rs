//! Trains a static embedding model from unpacked package sources: the
//! count-based recipe (co-occurrence, PPMI, SVD; how v2 was made), or with
//! `--contrastive-from MODEL` the contrastive fine-tuning of a model's rows
//! (how the shipped v3 was made from v2; the crate's README has the exact
//! command).
//!
//! ```text
//! cargo run --release -p contextgraph-embed --example train -- \
//!     --source ~/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f \
//!     --exclude-file crates/contextgraph-embed/bench-excluded.txt \
//!     --out target/v2.safetensors \
//!     --corpus crates/contextgraph-embed/CORPUS.md
//! ```
//!
//! Every directory directly under a `--source` is one package (a crate, an
//! unpacked sdist or npm tarball) named `NAME-VERSION`. A package is used
//! only when its manifest (or, for a Debian source package, its
//! `debian/copyright`) declares a permissive licence (see
//! `train::corpus::PERMISSIVE`), so the derived model may be redistributed;
//! packages named with `--exclude NAME` or listed in `--exclude-file` (one
//! name per line, `#` comments; compared by `train::corpus::project_key`,
//! so `ruby-rack` is `rack`) are skipped, which is how the retrieval
//! benchmarks' own projects are kept out of training. The run is deterministic: files
//! are read in sorted order and the SVD is seeded.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use contextgraph_embed::train::corpus::{
    declared_licence, is_excluded, is_permissive, package_files, project_key, split_version,
    version_key,
};
use contextgraph_embed::train::pairs::{mine_pairs, question_frame, MinedPair, PairKind};
use contextgraph_embed::train::{train, train_contrastive, ContrastiveConfig, Table, TrainConfig};
use contextgraph_embed::{ModelSpec, StaticModel, Storage};

struct Args {
    sources: Vec<PathBuf>,
    exclude: BTreeSet<String>,
    out: PathBuf,
    corpus: Option<PathBuf>,
    config: TrainConfig,
    /// Fine-tune this model's rows contrastively instead of PPMI + SVD.
    contrastive_from: Option<PathBuf>,
    contrastive: ContrastiveConfig,
    /// Times each file pair is repeated per epoch (module docs are rarer
    /// than item docs and answer architecture questions).
    file_repeat: usize,
    max_query: usize,
    max_doc: usize,
    name: String,
    /// Share of the fine-tuned change kept: rows = start + blend * (trained - start).
    blend: f32,
    /// Share of pairs whose query is put in a question frame.
    question_share: f32,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        sources: Vec::new(),
        exclude: BTreeSet::new(),
        out: PathBuf::from("code-static.safetensors"),
        corpus: None,
        config: TrainConfig::default(),
        contrastive_from: None,
        contrastive: ContrastiveConfig::default(),
        file_repeat: 1,
        max_query: 64,
        max_doc: 384,
        name: "code-static-v2".to_string(),
        blend: 1.0,
        question_share: 0.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--source" => args.sources.push(PathBuf::from(value()?)),
            "--exclude" => {
                args.exclude.insert(project_key(&value()?));
            }
            "--exclude-file" => {
                let path = value()?;
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                for line in text.lines() {
                    let name = line.split('#').next().unwrap_or("").trim();
                    if !name.is_empty() {
                        args.exclude.insert(project_key(name));
                    }
                }
            }
            "--out" => args.out = PathBuf::from(value()?),
            "--corpus" => args.corpus = Some(PathBuf::from(value()?)),
            "--vocab" => args.config.vocab_size = number(&flag, &value()?)?,
            "--dim" => args.config.dim = number(&flag, &value()?)?,
            "--window" => args.config.window = number(&flag, &value()?)?,
            "--uniform" => args.config.harmonic = false,
            "--align" => args.config.align_weight = number(&flag, &value()?)?,
            "--alpha" => args.config.alpha = number(&flag, &value()?)?,
            "--eig-power" => args.config.eig_power = number(&flag, &value()?)?,
            "--min-groups" => args.config.min_groups = number(&flag, &value()?)?,
            "--contrastive-from" => args.contrastive_from = Some(PathBuf::from(value()?)),
            "--epochs" => args.contrastive.epochs = number(&flag, &value()?)?,
            "--lr" => args.contrastive.learning_rate = number(&flag, &value()?)?,
            "--temperature" => args.contrastive.temperature = number(&flag, &value()?)?,
            "--batch" => args.contrastive.batch_size = number(&flag, &value()?)?,
            "--anchor" => args.contrastive.anchor = number(&flag, &value()?)?,
            "--file-repeat" => args.file_repeat = number(&flag, &value()?)?,
            "--max-query" => args.max_query = number(&flag, &value()?)?,
            "--max-doc" => args.max_doc = number(&flag, &value()?)?,
            "--name" => args.name = value()?,
            "--questions" => args.question_share = number(&flag, &value()?)?,
            "--blend" => args.blend = number(&flag, &value()?)?,
            "--package-batches" => args.contrastive.package_batches = true,
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.sources.is_empty() {
        return Err("give at least one --source DIR".to_string());
    }
    Ok(args)
}

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, String> {
    value
        .parse()
        .map_err(|_| format!("{flag} needs a number, got {value}"))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    // (package, path within the package, text)
    let mut docs: Vec<(String, String, String)> = Vec::new();
    let mut corpus = String::new();
    let mut skipped = String::new();
    let mut packages: Vec<(String, String, PathBuf)> = Vec::new();
    for source in &args.sources {
        let Ok(entries) = std::fs::read_dir(source) else {
            eprintln!("error: cannot read {}", source.display());
            return ExitCode::from(2);
        };
        for dir in entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
        {
            let dir_name = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let (name, version) = split_version(&dir_name);
            packages.push((name.to_string(), version.to_string(), dir.clone()));
        }
    }
    // One version per package (the highest), so a crate present in two
    // versions does not count twice.
    packages.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then_with(|| version_key(&b.1).cmp(&version_key(&a.1)))
    });
    packages.dedup_by(|later, first| later.0 == first.0);
    for (name, version, dir) in &packages {
        if is_excluded(name, &args.exclude) {
            let _ = writeln!(
                skipped,
                "| {name} | {version} | excluded (benchmark project) |"
            );
            continue;
        }
        let licence = declared_licence(dir).unwrap_or_default();
        if !is_permissive(&licence) {
            let _ = writeln!(
                skipped,
                "| {name} | {version} | licence `{licence}` not on the permissive list |"
            );
            continue;
        }
        let mut files = Vec::new();
        package_files(dir, &mut files);
        if files.is_empty() {
            continue;
        }
        let bytes: usize = files.iter().map(|(_, t)| t.len()).sum();
        let _ = writeln!(
            corpus,
            "| {name} | {version} | {licence} | {} | {bytes} |",
            files.len()
        );
        docs.extend(files.into_iter().map(|(path, text)| {
            let rel = path.strip_prefix(dir).unwrap_or(&path);
            // npm tarballs unpack under `package/`, not part of the path a
            // project would index.
            let rel = rel.strip_prefix("package").unwrap_or(rel);
            (name.clone(), rel.to_string_lossy().replace('\\', "/"), text)
        }));
    }
    let total_bytes: usize = docs.iter().map(|(_, _, t)| t.len()).sum();
    eprintln!(
        "corpus: {} files, {} bytes, read in {:.1}s",
        docs.len(),
        total_bytes,
        start.elapsed().as_secs_f64()
    );

    let mut spec = if let Some(init) = &args.contrastive_from {
        match fine_tune(&args, init, &docs) {
            Ok(spec) => spec,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        count_based(&args, &docs)
    };
    spec.metadata.insert(
        "corpus".to_string(),
        format!(
            "{} files, {} bytes; package list in CORPUS.md",
            docs.len(),
            total_bytes
        ),
    );
    let bytes = match spec.to_safetensors(Storage::Int8) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&args.out, &bytes) {
        eprintln!("error: cannot write {}: {e}", args.out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("wrote {} ({} bytes)", args.out.display(), bytes.len());
    if let Some(path) = &args.corpus {
        let text = format!(
            "# Training corpus of the shipped model\n\n\
             Generated by `examples/train.rs` (see the README for the command). Every package \
             below declares a permissive licence that allows redistributing a statistical model \
             derived from its source; the model contains no source text, only co-occurrence \
             statistics of identifier parts and words.\n\n\
             {} files, {} bytes.\n\n\
             | package | version | licence | files | bytes |\n|---|---|---|---|---|\n{corpus}\n\
             ## Not used\n\n| package | version | reason |\n|---|---|---|\n{skipped}",
            docs.len(),
            total_bytes
        );
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    // Check that what was written loads back.
    match StaticModel::from_bytes(&bytes, &args.out.display().to_string()) {
        Ok(model) => {
            for word in ["budget", "retry", "parse", "error", "socket"] {
                let near: Vec<String> = model
                    .nearest_tokens(word, 8)
                    .into_iter()
                    .map(|(t, s)| format!("{t} {s:.2}"))
                    .collect();
                eprintln!("{word}: {}", near.join(", "));
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: the written model does not load: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The PPMI + SVD pipeline (the v2 recipe).
fn count_based(args: &Args, docs: &[(String, String, String)]) -> ModelSpec {
    let start = Instant::now();
    let trained = train(
        || docs.iter().map(|(g, _, t)| (g.as_str(), t.as_str())),
        &args.config,
        &args.name,
    );
    let r = &trained.report;
    eprintln!(
        "vocab {} (exported {}), pairs {}, ppmi nnz {}, chunks {}, top singular values {:?}",
        r.vocab, r.exported, r.pairs, r.ppmi_nnz, r.chunks, r.top_singular_values
    );
    eprintln!(
        "stages (s): vocab {:.1}, cooccurrence {:.1}, ppmi {:.1}, svd {:.1}, export {:.1}; total {:.1}",
        r.stage_seconds[0], r.stage_seconds[1], r.stage_seconds[2], r.stage_seconds[3], r.stage_seconds[4],
        start.elapsed().as_secs_f64()
    );
    trained.spec
}

/// Contrastive fine-tuning of `init`'s rows on pairs mined from `docs`
/// (same vocabulary and pooling weights).
fn fine_tune(
    args: &Args,
    init: &Path,
    docs: &[(String, String, String)],
) -> Result<ModelSpec, String> {
    let model = StaticModel::load(init).map_err(|e| e.to_string())?;
    let dim = model.dim();
    let rows = model.vocab_len();
    let mut tokens = Vec::with_capacity(rows);
    let mut vectors = Vec::with_capacity(rows * dim);
    let mut weights = Vec::with_capacity(rows);
    for id in 0..rows {
        tokens.push(model.token(id).unwrap_or_default().to_string());
        vectors.extend_from_slice(model.row(id).unwrap_or(&[]));
        weights.push(model.weight(id).unwrap_or(0.0));
    }
    let start = vectors.clone();
    let mut table = Table {
        dim,
        vectors,
        weights,
    };
    let clock = Instant::now();
    let mut pairs = Vec::new();
    let mut mined = Vec::new();
    let (mut items, mut files) = (0usize, 0usize);
    let mut seen = std::collections::HashSet::new();
    let mut group = 0u32;
    let mut index = 0u64;
    let mut last_package: Option<&str> = None;
    for (package, path, text) in docs {
        if last_package.is_some_and(|p| p != package) {
            group += 1;
        }
        last_package = Some(package);
        mined.clear();
        mine_pairs(path, text, &mut mined);
        for pair in &mined {
            let original = contextgraph_embed::tokenize::tokens(&pair.query).join(" ");
            let framed;
            let pair = match question_frame(index, args.contrastive.seed, args.question_share) {
                Some(frame) => {
                    framed = MinedPair {
                        query: format!("{frame} {}", pair.query),
                        ..pair.clone()
                    };
                    &framed
                }
                None => pair,
            };
            index += 1;
            let Some(mut tokens) = pair.to_tokens(
                |t| model.token_id(t).map(|i| i as u32),
                args.max_query,
                args.max_doc,
                3,
            ) else {
                continue;
            };
            tokens.group = group;
            // One copy of each item query: "Creates a new instance" above a
            // hundred constructors would be a hundred false negatives.
            if pair.kind == PairKind::Item && !seen.insert(original) {
                continue;
            }
            let repeat = if pair.kind == PairKind::File {
                args.file_repeat
            } else {
                1
            };
            match pair.kind {
                PairKind::Item => items += 1,
                PairKind::File => files += 1,
            }
            for _ in 0..repeat {
                pairs.push(tokens.clone());
            }
        }
    }
    eprintln!(
        "pairs: {items} item, {files} file (x{}), mined in {:.1}s",
        args.file_repeat,
        clock.elapsed().as_secs_f64()
    );
    let report = train_contrastive(&mut table, &pairs, &args.contrastive);
    eprintln!(
        "contrastive: {} train / {} validation pairs, {} steps, {:.1}s; epoch loss {:?}; validation (loss, top-1) {:?}",
        report.train_pairs,
        report.validation_pairs,
        report.steps,
        report.seconds,
        report.epoch_loss,
        report.validation
    );
    // Weight-space interpolation towards the start (Wortsman et al. 2022,
    // WiSE-FT): keeps what the count-based model knew about words the
    // pairs rarely show.
    for (v, s) in table.vectors.iter_mut().zip(&start) {
        *v = s + args.blend * (*v - s);
    }
    let c = &args.contrastive;
    let mut metadata = std::collections::BTreeMap::new();
    metadata.insert(
        "training".to_string(),
        format!(
            "contrastive (symmetric InfoNCE, in-batch negatives) from {}: batch {}, temperature {}, {} epochs, Adam lr {}, anchor {}, seed {}, package batches {}, blend {} with the start, question frames on {} of the queries; pairs: doc comment <-> documented item ({items}), module doc <-> file chunks ({files}, x{}); query <= {} tokens, doc <= {} tokens; pooling weights kept",
            model.name(),
            c.batch_size,
            c.temperature,
            c.epochs,
            c.learning_rate,
            c.anchor,
            c.seed,
            c.package_batches,
            args.blend,
            args.question_share,
            args.file_repeat,
            args.max_query,
            args.max_doc
        ),
    );
    Ok(ModelSpec {
        name: args.name.clone(),
        tokens,
        dim,
        vectors: table.vectors,
        weights: Some(table.weights),
        metadata,
    })
}
