//! Splitting a document into heading sections — pure text in, line-exact
//! sections out, no I/O.
//!
//! A section runs from its heading line to the line before the next heading,
//! so the sections of a file tile it: every byte after the first heading
//! belongs to exactly one section. That is what lets a frame's provenance
//! address *exactly* the section's bytes (F5) and lets `verify` re-find a
//! section by id after the rest of the file changed.
//!
//! Lines end at `\n`; a line's bytes include its terminator (`\r\n` stays
//! whole), and a last line without a terminator is still a line. Nothing is
//! normalised: a section's bytes are a slice of the source.
//!
//! Markdown rules (CommonMark, simplified where documents rarely go):
//! - ATX headings: up to three spaces, 1–6 `#`, then a space, a tab or the
//!   end of the line; an optional closing `#` run is dropped.
//! - Setext headings: a paragraph underlined by `=` (level 1) or `-`
//!   (level 2); the heading starts at the paragraph's first line. A `---`
//!   with no paragraph above it is a thematic break, not a heading.
//! - Fenced code blocks (```` ``` ```` or `~~~`, closed by a fence of the same
//!   character at least as long, or by the end of the file) contain no
//!   headings, whatever their lines look like. Indented code cannot hold an
//!   ATX heading (four spaces is too many) and does not start a paragraph.
//! - A YAML front-matter block (`---` on line 1 up to the next `---` or
//!   `...`) is part of the text before the first heading.
//!
//! reStructuredText (`.rst`) titles are a line of text underlined (optionally
//! also overlined) by a run of one punctuation character at least as long as
//! the text; levels follow the order in which styles first appear.
//!
//! Text before the first heading is its own section, titled by the file name,
//! when it holds anything but blank lines. A heading with no text is titled
//! by the file name and its line, because a title is never empty (F2).

use std::collections::HashSet;
use std::ops::Range;

use contextgraph_types::LineRange;

/// The slug of the text before the first heading: `#top`, the fragment that
/// conventionally means "the top of the document". A heading that slugs to
/// `top` itself becomes `top-1`.
pub const PREAMBLE_SLUG: &str = "top";

/// The slug of a heading whose text has no letters or digits.
const EMPTY_SLUG: &str = "section";

/// Which heading rules to apply to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Markdown (and plain text, which commonly uses the same `===` / `#`
    /// conventions).
    Markdown,
    /// reStructuredText section titles.
    RestructuredText,
}

impl Syntax {
    /// The syntax for a file name by extension (case-insensitive): `.rst` is
    /// reStructuredText, everything else Markdown rules.
    pub fn for_file_name(name: &str) -> Syntax {
        let is_rst = name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| ext.eq_ignore_ascii_case("rst"));
        if is_rst {
            Syntax::RestructuredText
        } else {
            Syntax::Markdown
        }
    }
}

/// One heading section of a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    /// The heading text, trimmed; never empty (F2).
    pub title: String,
    /// URL-fragment style slug, unique within the file (`retry-policy`,
    /// `retry-policy-1` for the second heading of that name, [`PREAMBLE_SLUG`]
    /// for the text before the first heading).
    pub slug: String,
    /// Heading level 1–6; 0 for the text before the first heading.
    pub level: u8,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The section's bytes in the source, terminators included.
    pub bytes: Range<usize>,
}

impl Section {
    /// The section's lines as a provenance range (`L<start>-<end>`).
    pub fn line_range(&self) -> LineRange {
        LineRange {
            start: self.start_line,
            end: self.end_line,
        }
    }

    /// The section's exact text within `source` (the text it was split from).
    /// Empty when `source` is not that text.
    pub fn text<'a>(&self, source: &'a str) -> &'a str {
        source.get(self.bytes.clone()).unwrap_or("")
    }
}

/// One source line: where it starts, where its content ends (before `\r\n`
/// or `\n`) and where the next line starts.
#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    content_end: usize,
    end: usize,
}

