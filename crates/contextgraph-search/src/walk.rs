//! Walking the workspace: which files are indexed at all.
//!
//! Ignore rules follow git (`.gitignore`, `.git/info/exclude`, global
//! excludes, via the `ignore` crate, honoured even outside a git checkout)
//! plus a project ignore file, [`PROJECT_IGNORE_FILE`], with the same syntax.
//! Then cheap gates keep out what would only waste budget or leak:
//! - by name, before any read: secrets (unless explicitly included), binary
//!   formats, lock files and other generated artefacts;
//! - by size: files over the cap;
//! - by content, on the bytes read for hashing anyway: NUL bytes (binary),
//!   invalid UTF-8 (F5 digests are over UTF-8 text), generated-file markers
//!   in the first lines, minified text (line-length and character-class
//!   heuristics).
//!
//! Symlinks are never followed: a link pointing out of the root would let a
//! workspace smuggle in any file on the machine, and one pointing inside it
//! would only index the same bytes twice.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The project ignore file, read in every directory like `.gitignore`.
pub const PROJECT_IGNORE_FILE: &str = ".cgpignore";

/// Default size cap: larger files are almost always data or generated.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Why a file was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// Over the size cap.
    TooLarge,
    /// A binary format (by extension or NUL bytes).
    Binary,
    /// Not valid UTF-8.
    NotUtf8,
    /// Minified (very long lines, almost no whitespace).
    Minified,
    /// Generated (lock files, protobuf output, `@generated` markers).
    Generated,
    /// A secret (`.env*`, keys, credential files); included only on request.
    Secret,
    /// A symlink whose target is outside the workspace root.
    SymlinkOutsideRoot,
    /// A symlink inside the root (its target is indexed under its own path).
    Symlink,
    /// Could not be read.
    Unreadable,
}

impl SkipReason {
    /// Stable name for reports and the persistent index.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkipReason::TooLarge => "too_large",
            SkipReason::Binary => "binary",
            SkipReason::NotUtf8 => "not_utf8",
            SkipReason::Minified => "minified",
            SkipReason::Generated => "generated",
            SkipReason::Secret => "secret",
            SkipReason::SymlinkOutsideRoot => "symlink_outside_root",
            SkipReason::Symlink => "symlink",
            SkipReason::Unreadable => "unreadable",
        }
    }

    pub(crate) const ALL: [SkipReason; 9] = [
        SkipReason::TooLarge,
        SkipReason::Binary,
        SkipReason::NotUtf8,
        SkipReason::Minified,
        SkipReason::Generated,
        SkipReason::Secret,
        SkipReason::SymlinkOutsideRoot,
        SkipReason::Symlink,
        SkipReason::Unreadable,
    ];
}

/// What the walk considers.
#[derive(Debug, Clone)]
pub struct WalkOptions {
    /// Files larger than this are skipped ([`DEFAULT_MAX_FILE_BYTES`]).
    pub max_file_bytes: u64,
    /// Index secret-looking files too (default `false`: never serve them).
    pub include_secrets: bool,
}

impl Default for WalkOptions {
    fn default() -> Self {
        WalkOptions {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            include_secrets: false,
        }
    }
}

/// A file the walk admitted (content gates still apply when it is read).
#[derive(Debug, Clone)]
pub struct WalkedFile {
    /// `/`-separated path relative to the root.
    pub rel_path: String,
    /// Absolute path.
    pub abs_path: PathBuf,
    /// Size in bytes at walk time.
    pub size: u64,
    /// Modification time at walk time, when the platform reports one.
    pub mtime: Option<SystemTime>,
}

/// The outcome of a walk.
#[derive(Debug, Clone, Default)]
pub struct Walk {
    /// Admitted files, sorted by path.
    pub files: Vec<WalkedFile>,
    /// Files left out before reading, with the reason.
    pub skipped: Vec<(String, SkipReason)>,
    /// Directories the walk descended into (`/`-separated, relative to the
    /// root, the root itself as `""`), sorted: the freshness check re-lists
    /// only those whose modification time changed (see [`crate::refresh`]).
    pub dirs: Vec<String>,
}

/// Walk `root` (which must be canonical) under the ignore rules and name gates.
pub fn walk(root: &Path, options: &WalkOptions) -> Walk {
    walk_under(root, root, None, options)
}

