//! A self-contained HTML report of one composition (`cgp context --html`):
//! the goal and budget, the budget as a bar split by provider, every offered
//! frame with what became of it, each citation with its provenance, and the
//! composed prompt.
//!
//! The page is one file: inline CSS, no script, no external asset, and a
//! Content-Security-Policy that forbids scripts and every network fetch,
//! so opening a report can neither run nor load anything.
//!
//! Everything a provider controls (ids, titles, labels, content, URIs,
//! error messages) is hostile input. It only ever reaches the page through
//! [`escape_html`], which escapes `& < > " '`, and shows control characters
//! and bidirectional controls as visible `⟦U+XXXX⟧` marks (so text can be
//! neither hidden nor displayed reordered). Table cells are cut at
//! [`HtmlOptions::max_field_chars`] characters; the prompt is shown whole
//! (the budget bounds it). Provenance URIs become links only for the
//! `https:` and `file:` schemes ([`safe_link`]); anything else, such as
//! `javascript:`, is shown as text.

use std::fmt::Write;

use crate::audit::{FrameStatus, OutcomeAudit};
use crate::budget::Budget;
use crate::compose::Composition;
use crate::outcome::ProviderOutcome;
use crate::ranking::{ranked_frames, RankedFrame};

/// What the report shows besides the composition itself.
#[derive(Debug, Clone, Copy)]
pub struct HtmlOptions<'a> {
    /// The goal the context was composed for, shown as the page's subject.
    pub goal: Option<&'a str>,
    /// The outcomes the composition was made from. The audit records
    /// identities, costs and reasons; with the outcomes the report also
    /// shows each frame's kind, title and declared score.
    pub outcomes: &'a [ProviderOutcome],
    /// Provider-controlled table cells are cut after this many characters
    /// (a `…` marks the cut); the prompt itself is never cut.
    pub max_field_chars: usize,
}

impl Default for HtmlOptions<'_> {
    fn default() -> Self {
        HtmlOptions {
            goal: None,
            outcomes: &[],
            max_field_chars: 300,
        }
    }
}

/// The report of `composition` with default options (no goal, no outcomes:
/// kinds, titles and scores are shown as `—`). See [`render_with`].
pub fn render(composition: &Composition) -> String {
    render_with(composition, &HtmlOptions::default())
}

/// The report of `composition`: a complete HTML document.
pub fn render_with(composition: &Composition, options: &HtmlOptions<'_>) -> String {
    let mut page = Page {
        out: String::with_capacity(
            16 * 1024 + composition.prompt.len() * 11 / 10 + composition.audit.frames.len() * 400,
        ),
        max: options.max_field_chars.max(1),
    };
    let frames = ranked_frames(composition, options.outcomes);
    page.head(options.goal);
    page.summary(composition, options.goal);
    page.budget_bar(composition);
    page.providers(composition);
    page.frames(&frames);
    page.citations(composition);
    page.prompt(composition);
    page.out.push_str("</main>\n</body>\n</html>\n");
    page.out
}

/// Append `text` to `out` escaped for HTML text and attribute values, cut
/// after `max_chars` characters (`None`: never). `& < > " '` become
/// entities; control characters other than `\n` and `\t`, and the
/// bidirectional and invisible formatting characters of the display-text
/// policy (`contextgraph_types::display_text`), become a visible
/// `⟦U+XXXX⟧` mark (an HTML page keeps its own mark, not the terminal's
/// `\u{…}`).
pub fn escape_html(text: &str, max_chars: Option<usize>, out: &mut String) {
    for (n, c) in text.chars().enumerate() {
        if max_chars.is_some_and(|max| n >= max) {
            out.push('…');
            return;
        }
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if is_hidden_control(c) => {
                let _ = write!(out, "⟦U+{:04X}⟧", u32::from(c));
            }
            c => out.push(c),
        }
    }
}

/// Characters that would hide text or change how it is displayed: the
/// workspace's one display-text policy
/// ([`contextgraph_types::display_text::is_escaped`]).
fn is_hidden_control(c: char) -> bool {
    contextgraph_types::display_text::is_escaped(c)
}