fn split_lines(text: &str) -> Vec<Line> {
    let bytes = text.as_bytes();
    let mut lines = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let (content_end, end) = match memchr_newline(&bytes[start..]) {
            Some(i) => {
                let nl = start + i;
                let content_end = if nl > start && bytes[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                (content_end, nl + 1)
            }
            None => (bytes.len(), bytes.len()),
        };
        lines.push(Line {
            start,
            content_end,
            end,
        });
        start = end;
    }
    lines
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// A heading found while scanning: its first line (index) and text.
struct Heading {
    line: usize,
    level: u8,
    text: String,
}

/// Split `text` into heading sections under `syntax`. `file_name` titles the
/// text before the first heading and headings that have no text.
pub fn split_sections(text: &str, file_name: &str, syntax: Syntax) -> Vec<Section> {
    let doc = Doc {
        text,
        lines: split_lines(text),
    };
    let headings = match syntax {
        Syntax::Markdown => markdown_headings(&doc),
        Syntax::RestructuredText => rst_headings(&doc),
    };
    assemble(&doc, &headings, file_name)
}

/// A text and its lines.
struct Doc<'t> {
    text: &'t str,
    lines: Vec<Line>,
}

impl<'t> Doc<'t> {
    fn count(&self) -> usize {
        self.lines.len()
    }

    /// Line `i` without its terminator (and without a byte-order mark on line 1).
    fn content(&self, i: usize) -> &'t str {
        let l = self.lines[i];
        let s = &self.text[l.start..l.content_end];
        if i == 0 {
            s.strip_prefix('\u{feff}').unwrap_or(s)
        } else {
            s
        }
    }
}

fn assemble(doc: &Doc<'_>, headings: &[Heading], file_name: &str) -> Vec<Section> {
    let lines = &doc.lines;
    let mut sections = Vec::with_capacity(headings.len() + 1);
    let mut used = HashSet::new();
    let line_no = |i: usize| u32::try_from(i + 1).unwrap_or(u32::MAX);
    let first_heading = headings.first().map_or(lines.len(), |h| h.line);
    let preamble_has_text = (0..first_heading).any(|i| !doc.content(i).trim().is_empty());
    if first_heading > 0 && preamble_has_text {
        used.insert(PREAMBLE_SLUG.to_owned());
        sections.push(Section {
            title: file_name.to_owned(),
            slug: PREAMBLE_SLUG.to_owned(),
            level: 0,
            start_line: 1,
            end_line: line_no(first_heading - 1),
            bytes: 0..lines[first_heading - 1].end,
        });
    }
    for (k, h) in headings.iter().enumerate() {
        let last = headings.get(k + 1).map_or(lines.len(), |n| n.line) - 1;
        let title = if h.text.trim().is_empty() {
            format!("{file_name}, untitled section at L{}", h.line + 1)
        } else {
            h.text.trim().to_owned()
        };
        sections.push(Section {
            slug: unique_slug(&slugify(&h.text), &mut used),
            title,
            level: h.level,
            start_line: line_no(h.line),
            end_line: line_no(last),
            bytes: lines[h.line].start..lines[last].end,
        });
    }
    sections
}

/// The URL-fragment slug of a heading, GitHub style: lowercase letters and
/// digits (any script), `-` and `_` kept, whitespace turned into `-`,
/// everything else dropped; `section` when nothing is left.
pub fn slugify(heading: &str) -> String {
    let mut slug = String::with_capacity(heading.len());
    for c in heading.trim().chars() {
        if c.is_alphanumeric() || c == '-' || c == '_' {
            slug.extend(c.to_lowercase());
        } else if c.is_whitespace() {
            slug.push('-');
        }
    }
    if slug.is_empty() {
        EMPTY_SLUG.to_owned()
    } else {
        slug
    }
}