/// [`walk`], but only the part of the tree under `start` (a directory inside
/// `root`), down to `max_depth` levels below it (`Some(1)`: its entries
/// only). The ignore rules are those of the full walk: the walker reads the
/// ignore files of `start`'s parents as a walk from `root` would have on its
/// way down, so a path gets the same verdict either way.
pub(crate) fn walk_under(
    root: &Path,
    start: &Path,
    max_depth: Option<usize>,
    options: &WalkOptions,
) -> Walk {
    let mut builder = ignore::WalkBuilder::new(start);
    builder
        .max_depth(max_depth)
        .hidden(false)
        .follow_links(false)
        .git_ignore(true)
        .git_exclude(true)
        .git_global(true)
        .require_git(false)
        .parents(true)
        .add_custom_ignore_filename(PROJECT_IGNORE_FILE)
        .filter_entry(|e| {
            let name = e.file_name();
            !(name == ".git" || name == ".hg" || name == ".svn" || name == ".jj")
        });
    // Parallel walk: directory reads and stats dominate a no-change refresh.
    // One directory's entries (the freshness check's re-listing) are not
    // worth starting threads for.
    let threads = match max_depth {
        Some(depth) if depth <= 1 => 1,
        _ => std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4),
    };
    builder.threads(threads);
    let collected = std::sync::Mutex::new(Walk::default());
    builder.build_parallel().run(|| {
        Box::new(|entry| {
            if let Ok(entry) = entry {
                if entry.file_type().is_some_and(|t| t.is_dir()) {
                    if let Ok(rel) = entry.path().strip_prefix(root) {
                        let mut out = collected.lock().unwrap_or_else(|p| p.into_inner());
                        out.dirs.push(rel_to_string(rel));
                    }
                }
                if let Some(outcome) = admit(root, options, &entry) {
                    let mut out = collected.lock().unwrap_or_else(|p| p.into_inner());
                    match outcome {
                        Ok(file) => out.files.push(file),
                        Err(skip) => out.skipped.push(skip),
                    }
                }
            }
            ignore::WalkState::Continue
        })
    });
    let mut out = collected.into_inner().unwrap_or_else(|p| p.into_inner());
    out.skipped.sort();
    out.dirs.sort();
    out.files.sort_by(|a, b| a.rel_path.cmp(&b.rel_path));
    out
}

/// The walk's verdict on one entry: admitted, skipped with a reason, or
/// not a file at all (`None`).
fn admit(
    root: &Path,
    options: &WalkOptions,
    entry: &ignore::DirEntry,
) -> Option<Result<WalkedFile, (String, SkipReason)>> {
    let path = entry.path();
    let rel_path = rel_to_string(path.strip_prefix(root).ok()?);
    if rel_path.is_empty() {
        return None;
    }
    let ft = entry.file_type()?;
    let symlink = entry.path_is_symlink() || ft.is_symlink();
    if !symlink && !ft.is_file() {
        return None;
    }
    let meta = if symlink { None } else { entry.metadata().ok() };
    Some(verdict(
        root,
        options,
        path,
        rel_path,
        symlink,
        meta.as_ref(),
    ))
}

/// The walk's verdict on a file or symlink already known not to be ignored
/// (`meta` is `None` when it could not be read): what [`walk`] decides for
/// it, so the freshness check re-judges one changed path the same way
/// without walking.
pub(crate) fn verdict(
    root: &Path,
    options: &WalkOptions,
    path: &Path,
    rel_path: String,
    symlink: bool,
    meta: Option<&std::fs::Metadata>,
) -> Result<WalkedFile, (String, SkipReason)> {
    if symlink {
        let inside = std::fs::canonicalize(path).is_ok_and(|t| t.starts_with(root));
        let reason = if inside {
            SkipReason::Symlink
        } else {
            SkipReason::SymlinkOutsideRoot
        };
        return Err((rel_path, reason));
    }
    if let Some(reason) = name_gate(&rel_path, options) {
        return Err((rel_path, reason));
    }
    let Some(meta) = meta else {
        return Err((rel_path, SkipReason::Unreadable));
    };
    if meta.len() > options.max_file_bytes {
        return Err((rel_path, SkipReason::TooLarge));
    }
    Ok(WalkedFile {
        rel_path,
        abs_path: path.to_path_buf(),
        size: meta.len(),
        mtime: meta.modified().ok(),
    })
}

