//! Sectioning (pure): ATX and setext headings, fenced code, CRLF, empty
//! headings, files without headings, unicode, and the tiling property that
//! makes F5 provenance exact.

use contextgraph_provider_docs::sections::{
    slugify, split_sections, Section, Syntax, PREAMBLE_SLUG,
};

fn md(text: &str) -> Vec<Section> {
    let sections = split_sections(text, "doc.md", Syntax::Markdown);
    assert_tiles(text, &sections);
    sections
}

/// Sections are contiguous, in order, line ranges match byte ranges, and
/// from the first section on they cover the text to its end.
fn assert_tiles(text: &str, sections: &[Section]) {
    for pair in sections.windows(2) {
        assert_eq!(pair[0].bytes.end, pair[1].bytes.start, "{sections:#?}");
        assert_eq!(pair[0].end_line + 1, pair[1].start_line, "{sections:#?}");
    }
    if let Some(last) = sections.last() {
        assert_eq!(last.bytes.end, text.len());
    }
    for s in sections {
        assert!(!s.title.trim().is_empty(), "F2: {s:?}");
        assert!(s.start_line <= s.end_line);
        let lines = s.text(text).split_inclusive('\n').count() as u32;
        assert_eq!(lines, s.end_line - s.start_line + 1, "{s:?}");
    }
}

fn titles(sections: &[Section]) -> Vec<(&str, &str, u8)> {
    sections
        .iter()
        .map(|s| (s.title.as_str(), s.slug.as_str(), s.level))
        .collect()
}

#[test]
fn atx_headings_split_sections_at_their_lines() {
    let text = "# One\nbody\n## Two ##\nmore\n### Three\n";
    let s = md(text);
    assert_eq!(
        titles(&s),
        [("One", "one", 1), ("Two", "two", 2), ("Three", "three", 3)]
    );
    assert_eq!(s[0].text(text), "# One\nbody\n");
    assert_eq!((s[1].start_line, s[1].end_line), (3, 4));
    assert_eq!(s[2].text(text), "### Three\n");
}

#[test]
fn setext_headings_start_at_their_text_line() {
    let text = "Intro para.\n\nTitle\n=====\nbody\n\nSub title\n---------\nx\n";
    let s = md(text);
    assert_eq!(
        titles(&s),
        [
            ("doc.md", PREAMBLE_SLUG, 0),
            ("Title", "title", 1),
            ("Sub title", "sub-title", 2)
        ]
    );
    assert_eq!(s[1].text(text), "Title\n=====\nbody\n\n");
    assert_eq!((s[2].start_line, s[2].end_line), (7, 9));
}

#[test]
fn a_multi_line_paragraph_underlined_is_one_heading() {
    let s = md("Long\ntitle\n===\n");
    assert_eq!(titles(&s), [("Long title", "long-title", 1)]);
}

#[test]
fn a_rule_without_a_paragraph_above_is_not_a_heading() {
    let s = md("# A\n\n---\n\ntext\n- item\n---\n");
    assert_eq!(titles(&s), [("A", "a", 1)]);
}

#[test]
fn fenced_code_containing_hash_lines_is_not_a_heading() {
    let text = "# Real\n```sh\n# comment\nTitle\n===\n```\n~~~~\n## also code\n~~~\nstill code\n~~~~\n## After\n";
    let s = md(text);
    assert_eq!(titles(&s), [("Real", "real", 1), ("After", "after", 2)]);
    assert!(s[0].text(text).contains("## also code"));
}

#[test]
fn an_unclosed_fence_runs_to_the_end_of_the_file() {
    let s = md("# Top\n```\n# not a heading\n");
    assert_eq!(titles(&s), [("Top", "top", 1)]);
}

#[test]
fn indented_code_and_hashtags_are_not_headings() {
    let s = md("# H\n    # indented code\n#hashtag\n####### seven\n");
    assert_eq!(s.len(), 1);
}

