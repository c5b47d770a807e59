//! Module paths: how a file's definitions are qualified and which
//! workspace files an import may name.

use crate::lang::Language;

/// The module path a file's definitions are qualified with: Rust modules
/// from the path under `src/` (`src/net.rs` → `net`), Python dotted modules.
/// Other languages qualify by nesting only.
pub(super) fn module_prefix(lang: Language, rel_path: &str) -> Vec<String> {
    let no_ext = rel_path.rsplit_once('.').map_or(rel_path, |(a, _)| a);
    match lang {
        Language::Rust => {
            let under_src = match no_ext.rfind("src/") {
                Some(i) if i == 0 || no_ext.as_bytes()[i - 1] == b'/' => &no_ext[i + 4..],
                _ => no_ext.rsplit('/').next().unwrap_or(no_ext),
            };
            let mut segs: Vec<String> = under_src.split('/').map(str::to_owned).collect();
            if matches!(
                segs.last().map(String::as_str),
                Some("lib" | "main" | "mod")
            ) {
                segs.pop();
            }
            if segs.first().is_some_and(|s| s == "bin") {
                segs.clear();
            }
            segs.retain(|s| !s.is_empty());
            segs
        }
        Language::Python => {
            let trimmed = no_ext.strip_prefix("src/").unwrap_or(no_ext);
            let mut segs: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
            if segs.last().is_some_and(|s| s == "__init__") {
                segs.pop();
            }
            segs.retain(|s| !s.is_empty());
            segs
        }
        _ => Vec::new(),
    }
}

/// Join a directory and a relative path, resolving `.` and `..`; `None` when
/// the result would climb out of the workspace.
pub(super) fn join_rel(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

pub(super) fn import_candidates(lang: Language, rel_path: &str, spec: &str) -> Vec<String> {
    let dir = rel_path.rsplit_once('/').map_or("", |(d, _)| d);
    let mut out = Vec::new();
    match lang {
        Language::Rust => {
            let file_stem = rel_path.rsplit('/').next().unwrap_or("");
            let own_dir = if matches!(file_stem, "lib.rs" | "main.rs" | "mod.rs") {
                dir.to_owned()
            } else {
                rel_path.trim_end_matches(".rs").to_owned()
            };
            if let Some(m) = spec.strip_prefix("mod ") {
                out.push(
                    format!("{own_dir}/{m}.rs")
                        .trim_start_matches('/')
                        .to_owned(),
                );
                out.push(
                    format!("{own_dir}/{m}/mod.rs")
                        .trim_start_matches('/')
                        .to_owned(),
                );
            } else if let Some(rest) = spec.strip_prefix("crate::") {
                let src = match rel_path.rfind("src/") {
                    Some(i) => &rel_path[..i + 3],
                    None => dir,
                };
                let segs: Vec<&str> = rest.split("::").collect();
                for k in (1..=segs.len()).rev() {
                    let p = segs[..k].join("/");
                    out.push(format!("{src}/{p}.rs").trim_start_matches('/').to_owned());
                    out.push(
                        format!("{src}/{p}/mod.rs")
                            .trim_start_matches('/')
                            .to_owned(),
                    );
                }
            }
        }
        Language::Python => {
            let dots = spec.bytes().take_while(|&b| b == b'.').count();
            let path = spec[dots..].replace('.', "/");
            let base = if dots > 0 {
                let mut d = dir.to_owned();
                for _ in 1..dots {
                    d = d
                        .rsplit_once('/')
                        .map_or(String::new(), |(a, _)| a.to_owned());
                }
                d
            } else {
                String::new()
            };
            let stem = join_rel(&base, &path).unwrap_or_default();
            if !stem.is_empty() {
                for root in ["", "src/"] {
                    out.push(format!("{root}{stem}.py"));
                    out.push(format!("{root}{stem}/__init__.py"));
                }
            }
        }
        Language::JavaScript | Language::TypeScript | Language::Tsx if spec.starts_with('.') => {
            if let Some(base) = join_rel(dir, spec) {
                out.push(base.clone());
                for ext in [
                    ".ts",
                    ".tsx",
                    ".js",
                    ".jsx",
                    ".mjs",
                    "/index.ts",
                    "/index.tsx",
                    "/index.js",
                ] {
                    out.push(format!("{base}{ext}"));
                }
            }
        }
        Language::Java => {
            let path = spec.trim_end_matches(".*").replace('.', "/");
            for root in ["src/main/java/", "src/", ""] {
                out.push(format!("{root}{path}.java"));
            }
        }
        Language::C | Language::Cpp if !spec.starts_with('<') => {
            if let Some(p) = join_rel(dir, spec) {
                out.push(p);
            }
            out.push(spec.to_owned());
            out.push(format!("include/{spec}"));
        }
        _ => {}
    }
    out.dedup();
    out
}
