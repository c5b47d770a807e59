//! Chunking time per file, per language, on real source trees.
//!
//! `cargo bench -p contextgraph-search --bench chunk_time -- [OPTIONS] DIR…`
//!
//! Every file under each DIR whose name a code grammar claims (files over
//! the walk's 1 MiB limit skipped, as the index does) is chunked with
//! [`chunk_file`] `--rounds` times (default 3); a file's time is the
//! fastest of its rounds, the figure least moved by other processes on a
//! shared machine. Reported per language: files, bytes, median, p99 and
//! max ms per file, MB/s over the language's bytes, and its slowest three
//! files with their cost per KB against the language's median per KB, and
//! the files chunked as line windows (grammar failure or work limit).
//! A file over 4 KB that costs more than 50 times its language's median
//! per byte is marked `PATHOLOGICAL`: the rule a grammar's bound (in the
//! chunker, counted in parser work, never in time) is judged against.
//!
//! Options:
//! - `--semble SET_DIR`: also the third-party set's trees, extracted once
//!   from `SET_DIR/sources/*.tar.gz` into `--cache` (default
//!   `target/chunk-time-semble`).
//! - `--only NAME,NAME`: only these languages (`rust,go`).
//! - `--tsv PATH`: every file's time, for comparing two builds file by file.
//!
//! Only [`chunk_file`] and [`Language`] are used, so the same file builds
//! against an older revision of the crate to compare cold chunking time.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use contextgraph_search::chunk::chunk_file;
use contextgraph_search::Language;

/// Files larger than the walk's default limit are skipped as the index does.
const MAX_BYTES: u64 = 1024 * 1024;

/// Files smaller than this are not judged per byte: their time is mostly
/// the fixed cost of a parse, not their bytes.
const PATHOLOGY_MIN_BYTES: usize = 4 * 1024;

/// How many times a language's median cost per byte makes a file pathological.
const PATHOLOGY_RATIO: f64 = 50.0;

struct Args {
    dirs: Vec<PathBuf>,
    semble: Option<PathBuf>,
    cache: PathBuf,
    only: Option<Vec<String>>,
    tsv: Option<PathBuf>,
    rounds: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        dirs: Vec::new(),
        semble: None,
        cache: PathBuf::from("target/chunk-time-semble"),
        only: None,
        tsv: None,
        rounds: 3,
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        match a.as_str() {
            // Passed by `cargo bench`.
            "--bench" => {}
            "--semble" => args.semble = Some(PathBuf::from(value("--semble")?)),
            "--cache" => args.cache = PathBuf::from(value("--cache")?),
            "--tsv" => args.tsv = Some(PathBuf::from(value("--tsv")?)),
            "--only" => {
                args.only = Some(
                    value("--only")?
                        .split(',')
                        .map(|s| s.trim().to_owned())
                        .collect(),
                )
            }
            "--rounds" => {
                args.rounds = value("--rounds")?
                    .parse()
                    .map_err(|e| format!("--rounds: {e}"))?;
                if args.rounds == 0 {
                    return Err("--rounds must be at least 1".into());
                }
            }
            flag if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            dir => args.dirs.push(PathBuf::from(dir)),
        }
    }
    Ok(args)
}

/// The set's trees under `cache`, each extracted from its tarball once.
fn semble_trees(set: &Path, cache: &Path) -> Result<Vec<PathBuf>, String> {
    let sources = set.join("sources");
    let entries = std::fs::read_dir(&sources).map_err(|e| format!("{}: {e}", sources.display()))?;
    let mut tarballs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .collect();
    tarballs.sort();
    let mut trees = Vec::new();
    for t in tarballs {
        let name = t
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tar.gz"))
            .ok_or_else(|| format!("{}: not a tarball name", t.display()))?;
        let dest = cache.join(name);
        if !dest.is_dir() {
            let partial = cache.join(format!(".{name}.partial"));
            let _ = std::fs::remove_dir_all(&partial);
            std::fs::create_dir_all(&partial).map_err(|e| format!("{}: {e}", partial.display()))?;
            let status = std::process::Command::new("tar")
                .arg("-xzf")
                .arg(&t)
                .arg("-C")
                .arg(&partial)
                .status()
                .map_err(|e| format!("tar: {e}"))?;
            if !status.success() {
                return Err(format!("tar failed on {}", t.display()));
            }
            std::fs::rename(&partial, &dest).map_err(|e| format!("{}: {e}", dest.display()))?;
        }
        trees.push(dest);
    }
    Ok(trees)
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let Ok(kind) = e.file_type() else { continue };
        let name = e.file_name();
        if kind.is_dir() && name != ".git" && name != "target" {
            files_under(&path, out);
        } else if kind.is_file() {
            out.push(path);
        }
    }
}