fn unique_slug(base: &str, used: &mut HashSet<String>) -> String {
    let mut candidate = base.to_owned();
    let mut n = 1u32;
    while used.contains(&candidate) {
        candidate = format!("{base}-{n}");
        n = n.saturating_add(1);
    }
    used.insert(candidate.clone());
    candidate
}

/// Leading spaces (tabs count as too many: a tab indents to column 4).
fn indent(line: &str) -> usize {
    let spaces = line.bytes().take_while(|&b| b == b' ').count();
    if line.as_bytes().get(spaces) == Some(&b'\t') {
        4
    } else {
        spaces
    }
}

/// The text of a line with at most three spaces of indentation, or `None`.
fn block_start(line: &str) -> Option<&str> {
    let n = indent(line);
    (n <= 3).then(|| &line[n..])
}

fn atx_heading(line: &str) -> Option<(u8, String)> {
    let rest = block_start(line)?;
    let hashes = rest.bytes().take_while(|&b| b == b'#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let after = &rest[hashes..];
    if !(after.is_empty() || after.starts_with(' ') || after.starts_with('\t')) {
        return None;
    }
    let body = after.trim_matches(|c| c == ' ' || c == '\t');
    let without_closing = body.trim_end_matches('#');
    let text = if without_closing.is_empty() {
        ""
    } else if without_closing.ends_with(' ') || without_closing.ends_with('\t') {
        without_closing.trim_end_matches([' ', '\t'])
    } else {
        body
    };
    Some((hashes as u8, text.to_owned()))
}

/// An opening code fence: its character and length.
fn opening_fence(line: &str) -> Option<(u8, usize)> {
    let rest = block_start(line)?;
    let ch = *rest.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let len = rest.bytes().take_while(|&b| b == ch).count();
    if len < 3 {
        return None;
    }
    // A backtick fence's info string cannot contain backticks (that is inline code).
    if ch == b'`' && rest[len..].contains('`') {
        return None;
    }
    Some((ch, len))
}

fn closes_fence(line: &str, (ch, len): (u8, usize)) -> bool {
    let Some(rest) = block_start(line) else {
        return false;
    };
    let run = rest.bytes().take_while(|&b| b == ch).count();
    run >= len && rest[run..].trim().is_empty()
}

fn setext_underline(line: &str) -> Option<u8> {
    let rest = block_start(line)?.trim_end();
    let ch = *rest.as_bytes().first()?;
    let level = match ch {
        b'=' => 1,
        b'-' => 2,
        _ => return None,
    };
    rest.bytes().all(|b| b == ch).then_some(level)
}

fn thematic_break(line: &str) -> bool {
    let Some(rest) = block_start(line) else {
        return false;
    };
    let mut marks = rest.bytes().filter(|b| !matches!(b, b' ' | b'\t'));
    let Some(ch) = marks.next() else {
        return false;
    };
    matches!(ch, b'-' | b'*' | b'_') && {
        let count = 1 + marks.clone().count();
        marks.all(|b| b == ch) && count >= 3
    }
}

/// A line that opens a block other than a paragraph (a list item or a block
/// quote): it interrupts a paragraph, so a following underline is not setext.
fn opens_container(line: &str) -> bool {
    let Some(rest) = block_start(line) else {
        return false;
    };
    if rest.starts_with('>') {
        return true;
    }
    let bullet = rest
        .strip_prefix(['-', '*', '+'])
        .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']));
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let ordered = (1..=9).contains(&digits)
        && rest[digits..]
            .strip_prefix(['.', ')'])
            .is_some_and(|r| r.is_empty() || r.starts_with([' ', '\t']));
    bullet || ordered
}

/// The index of the line closing a YAML front-matter block that opens on
/// line 0, if there is one.
fn front_matter_end(doc: &Doc<'_>) -> Option<usize> {
    if doc.count() == 0 || doc.content(0).trim_end() != "---" {
        return None;
    }
    (1..doc.count()).find(|&i| matches!(doc.content(i).trim_end(), "---" | "..."))
}

fn markdown_headings(doc: &Doc<'_>) -> Vec<Heading> {
    let mut headings = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut paragraph: Option<usize> = None;
    let first = front_matter_end(doc).map_or(0, |end| end + 1);
    for i in first..doc.count() {
        let line = doc.content(i);
        if let Some(open) = fence {
            if closes_fence(line, open) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = opening_fence(line) {
            fence = Some(open);
            paragraph = None;
            continue;
        }
        if line.trim().is_empty() {
            paragraph = None;
            continue;
        }
        if let Some((level, text)) = atx_heading(line) {
            headings.push(Heading {
                line: i,
                level,
                text,
            });
            paragraph = None;
            continue;
        }
        if let (Some(start), Some(level)) = (paragraph, setext_underline(line)) {
            let text = (start..i)
                .map(|j| doc.content(j).trim())
                .collect::<Vec<_>>()
                .join(" ");
            headings.push(Heading {
                line: start,
                level,
                text,
            });
            paragraph = None;
            continue;
        }
        if thematic_break(line) || opens_container(line) {
            paragraph = None;
            continue;
        }
        if paragraph.is_none() && indent(line) <= 3 {
            paragraph = Some(i);
        }
    }
    headings
}

/// Whether `line` is an RST adornment: one punctuation character repeated.
fn rst_adornment(line: &str) -> Option<u8> {
    let rest = line.trim_end();
    let ch = *rest.as_bytes().first()?;
    let punctuation = ch.is_ascii_punctuation();
    (punctuation && rest.len() >= 2 && rest.bytes().all(|b| b == ch)).then_some(ch)
}

fn rst_headings(doc: &Doc<'_>) -> Vec<Heading> {
    let count = doc.count();
    let content = |i: usize| doc.content(i);
    // Levels follow the order styles first appear: (character, overlined).
    let mut styles: Vec<(u8, bool)> = Vec::new();
    let mut level_of = |style: (u8, bool)| -> u8 {
        let idx = styles.iter().position(|&s| s == style).unwrap_or_else(|| {
            styles.push(style);
            styles.len() - 1
        });
        u8::try_from(idx + 1).unwrap_or(u8::MAX).min(6)
    };
    let mut headings = Vec::new();
    let mut i = 0;
    while i < count {
        let line = content(i);
        let is_title_text = !line.trim().is_empty()
            && !line.starts_with([' ', '\t'])
            && rst_adornment(line).is_none();
        if !is_title_text || i + 1 >= count {
            i += 1;
            continue;
        }
        let width = line.trim_end().chars().count();
        let under = rst_adornment(content(i + 1));
        let over = i
            .checked_sub(1)
            .and_then(|p| rst_adornment(content(p)).map(|c| (p, c)));
        match under {
            Some(ch) if content(i + 1).trim_end().len() >= width => {
                let overlined = over.filter(|&(_, c)| c == ch);
                let start = overlined.map_or(i, |(p, _)| p);
                headings.push(Heading {
                    line: start,
                    level: level_of((ch, overlined.is_some())),
                    text: line.trim().to_owned(),
                });
                i += 2;
            }
            _ => i += 1,
        }
    }
    headings
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thematic_break_needs_three_marks_of_one_kind() {
        assert!(thematic_break("---"));
        assert!(thematic_break(" * * *"));
        assert!(thematic_break("___"));
        assert!(!thematic_break("--"));
        assert!(!thematic_break("-*-"));
        assert!(!thematic_break("    ---"));
    }

    #[test]
    fn atx_closing_sequence_is_dropped_only_after_a_space() {
        assert_eq!(atx_heading("## Title ##"), Some((2, "Title".into())));
        assert_eq!(atx_heading("# C#"), Some((1, "C#".into())));
        assert_eq!(atx_heading("#hashtag"), None);
        assert_eq!(atx_heading("####### seven"), None);
        assert_eq!(atx_heading("    # indented code"), None);
        assert_eq!(atx_heading("# ###"), Some((1, String::new())));
    }
}