#[test]
fn crlf_files_keep_their_bytes_and_headings_are_found() {
    let text = "# One\r\nbody\r\n\r\nTwo\r\n---\r\nend";
    let s = md(text);
    assert_eq!(titles(&s), [("One", "one", 1), ("Two", "two", 2)]);
    assert_eq!(s[0].text(text), "# One\r\nbody\r\n\r\n");
    assert_eq!(s[1].text(text), "Two\r\n---\r\nend");
    assert_eq!((s[1].start_line, s[1].end_line), (4, 6));
}

#[test]
fn empty_headings_get_a_title_naming_file_and_line() {
    let text = "# Intro\n#\ntext\n## ##\n";
    let s = md(text);
    assert_eq!(s[1].title, "doc.md, untitled section at L2");
    assert_eq!(s[1].slug, "section");
    assert_eq!(s[2].slug, "section-1");
}

#[test]
fn a_file_without_headings_is_one_section_titled_by_its_name() {
    let text = "Just some notes.\nSecond line.\n";
    let s = md(text);
    assert_eq!(titles(&s), [("doc.md", PREAMBLE_SLUG, 0)]);
    assert_eq!(s[0].text(text), text);
    assert!(md("").is_empty());
    assert!(md("\n\n  \n").is_empty(), "blank text is no section");
}

#[test]
fn unicode_headings_keep_their_letters_in_slugs() {
    let s = md("# Über uns\n## 日本語のドキュメント\n## Ça va? (oui)\n");
    assert_eq!(
        titles(&s),
        [
            ("Über uns", "über-uns", 1),
            ("日本語のドキュメント", "日本語のドキュメント", 2),
            ("Ça va? (oui)", "ça-va-oui", 2),
        ]
    );
}

#[test]
fn duplicate_headings_get_numbered_slugs_and_top_is_reserved_for_the_preamble() {
    let s = md("intro\n# Top\n# Setup\n# Setup\n# Setup-1\n");
    let slugs: Vec<&str> = s.iter().map(|s| s.slug.as_str()).collect();
    assert_eq!(slugs, ["top", "top-1", "setup", "setup-1", "setup-1-1"]);
}

#[test]
fn front_matter_belongs_to_the_preamble_not_a_setext_heading() {
    let s = md("---\ntitle: x\n---\n# Real\n");
    assert_eq!(
        titles(&s),
        [("doc.md", PREAMBLE_SLUG, 0), ("Real", "real", 1)]
    );
}

#[test]
fn a_byte_order_mark_does_not_hide_the_first_heading() {
    let text = "\u{feff}# First\nbody\n";
    let s = md(text);
    assert_eq!(titles(&s), [("First", "first", 1)]);
    assert_eq!(s[0].bytes.start, 0, "the mark stays in the section's bytes");
}

#[test]
fn rst_titles_with_underlines_and_overlines_nest_by_first_appearance() {
    let text = "=====\nGuide\n=====\n\nIntro\n-----\ntext\n\nMore\n----\n\nNext\n=====\n";
    let s = split_sections(text, "guide.rst", Syntax::RestructuredText);
    assert_tiles(text, &s);
    assert_eq!(
        titles(&s),
        [
            ("Guide", "guide", 1),
            ("Intro", "intro", 2),
            ("More", "more", 2),
            ("Next", "next", 3)
        ]
    );
    assert_eq!(Syntax::for_file_name("guide.RST"), Syntax::RestructuredText);
    assert_eq!(Syntax::for_file_name("notes.txt"), Syntax::Markdown);
}

#[test]
fn slugs_follow_fragment_conventions() {
    assert_eq!(slugify("Retry policy"), "retry-policy");
    assert_eq!(
        slugify("  `Config::retry()` & friends "),
        "configretry--friends"
    );
    assert_eq!(slugify("snake_case-and-dash"), "snake_case-and-dash");
    assert_eq!(slugify("!!!"), "section");
}