/// `uri` if it may be a link: `https://` or `file:` exactly (lowercase, as
/// the renderer compares bytes), with no whitespace, control or bidi
/// character anywhere (a browser would strip or reinterpret those). Any
/// other scheme, `javascript:` and `data:` included, is shown as text.
pub fn safe_link(uri: &str) -> Option<&str> {
    let allowed = uri.starts_with("https://") || uri.starts_with("file:");
    let clean = !uri
        .chars()
        .any(|c| c.is_whitespace() || is_hidden_control(c) || c == '\\');
    (allowed && clean && uri.len() <= 4096).then_some(uri)
}

/// Colours of the providers' budget segments, in provider order (cycled).
const PALETTE: [&str; 8] = [
    "#3b6fd8", "#d8733b", "#2f9e5b", "#a04fc4", "#c9a227", "#d4477a", "#2aa3b5", "#7a6f5c",
];

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d2330;background:#f5f6f8}
main{max-width:1200px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #d6d9e0;padding-bottom:4px}
.goal{font-size:16px;color:#384055;margin:0 0 12px;overflow-wrap:anywhere}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid #d6d9e0;border-radius:6px;padding:8px 12px;min-width:110px}
.card b{display:block;font-size:18px}.card span{color:#5b6275;font-size:12px}
.bar{display:flex;height:26px;border:1px solid #b9bdc8;border-radius:4px;overflow:hidden;background:#fff}
.bar div{height:100%}.bar .pre{background:#8a90a0}.bar .free{background:repeating-linear-gradient(45deg,#fff,#fff 6px,#eceef2 6px,#eceef2 12px)}
.legend{display:flex;flex-wrap:wrap;gap:12px;margin:6px 0 0;font-size:12px}
.sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:4px;vertical-align:-1px}
table{border-collapse:collapse;width:100%;table-layout:fixed;background:#fff;border:1px solid #d6d9e0;font-size:13px}
th,td{text-align:left;padding:5px 6px;border-bottom:1px solid #eceef2;vertical-align:top;overflow-wrap:anywhere}
th{background:#eef0f4;font-weight:600;overflow-wrap:normal}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
td.n{white-space:nowrap}
#frames .c-rank{width:3.2em}#frames .c-score{width:4.2em}#frames .c-tok{width:5.6em}#frames .c-st{width:30%}
#providers .c-name{width:24%}#providers .c-out{width:28%}
.fid{display:block;color:#5b6275;margin-top:2px}.fk{color:#5b6275;font-size:12px}
dl.terms{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:8px 0 0;font-size:12px;color:#384055}
dl.terms dt{font-weight:600}dl.terms dd{margin:0}
tr.inc td:first-child{border-left:4px solid #2f9e5b}tr.exc td:first-child{border-left:4px solid #c94a4a}
.st{font-weight:600;display:block}.inc .st{color:#23784a}.exc .st{color:#a63b3b}
.cite{background:#fff;border:1px solid #d6d9e0;border-radius:6px;padding:8px 12px;margin:0 0 8px}
.cite h3{font-size:14px;margin:0 0 4px;overflow-wrap:anywhere}.cite ul{margin:4px 0 0;padding-left:18px}
code{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;overflow-wrap:anywhere}
pre{background:#fff;border:1px solid #d6d9e0;border-radius:6px;padding:12px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;overflow-wrap:anywhere}
.muted{color:#767d90}
";

/// What the providers table's words mean, under it.
const PROVIDER_TERMS: &str = "<dl class=\"terms\" id=\"provider-terms\">\
<dt>weight</dt><dd>its weight in the budget split (cgp.toml <code>weight</code>, default 1)</dd>\
<dt>demand</dt><dd>budget tokens all its frames would take in the prompt after dedup</dd>\
<dt>share</dt><dd>its part of the budget: the budget split by weight, no provider given more than its demand, the rest passed on to the others</dd>\
<dt>used</dt><dd>budget tokens charged for its included frames (may exceed its share by what others left)</dd>\
<dt>frames</dt><dd>frames of its in the prompt, of those it offered</dd>\
<dt>budget token</dt><dd>the protocol's unit: a quarter of a byte of UTF-8, rounded up (model tokens ÷ the safety factor)</dd>\
</dl>\n";

/// What the frames table's words mean, under it.
const FRAME_TERMS: &str = "<dl class=\"terms\" id=\"frame-terms\">\
<dt>rank</dt><dd>the order in which the composer values the frames: by score, highest first, ties by provider and frame id</dd>\
<dt>score</dt><dd>the relevance its provider declared, 0 to 1</dd>\
<dt>cost</dt><dd>its content in budget tokens, recomputed by the host whatever the provider declared</dd>\
<dt>charge</dt><dd>what its whole block cost in the prompt: content, fence and escapes</dd>\
<dt>UR1</dt><dd>the usage report sent back to providers: <code>budget_consumed</code> is the sum of the included frames' costs (the “content” figure above)</dd>\
</dl>\n";

struct Page {
    out: String,
    max: usize,
}

impl Page {
    /// Escaped, cut provider-controlled text.
    fn text(&mut self, text: &str) {
        escape_html(text, Some(self.max), &mut self.out);
    }

    fn raw(&mut self, html: &str) {
        self.out.push_str(html);
    }

    fn head(&mut self, goal: Option<&str>) {
        self.raw("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        self.raw(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
             style-src 'unsafe-inline'; img-src 'none'; base-uri 'none'; form-action 'none'\">\n",
        );
        self.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        self.raw("<title>Context composition");
        if let Some(goal) = goal {
            self.raw(": ");
            escape_html(goal, Some(120), &mut self.out);
        }
        self.raw("</title>\n<style>");
        self.raw(STYLE);
        self.raw("</style>\n</head>\n<body>\n<main>\n");
    }

    fn summary(&mut self, c: &Composition, goal: Option<&str>) {
        self.raw("<h1>Context composition</h1>\n");
        if let Some(goal) = goal {
            self.raw("<p class=\"goal\" id=\"goal\">Goal: ");
            self.text(goal);
            self.raw("</p>\n");
        }
        let b = &c.audit.budget;
        let included = c.audit.frames.iter().filter(|f| f.is_included()).count();
        let excluded = c.audit.frames.len() - included;
        let given = match b.given {
            Budget::BudgetTokens { tokens } => format!("{tokens} budget tokens"),
            Budget::ModelTokens {
                tokens,
                safety_factor,
            } => format!("{tokens} model tokens ÷ {safety_factor}"),
        };
        let placement = match c.audit.placement {
            crate::Placement::Stable => "stable",
            crate::Placement::Ranked => "ranked",
        };
        self.raw("<div class=\"cards\" id=\"summary\">\n");
        let cards: [(&str, String); 8] = [
            ("budget given", given),
            ("budget tokens", b.requested.to_string()),
            ("used", b.used.to_string()),
            ("remaining", b.remaining.to_string()),
            ("preamble", b.preamble.to_string()),
            ("content (UR1)", b.content.to_string()),
            (
                "frames included",
                format!("{included} of {}", c.audit.frames.len()),
            ),
            ("placement", placement.to_owned()),
        ];
        for (name, value) in cards {
            self.raw("<div class=\"card\"><b>");
            self.text(&value);
            self.raw("</b><span>");
            self.raw(name);
            self.raw("</span></div>\n");
        }
        self.raw("</div>\n");
        let _ = writeln!(
            self.out,
            "<p class=\"muted\">{excluded} frames excluded; every offered frame is listed below with its reason.</p>"
        );
    }

    fn budget_bar(&mut self, c: &Composition) {
        let b = &c.audit.budget;
        let total = f64::from(b.requested.max(1));
        let pct = |v: u32| f64::from(v) * 100.0 / total;
        self.raw("<h2>Budget by provider</h2>\n<div class=\"bar\" id=\"budget-bar\">");
        let preamble = if b.used > 0 { b.preamble } else { 0 };
        if preamble > 0 {
            let _ = write!(
                self.out,
                "<div class=\"pre\" style=\"width:{:.3}%\" title=\"preamble: {preamble}\"></div>",
                pct(preamble)
            );
        }
        for (i, p) in c.audit.providers.iter().enumerate() {
            if p.used == 0 {
                continue;
            }
            let _ = write!(
                self.out,
                "<div style=\"width:{:.3}%;background:{}\" title=\"",
                pct(p.used),
                PALETTE[i % PALETTE.len()]
            );
            self.text(&p.provider_id);
            let _ = write!(self.out, ": {}\"></div>", p.used);
        }
        if b.remaining > 0 {
            let _ = write!(
                self.out,
                "<div class=\"free\" style=\"width:{:.3}%\" title=\"remaining: {}\"></div>",
                pct(b.remaining),
                b.remaining
            );
        }
        self.raw("</div>\n<div class=\"legend\">");
        if preamble > 0 {
            let _ = write!(
                self.out,
                "<span><i class=\"sw\" style=\"background:#8a90a0\"></i>preamble {preamble}</span>"
            );
        }
        for (i, p) in c.audit.providers.iter().enumerate() {
            let _ = write!(
                self.out,
                "<span><i class=\"sw\" style=\"background:{}\"></i>",
                PALETTE[i % PALETTE.len()]
            );
            self.text(&p.provider_id);
            let _ = write!(self.out, " {} (share {})</span>", p.used, p.share);
        }
        let _ = writeln!(
            self.out,
            "<span><i class=\"sw\" style=\"background:#eceef2\"></i>remaining {}</span></div>",
            b.remaining
        );
    }

    fn providers(&mut self, c: &Composition) {
        self.raw(
            "<h2>Providers</h2>\n<table id=\"providers\"><colgroup><col class=\"c-name\">\
             <col class=\"c-out\"><col><col><col><col><col></colgroup>\
             <tr><th>provider</th><th>outcome</th><th class=\"n\">weight</th>\
             <th class=\"n\">demand</th><th class=\"n\">share</th><th class=\"n\">used</th>\
             <th class=\"n\">frames</th></tr>\n",
        );
        for p in &c.audit.providers {
            let ok = matches!(p.outcome, OutcomeAudit::Accepted);
            self.raw(if ok {
                "<tr class=\"inc\"><td>"
            } else {
                "<tr class=\"exc\"><td>"
            });
            self.text(&p.provider_id);
            self.raw("</td><td>");
            self.text(&p.outcome.to_string());
            // The host's repairs: accepted, but not conformant.
            for r in &p.repairs {
                self.raw("<br>");
                self.text(&r.to_string());
            }
            let _ = writeln!(
                self.out,
                "</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
                 <td class=\"n\">{}</td><td class=\"n\">{} of {}</td></tr>",
                p.weight, p.demand, p.share, p.used, p.frames_included, p.frames_offered
            );
        }
        self.raw("</table>\n");
        self.raw(PROVIDER_TERMS);
    }

    fn frames(&mut self, ranked: &[RankedFrame<'_>]) {
        self.raw(
            "<h2>Frames offered, best first</h2>\n<table id=\"frames\"><colgroup>\
             <col class=\"c-rank\"><col class=\"c-score\"><col class=\"c-frame\">\
             <col class=\"c-tok\"><col class=\"c-st\"></colgroup>\
             <tr><th class=\"n\">rank</th><th class=\"n\">score</th><th>frame</th>\
             <th class=\"n\">cost / charge</th><th>status</th></tr>\n",
        );
        for r in ranked {
            let entry = r.entry;
            let (class, status) = match &entry.status {
                FrameStatus::Included(_) => ("inc", "included"),
                FrameStatus::Excluded(_) => ("exc", "excluded"),
            };
            let _ = write!(
                self.out,
                "<tr class=\"{class}\"><td class=\"n\">{}</td><td class=\"n\">",
                r.rank
            );
            match r.score {
                Some(score) => {
                    let _ = write!(self.out, "{score:.3}");
                }
                None => self.raw("<span class=\"muted\">—</span>"),
            }
            self.raw("</td><td>");
            match r.frame {
                Some(f) => {
                    self.raw("<b>");
                    self.text(&f.title);
                    self.raw("</b> <span class=\"fk\">");
                    self.text(f.kind.as_str());
                    self.raw(" · ");
                }
                None => self.raw("<span class=\"fk\">"),
            }
            self.text(&entry.frame.provider_id);
            self.raw("</span><code class=\"fid\">");
            self.text(&entry.frame.frame_id);
            let _ = write!(
                self.out,
                "</code></td><td class=\"n\">{} / ",
                entry.token_cost
            );
            match &entry.status {
                FrameStatus::Included(i) => {
                    let _ = write!(
                        self.out,
                        "{}</td><td><span class=\"st\">{status}</span>block #{} as ",
                        i.charge, i.position
                    );
                    self.text(&i.label);
                }
                FrameStatus::Excluded(e) => {
                    let _ = write!(self.out, "—</td><td><span class=\"st\">{status}</span>");
                    self.text(&e.to_string());
                }
            }
            self.raw("</td></tr>\n");
        }
        self.raw("</table>\n");
        self.raw(FRAME_TERMS);
    }

    fn citations(&mut self, c: &Composition) {
        self.raw("<h2>Citations</h2>\n<div id=\"citations\">\n");
        if c.citations.is_empty() {
            self.raw("<p class=\"muted\">No frame fit the budget.</p>\n");
        }
        for cit in &c.citations {
            self.raw("<div class=\"cite\"><h3>[");
            self.text(&cit.label);
            self.raw("] <code>");
            self.text(&cit.frame.to_string());
            self.raw("</code></h3><ul>");
            for p in &cit.provenance {
                self.raw("<li>");
                self.text(&p.kind);
                self.raw(" ");
                if let Some(uri) = p.uri.as_deref() {
                    match safe_link(uri) {
                        Some(link) => {
                            self.raw("<a rel=\"noopener noreferrer\" href=\"");
                            escape_html(link, None, &mut self.out);
                            self.raw("\"><code>");
                            self.text(uri);
                            self.raw("</code></a>");
                        }
                        None => {
                            self.raw("<code>");
                            self.text(uri);
                            self.raw("</code>");
                        }
                    }
                }
                for (name, value) in [
                    ("lines", &p.range),
                    ("digest", &p.digest),
                    ("method", &p.method),
                    ("by", &p.by),
                ] {
                    if let Some(v) = value {
                        let _ = write!(self.out, " <span class=\"muted\">{name}</span> ");
                        self.text(v);
                    }
                }
                self.raw("</li>");
            }
            if cit.provenance.is_empty() {
                self.raw("<li class=\"muted\">no provenance declared</li>");
            }
            for m in &cit.merged {
                self.raw("<li class=\"muted\">merged duplicate <code>");
                self.text(&m.to_string());
                self.raw("</code></li>");
            }
            self.raw("</ul></div>\n");
        }
        self.raw("</div>\n");
    }

    fn prompt(&mut self, c: &Composition) {
        let _ = writeln!(
            self.out,
            "<h2>Composed prompt <span class=\"muted\">({} bytes)</span></h2>",
            c.prompt.len()
        );
        self.raw("<pre id=\"prompt\">");
        escape_html(&c.prompt, None, &mut self.out);
        self.raw("</pre>\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escaped(text: &str) -> String {
        let mut out = String::new();
        escape_html(text, None, &mut out);
        out
    }

    #[test]
    fn r3_markup_and_quotes_are_escaped() {
        assert_eq!(
            escaped("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;"
        );
        assert_eq!(escaped("</style>"), "&lt;/style&gt;");
        assert_eq!(escaped("\" onmouseover=\"x"), "&quot; onmouseover=&quot;x");
        assert_eq!(escaped("&lt;"), "&amp;lt;");
        assert_eq!(escaped("日本語 ok\n\t"), "日本語 ok\n\t");
    }

    #[test]
    fn r3_control_and_bidi_characters_become_visible_marks() {
        assert_eq!(escaped("a\u{202E}b"), "a⟦U+202E⟧b");
        assert_eq!(escaped("\u{0}\u{1b}[31m"), "⟦U+0000⟧⟦U+001B⟧[31m");
        assert_eq!(
            escaped("\u{2066}\u{200F}\u{FEFF}\r"),
            "⟦U+2066⟧⟦U+200F⟧⟦U+FEFF⟧⟦U+000D⟧"
        );
        assert_eq!(escaped("\u{85}"), "⟦U+0085⟧");
    }

    #[test]
    fn long_fields_are_cut_at_the_limit() {
        let mut out = String::new();
        escape_html(&"<".repeat(10_000), Some(3), &mut out);
        assert_eq!(out, "&lt;&lt;&lt;…");
        let mut out = String::new();
        escape_html("abc", Some(3), &mut out);
        assert_eq!(out, "abc");
    }

    #[test]
    fn only_https_and_file_uris_become_links() {
        assert_eq!(
            safe_link("https://example.org/a?b=1"),
            Some("https://example.org/a?b=1")
        );
        assert_eq!(
            safe_link("file:///repo/src/lib.rs"),
            Some("file:///repo/src/lib.rs")
        );
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            " javascript:alert(1)",
            "java\tscript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "http://example.org/",
            "HTTPS://example.org/",
            "https://exa mple.org/",
            "https://example.org/\u{202E}",
            "file:\\\\host\\share",
            "vbscript:x",
            "",
        ] {
            assert_eq!(safe_link(bad), None, "{bad:?}");
        }
    }
}