pub(crate) fn rel_to_string(rel: &Path) -> String {
    let mut s = String::new();
    for comp in rel.components() {
        if !s.is_empty() {
            s.push('/');
        }
        s.push_str(&comp.as_os_str().to_string_lossy());
    }
    s
}

/// Whether the ignore rules the walk follows (`.gitignore`, `.cgpignore`,
/// `.git/info/exclude`, the global excludes, in `root`, the directories
/// down to the file, and the parents of `root` up to the repository root)
/// exclude `rel_path`. For answers about one path without a walk — a
/// `verify` of a frame id a peer sent must say `gone` for a file the walk
/// would never index, not leak its digest. The deepest rule that matches
/// decides, as in git; `.cgpignore` overrides `.gitignore` in the same
/// directory. For many paths at once use [`IgnoreRules`].
pub fn is_ignored(root: &Path, rel_path: &str) -> bool {
    IgnoreRules::new(root).is_ignored(rel_path)
}

/// [`is_ignored`] for many paths of one answer: each directory's rules and
/// the global excludes are read and compiled once, not once per path (a
/// `verify` of a session's held frames asks about dozens of files sharing
/// their directories). Rules files read once stay in force for the life of
/// the value, so keep it for one answer only.
pub struct IgnoreRules {
    root: PathBuf,
    /// The repository root (the root or the nearest parent holding `.git`)
    /// and the root's parents up to it; found on first use.
    above: Option<(PathBuf, Vec<PathBuf>)>,
    /// Each directory's compiled rules; `None`: it has none.
    by_dir: std::collections::HashMap<PathBuf, Option<ignore::gitignore::Gitignore>>,
    global: Option<ignore::gitignore::Gitignore>,
}

impl IgnoreRules {
    /// Rules for paths under `root` (canonical), read as they are asked for.
    pub fn new(root: &Path) -> IgnoreRules {
        IgnoreRules {
            root: root.to_path_buf(),
            above: None,
            by_dir: std::collections::HashMap::new(),
            global: None,
        }
    }

    /// Whether `rel_path` is excluded (see [`is_ignored`]).
    pub fn is_ignored(&mut self, rel_path: &str) -> bool {
        use ignore::Match;
        let root = self.root.clone();
        let path = root.join(rel_path);
        let mut dirs: Vec<PathBuf> = Vec::new();
        // The file's directories, deepest first, down from the root…
        let mut dir = path.parent().map(Path::to_path_buf);
        while let Some(d) = dir {
            let at_root = d == root;
            dirs.push(d.clone());
            if at_root || !d.starts_with(&root) {
                break;
            }
            dir = d.parent().map(Path::to_path_buf);
        }
        // …then the root's parents up to the repository root.
        let (repo_root, parents) = self.above.get_or_insert_with(|| {
            let mut repo_root = root.clone();
            let mut parents = Vec::new();
            if !root.join(".git").exists() {
                for parent in root.ancestors().skip(1) {
                    parents.push(parent.to_path_buf());
                    if parent.join(".git").exists() {
                        repo_root = parent.to_path_buf();
                        break;
                    }
                }
            }
            (repo_root, parents)
        });
        dirs.extend(parents.iter().cloned());
        let repo_root = repo_root.clone();
        let decide = |m: Match<&ignore::gitignore::Glob>| match m {
            Match::Ignore(_) => Some(true),
            Match::Whitelist(_) => Some(false),
            Match::None => None,
        };
        for d in dirs {
            let matcher = self
                .by_dir
                .entry(d)
                .or_insert_with_key(|d| rules_in(d, *d == repo_root));
            if let Some(matcher) = matcher {
                if let Some(ignored) = decide(matcher.matched_path_or_any_parents(&path, false)) {
                    return ignored;
                }
            }
        }
        let global = self
            .global
            .get_or_insert_with(|| ignore::gitignore::Gitignore::global().0);
        decide(global.matched_path_or_any_parents(&path, false)).unwrap_or(false)
    }
}

