//! Markdown and prose: one `doc` chunk per heading section, with the names
//! written in code spans kept as `doc.documents` candidates (resolved against
//! the symbol table at query time).

use super::window::windows;
use super::{Chunk, ChunkKind, LineIndex, MAX_EDGES_PER_CHUNK};

/// Sections longer than this are split into windows: a 2000-line README
/// section would never fit a budget whole.
const MAX_SECTION_LINES: u32 = 120;

/// One `doc` chunk per ATX (`# Title`) or setext (`Title` / `===`) heading
/// section. Headings inside fenced code blocks are not headings.
pub fn chunk_markdown(rel_path: &str, text: &str, lines: &LineIndex) -> Vec<Chunk> {
    let count = lines.line_count();
    let line = |n: u32| {
        lines
            .slice(text, n, n)
            .unwrap_or("")
            .trim_end_matches(['\n', '\r'])
    };
    let mut headings: Vec<(u32, String)> = Vec::new();
    let mut fence: Option<&str> = None;
    for n in 1..=count {
        let l = line(n);
        let t = l.trim_start();
        if let Some(f) = fence {
            if t.starts_with(f) {
                fence = None;
            }
            continue;
        }
        if t.starts_with("```") || t.starts_with("~~~") {
            fence = Some(&t[..3]);
            continue;
        }
        if let Some(title) = atx_heading(t) {
            headings.push((n, title));
        } else if n > 1 && is_setext_underline(l) {
            let prev = line(n - 1).trim();
            if !prev.is_empty() && headings.last().is_none_or(|h| h.0 != n - 1) {
                headings.push((n - 1, prev.to_owned()));
            }
        }
    }
    let file_name = rel_path.rsplit('/').next().unwrap_or(rel_path).to_owned();
    let mut sections: Vec<(u32, u32, String)> = Vec::new();
    let first = headings.first().map_or(count + 1, |h| h.0);
    if first > 1 {
        sections.push((1, first - 1, file_name));
    }
    for (i, (start, title)) in headings.iter().enumerate() {
        let end = headings.get(i + 1).map_or(count, |h| h.0 - 1);
        sections.push((*start, end, title.clone()));
    }
    let mut out = Vec::new();
    let mut seen = std::collections::HashMap::<String, u32>::new();
    for (start, end, title) in sections {
        let mut slug = slugify(&title);
        let n = seen.entry(slug.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            slug = format!("{slug}-{n}");
        }
        let pieces = if end - start < MAX_SECTION_LINES {
            let mut last = end;
            while last > start && line(last).trim().is_empty() {
                last -= 1;
            }
            if (start..=last).all(|k| line(k).trim().is_empty()) {
                continue;
            }
            vec![Chunk::plain(
                ChunkKind::Doc,
                slug,
                title,
                start,
                last,
                "markdown-section",
            )]
        } else {
            windows(text, lines, start, end, ChunkKind::Doc)
                .into_iter()
                .map(|mut w| {
                    w.local_id = format!("{slug}/{}", w.local_id);
                    w.title = format!("{title} (lines {}-{})", w.start_line, w.end_line);
                    w.method = "markdown-section";
                    w
                })
                .collect()
        };
        for mut c in pieces {
            c.documents =
                code_span_names(lines.slice(text, c.start_line, c.end_line).unwrap_or(""));
            out.push(c);
        }
    }
    out
}

/// Prose without markup: paragraph windows as `doc` chunks.
pub fn chunk_text(_rel_path: &str, text: &str, lines: &LineIndex) -> Vec<Chunk> {
    windows(text, lines, 1, lines.line_count(), ChunkKind::Doc)
        .into_iter()
        .map(|mut c| {
            c.method = "text-window";
            c.documents =
                code_span_names(lines.slice(text, c.start_line, c.end_line).unwrap_or(""));
            c
        })
        .collect()
}

fn atx_heading(t: &str) -> Option<String> {
    let hashes = t.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &t[hashes..];
    if !(rest.is_empty() || rest.starts_with(' ') || rest.starts_with('\t')) {
        return None;
    }
    let title = rest.trim().trim_end_matches('#').trim();
    (!title.is_empty()).then(|| title.to_owned())
}

fn is_setext_underline(l: &str) -> bool {
    let t = l.trim();
    t.len() >= 3 && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}

/// GitHub-style anchor slug: lowercase alphanumerics joined by `-`.
pub fn slugify(title: &str) -> String {
    let mut out = String::new();
    for c in title.chars() {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
        } else if (c == ' ' || c == '-' || c == '_') && !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "section".to_owned()
    } else {
        out
    }
}

/// Identifiers named in inline code spans: `` `net::retry_loop()` `` gives
/// `retry_loop` (the last path segment, which is what the symbol table keys on).
pub fn code_span_names(section: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (i, span) in section.split('`').enumerate() {
        if i % 2 == 0 || span.is_empty() || span.len() > 120 || span.contains('\n') {
            continue;
        }
        let head = span.split(['(', '<', ' ', '{', '[']).next().unwrap_or("");
        let last = head.rsplit(['.', ':', '/']).next().unwrap_or("");
        let ident = last.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        let looks_like_ident = ident.len() >= 3
            && ident.chars().all(|c| c.is_alphanumeric() || c == '_')
            && ident
                .chars()
                .next()
                .is_some_and(|c| c.is_alphabetic() || c == '_');
        if looks_like_ident && !out.iter().any(|o| o == ident) {
            out.push(ident.to_owned());
            if out.len() >= MAX_EDGES_PER_CHUNK {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_follow_headings_outside_fences() {
        let md = "intro\n\n# Install\nrun `cargo build`\n```\n# not a heading\n```\n## Use `net::retry_loop()`\ntext\nSetext\n------\nmore\n";
        let li = LineIndex::new(md);
        let c = chunk_markdown("README.md", md, &li);
        let titles: Vec<&str> = c.iter().map(|c| c.title.as_str()).collect();
        assert_eq!(
            titles,
            ["README.md", "Install", "Use `net::retry_loop()`", "Setext"]
        );
        assert_eq!((c[1].start_line, c[1].end_line), (3, 7));
        assert!(c[2].documents.contains(&"retry_loop".to_owned()));
        assert_eq!(c[2].local_id, "use-netretry-loop");
    }
}