/// One chunked file.
struct Timed {
    path: String,
    bytes: usize,
    ms: f64,
    /// Chunked as line windows: its grammar failed on it or its parse
    /// went over the chunker's work limit.
    windowed: bool,
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("chunk_time: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut roots = args.dirs.clone();
    if let Some(set) = &args.semble {
        match semble_trees(set, &args.cache) {
            Ok(t) => roots.extend(t),
            Err(e) => {
                eprintln!("chunk_time: the set at {}: {e}", set.display());
                return ExitCode::FAILURE;
            }
        }
    }
    if roots.is_empty() {
        eprintln!("chunk_time: no directories (give DIR… or --semble SET_DIR)");
        return ExitCode::FAILURE;
    }
    let mut by_lang: BTreeMap<&'static str, Vec<Timed>> = BTreeMap::new();
    for root in &roots {
        let mut files = Vec::new();
        files_under(root, &mut files);
        for path in files {
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let lang = Language::detect(&rel);
            if !lang.is_code() {
                continue;
            }
            if let Some(only) = &args.only {
                if !only.iter().any(|o| o == lang.name()) {
                    continue;
                }
            }
            if std::fs::metadata(&path).map_or(true, |m| m.len() > MAX_BYTES) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut best = f64::INFINITY;
            let mut windowed = false;
            for _ in 0..args.rounds {
                let t = Instant::now();
                let chunks = chunk_file(&rel, lang, &text);
                let ms = t.elapsed().as_secs_f64() * 1000.0;
                windowed = chunks.iter().all(|c| c.method == "line-window");
                std::hint::black_box(chunks);
                best = best.min(ms);
            }
            let name = root.file_name().map_or_else(
                || root.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            by_lang.entry(lang.name()).or_default().push(Timed {
                path: format!("{name}/{rel}"),
                bytes: text.len(),
                ms: best,
                windowed,
            });
        }
    }
    if let Some(tsv) = &args.tsv {
        let written = std::fs::File::create(tsv).and_then(|f| {
            let mut w = std::io::BufWriter::new(f);
            for (lang, files) in &by_lang {
                for f in files {
                    writeln!(w, "{lang}\t{}\t{}\t{:.4}", f.path, f.bytes, f.ms)?;
                }
            }
            w.flush()
        });
        if let Err(e) = written {
            eprintln!("chunk_time: {}: {e}", tsv.display());
            return ExitCode::FAILURE;
        }
    }
    println!(
        "chunk_time: {} rounds per file, fastest kept; {} roots",
        args.rounds,
        roots.len()
    );
    println!(
        "{:<11} {:>6} {:>9} {:>8} {:>8} {:>8} {:>7} {:>9} {:>8}",
        "language", "files", "KB", "med ms", "p99 ms", "max ms", "MB/s", "med µs/KB", "windowed"
    );
    let mut report = String::new();
    let (mut all_files, mut all_bytes, mut all_ms) = (0usize, 0usize, 0f64);
    for (lang, files) in &by_lang {
        let mut ms: Vec<f64> = files.iter().map(|f| f.ms).collect();
        ms.sort_by(f64::total_cmp);
        let bytes: usize = files.iter().map(|f| f.bytes).sum();
        let total_ms: f64 = ms.iter().sum();
        let mut per_kb: Vec<f64> = files
            .iter()
            .filter(|f| f.bytes >= PATHOLOGY_MIN_BYTES)
            .map(|f| f.ms * 1000.0 / (f.bytes as f64 / 1024.0))
            .collect();
        per_kb.sort_by(f64::total_cmp);
        let med_per_kb = quantile(&per_kb, 0.5);
        all_files += files.len();
        all_bytes += bytes;
        all_ms += total_ms;
        println!(
            "{:<11} {:>6} {:>9.0} {:>8.3} {:>8.3} {:>8.2} {:>7.2} {:>9.1} {:>8}",
            lang,
            files.len(),
            bytes as f64 / 1024.0,
            quantile(&ms, 0.5),
            quantile(&ms, 0.99),
            ms.last().copied().unwrap_or(f64::NAN),
            bytes as f64 / 1e6 / (total_ms / 1000.0),
            med_per_kb,
            files.iter().filter(|f| f.windowed).count()
        );
        let mut slowest: Vec<&Timed> = files.iter().collect();
        slowest.sort_by(|a, b| b.ms.total_cmp(&a.ms));
        for f in slowest.iter().take(3) {
            let kb = f.bytes as f64 / 1024.0;
            let ratio = f.ms * 1000.0 / kb / med_per_kb;
            report.push_str(&format!(
                "  {lang:<10} {:>8.2} ms {:>7.1} KB {:>6.1}x median/KB  {}\n",
                f.ms, kb, ratio, f.path
            ));
        }
        for f in files.iter().filter(|f| f.windowed) {
            report.push_str(&format!(
                "  windowed {lang}: {} ({} bytes)\n",
                f.path, f.bytes
            ));
        }
        for f in files {
            let ratio = f.ms * 1000.0 / (f.bytes as f64 / 1024.0) / med_per_kb;
            if f.bytes >= PATHOLOGY_MIN_BYTES && ratio > PATHOLOGY_RATIO {
                report.push_str(&format!(
                    "  PATHOLOGICAL {lang}: {} ({} bytes, {:.2} ms, {ratio:.0}x median/KB)\n",
                    f.path, f.bytes, f.ms
                ));
            }
        }
    }
    println!(
        "{:<11} {:>6} {:>9.0} {:>8} {:>8} {:>8} {:>7.2}",
        "all",
        all_files,
        all_bytes as f64 / 1024.0,
        "",
        "",
        "",
        all_bytes as f64 / 1e6 / (all_ms / 1000.0)
    );
    println!("slowest files per language:\n{report}");
    ExitCode::SUCCESS
}