/// The compiled rules of directory `d` (with `.git/info/exclude` when it is
/// the repository root); `None` when it has none.
fn rules_in(d: &Path, repo_root: bool) -> Option<ignore::gitignore::Gitignore> {
    let mut builder = ignore::gitignore::GitignoreBuilder::new(d);
    let mut any = false;
    for name in [".gitignore", PROJECT_IGNORE_FILE] {
        let file = d.join(name);
        if file.is_file() {
            any = true;
            let _ = builder.add(file);
        }
    }
    if repo_root {
        let exclude = d.join(".git/info/exclude");
        if exclude.is_file() {
            any = true;
            let _ = builder.add(exclude);
        }
    }
    if !any {
        return None;
    }
    builder.build().ok()
}

/// Gates decided by the path alone (no read).
pub fn name_gate(rel_path: &str, options: &WalkOptions) -> Option<SkipReason> {
    let lower = rel_path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    // The shared deny-list (documented in contextgraph_types::secrets).
    if !options.include_secrets && contextgraph_types::secrets::is_secret_path(&lower) {
        return Some(SkipReason::Secret);
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    if BINARY_EXTENSIONS.contains(&ext) {
        return Some(SkipReason::Binary);
    }
    let generated_name = name.ends_with(".min.js")
        || name.ends_with(".min.css")
        || name.ends_with(".min.mjs")
        || name.ends_with(".map")
        || name.ends_with(".pb.go")
        || name.ends_with("_pb2.py")
        || name.ends_with("_pb2_grpc.py")
        || name.ends_with(".pb.cc")
        || name.ends_with(".pb.h")
        || name.contains(".generated.")
        || ext == "lock"
        || matches!(
            name,
            "package-lock.json" | "pnpm-lock.yaml" | "go.sum" | "npm-shrinkwrap.json"
        );
    generated_name.then_some(SkipReason::Generated)
}

const BINARY_EXTENSIONS: &[&str] = &[
    "png",
    "jpg",
    "jpeg",
    "gif",
    "bmp",
    "ico",
    "webp",
    "tiff",
    "psd",
    "pdf",
    "zip",
    "gz",
    "tgz",
    "bz2",
    "xz",
    "zst",
    "7z",
    "rar",
    "tar",
    "jar",
    "war",
    "class",
    "so",
    "dylib",
    "dll",
    "exe",
    "o",
    "a",
    "lib",
    "obj",
    "wasm",
    "rlib",
    "rmeta",
    "pyc",
    "pyo",
    "whl",
    "woff",
    "woff2",
    "ttf",
    "otf",
    "eot",
    "mp3",
    "mp4",
    "wav",
    "ogg",
    "flac",
    "mov",
    "avi",
    "mkv",
    "webm",
    "sqlite",
    "db",
    "bin",
    "dat",
    "pack",
    "idx",
    "npy",
    "npz",
    "onnx",
    "pt",
    "safetensors",
    "parquet",
    "crate",
];

/// Gates decided by the bytes (read anyway to hash them). Returns the text
/// when the file is admitted.
pub fn content_gate(bytes: &[u8]) -> Result<&str, SkipReason> {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return Err(SkipReason::Binary);
    }
    let text = std::str::from_utf8(bytes).map_err(|_| SkipReason::NotUtf8)?;
    if looks_generated(text) {
        return Err(SkipReason::Generated);
    }
    if looks_minified(text) {
        return Err(SkipReason::Minified);
    }
    Ok(text)
}

fn looks_generated(text: &str) -> bool {
    text.lines().take(8).any(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("@generated")
            || l.contains("do not edit")
            || l.contains("code generated by")
            || l.contains("autogenerated")
            || l.contains("auto-generated")
            || l.contains("automatically generated")
    })
}

/// A line this long is not written by hand (or holds a blob: a data URI,
/// an inline font).
const MINIFIED_LINE: usize = 4000;
/// Lines longer than this count as the file's "long" bytes.
const LONG_LINE: usize = 1000;

/// Minified text: long lines that are not prose. The average line length
/// or an almost whitespace-free character mix gives a bundle away; a very
/// long line does only when long lines hold most of the file's bytes.
///
/// Why not "any line over 4,000 bytes": a hand-written module that embeds
/// one blob (Phoenix's `endpoint.ex` carries a 4,390-byte base64 logo in a
/// 1,094-line file; Plug's `debugger.ex` a 36 KB one in 590 lines) was
/// dropped whole, and with it every definition it holds: a lookup of
/// `Phoenix.Endpoint` found nothing. A bundle or a minified file keeps
/// nearly all its bytes on long lines; such a module keeps a few percent
/// to about half.
fn looks_minified(text: &str) -> bool {
    if text.len() < 1024 {
        return false;
    }
    let mut lines = 0usize;
    let mut longest = 0usize;
    let mut long_bytes = 0usize;
    for l in text.split('\n') {
        lines += 1;
        longest = longest.max(l.len());
        if l.len() > LONG_LINE {
            long_bytes += l.len();
        }
    }
    let avg = text.len() / lines.max(1);
    (longest > MINIFIED_LINE && long_bytes * 4 > text.len() * 3)
        || avg > 300
        || (text.len() > 4096 && ascii_whitespace_count(text.as_bytes()) * 50 < text.len())
}

/// How many bytes of `bytes` are ASCII whitespace (`u8::is_ascii_whitespace`:
/// tab, line feed, form feed, carriage return, space). Counted in runs of
/// 255 bytes into a byte-wide counter (a run's count fits in a byte, so
/// no widening per byte), a form the compiler turns into vector code:
/// every admitted file is counted, and the byte-at-a-time filter was most
/// of the content gate's cost on a cold build.
fn ascii_whitespace_count(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|run| {
            let n = run.iter().fold(0u8, |n, b| {
                n.wrapping_add(u8::from(b.is_ascii_whitespace()))
            });
            usize::from(n)
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_gates_catch_secrets_binaries_and_lock_files() {
        let o = WalkOptions::default();
        for s in [
            ".env",
            ".env.local",
            "config/prod.env",
            "id_rsa",
            "certs/server.key",
            "a/.aws/config",
            "credentials.json",
        ] {
            assert_eq!(name_gate(s, &o), Some(SkipReason::Secret), "{s}");
        }
        assert_eq!(name_gate("logo.PNG", &o), Some(SkipReason::Binary));
        assert_eq!(name_gate("Cargo.lock", &o), Some(SkipReason::Generated));
        assert_eq!(
            name_gate("dist/app.min.js", &o),
            Some(SkipReason::Generated)
        );
        assert_eq!(name_gate("src/environment.rs", &o), None);
        let with = WalkOptions {
            include_secrets: true,
            ..o
        };
        assert_eq!(name_gate(".env", &with), None);
    }

    /// The vector-friendly count is `is_ascii_whitespace`'s, for every
    /// byte value, across run boundaries.
    #[test]
    fn whitespace_count_is_the_byte_filter() {
        let mut bytes: Vec<u8> = (0..=255u8).collect();
        bytes.extend((0..3000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8));
        for len in [0, 1, 254, 255, 256, 510, 511, bytes.len()] {
            let b = &bytes[..len];
            let expected = b.iter().filter(|b| b.is_ascii_whitespace()).count();
            assert_eq!(ascii_whitespace_count(b), expected, "{len}");
        }
    }

    #[test]
    fn content_gates_catch_binary_minified_and_generated() {
        assert_eq!(content_gate(b"ab\0cd"), Err(SkipReason::Binary));
        assert_eq!(content_gate(&[0xff, 0xfe, b'a']), Err(SkipReason::NotUtf8));
        assert_eq!(
            content_gate(b"// @generated by foo\nfn x() {}\n"),
            Err(SkipReason::Generated)
        );
        let minified = "var a=1;".repeat(1000);
        assert_eq!(content_gate(minified.as_bytes()), Err(SkipReason::Minified));
        // A bundle: a short header, then long lines.
        let bundle = format!(
            "/*! lib v1 */\n{}\n{}\n",
            "var a=1;".repeat(900),
            "f(b,c);".repeat(900)
        );
        assert_eq!(content_gate(bundle.as_bytes()), Err(SkipReason::Minified));
        // A hand-written module that embeds one blob is admitted.
        let mut module = String::new();
        for i in 0..400 {
            module.push_str(&format!("  def handler_{i}(conn), do: conn |> send(:ok)\n"));
        }
        module.push_str(&format!(
            "  logo = \"data:image/svg+xml;base64,{}\"\n",
            "PHN2Zy".repeat(800)
        ));
        module.push_str("end\n");
        assert_eq!(content_gate(module.as_bytes()), Ok(module.as_str()));
        let normal = "fn main() {\n    println!(\"hi\");\n}\n".repeat(200);
        assert!(content_gate(normal.as_bytes()).is_ok());
    }
}
