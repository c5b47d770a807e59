//! Reading a composed prompt back: the strict inverse of the renderer.

use std::fmt;

use super::escape::unescape_attribute;
use super::token::{contains_token, token_value};
use super::{BLOCK_SEPARATOR, FENCE_TAG, PREAMBLE};

/// One frame as read back from a composed prompt, all values unescaped.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FencedFrame {
    /// The provider id (declared on the first block of its `src`).
    pub provider: String,
    /// `label` attribute.
    pub label: String,
    /// `title` attribute; empty when the block has none.
    pub title: String,
    /// The quoted content.
    pub content: String,
}

/// Why a text is not a prompt the fence module rendered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset in the prompt where parsing stopped.
    pub offset: usize,
    /// What was expected there.
    pub expected: &'static str,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a composed prompt (R3 fence format) at byte {}: expected {}; \
             only text produced by contextgraph-compose's renderer parses",
            self.offset, self.expected
        )
    }
}

impl std::error::Error for ParseError {}

/// Parse a composed prompt back into its frames, in prompt order.
///
/// Strict: anything the renderer would not produce (a missing preamble, a
/// token that is not 4–16 lowercase hex digits or differs between fence
/// lines, a content or attribute holding the token, an unknown, missing or
/// reordered attribute, a provider declared twice or never, a non-canonical
/// character reference, trailing text) is an error. Linear in the prompt
/// length.
pub fn parse_prompt(prompt: &str) -> Result<Vec<FencedFrame>, ParseError> {
    let mut frames = Vec::new();
    if prompt.is_empty() {
        return Ok(frames);
    }
    if !prompt.starts_with(PREAMBLE) {
        return Err(ParseError {
            offset: 0,
            expected: "the constant preamble",
        });
    }
    let mut p = Cursor {
        text: prompt,
        pos: PREAMBLE.len(),
    };
    // The token, from the first opening line.
    p.expect("<", "`<` opening the first block")?;
    p.expect(FENCE_TAG, "the fence tag")?;
    p.expect("-", "`-` before the boundary token")?;
    let token_end = p
        .rest()
        .find([' ', '>'])
        .ok_or_else(|| p.error("the boundary token"))?;
    let token = &p.rest()[..token_end];
    if token_value(token).is_none() {
        return Err(p.error("a boundary token of 4 to 16 lowercase hex digits"));
    }
    p.pos = PREAMBLE.len();
    let open = format!("<{FENCE_TAG}-{token}");
    let close = format!("</{FENCE_TAG}-{token}>\n");
    let mut sources = Sources::default();
    loop {
        frames.push(parse_block(&mut p, &open, &close, token, &mut sources)?);
        if p.pos == prompt.len() {
            return Ok(frames);
        }
        p.expect(BLOCK_SEPARATOR, "an empty line between blocks")?;
    }
}

/// The providers declared so far: by `src`, or the one provider of an
/// unnumbered prompt (`numbered` is settled by the first block).
#[derive(Default)]
struct Sources {
    numbered: Option<bool>,
    declared: Vec<(Option<u32>, String)>,
}

struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn error(&self, expected: &'static str) -> ParseError {
        ParseError {
            offset: self.pos,
            expected,
        }
    }

    fn expect(&mut self, literal: &str, expected: &'static str) -> Result<(), ParseError> {
        if self.rest().starts_with(literal) {
            self.pos += literal.len();
            Ok(())
        } else {
            Err(self.error(expected))
        }
    }

    /// ` name="value"` if the next attribute is `name`: its raw value.
    fn attribute(&mut self, name: &str) -> Result<Option<(usize, &'a str)>, ParseError> {
        let rest = self.rest();
        let Some(after) = rest
            .strip_prefix(' ')
            .and_then(|r| r.strip_prefix(name))
            .and_then(|r| r.strip_prefix("=\""))
        else {
            return Ok(None);
        };
        self.pos += 1 + name.len() + 2;
        let Some(n) = after.find('"') else {
            return Err(self.error("the closing quote of an attribute"));
        };
        let start = self.pos;
        self.pos += n + 1;
        Ok(Some((start, &after[..n])))
    }
}

fn unescaped(start: usize, raw: &str, token: &str) -> Result<String, ParseError> {
    let value = unescape_attribute(raw).map_err(|at| ParseError {
        offset: start + at,
        expected: "an attribute value in canonical escaped form",
    })?;
    if contains_token(&value, token) {
        return Err(ParseError {
            offset: start,
            expected: "an attribute value without the boundary token",
        });
    }
    Ok(value)
}

fn parse_block(
    p: &mut Cursor<'_>,
    open: &str,
    close: &str,
    token: &str,
    sources: &mut Sources,
) -> Result<FencedFrame, ParseError> {
    p.expect(open, "the opening fence line `<frame-TOKEN`")?;
    let src = match p.attribute("src")? {
        Some((start, raw)) => {
            let canonical =
                !raw.is_empty() && !raw.starts_with('0') && raw.bytes().all(|b| b.is_ascii_digit());
            let n = raw.parse::<u32>().ok().filter(|_| canonical);
            Some(n.ok_or(ParseError {
                offset: start,
                expected: "a src number (decimal, from 1, no leading zero)",
            })?)
        }
        None => None,
    };
    if *sources.numbered.get_or_insert(src.is_some()) != src.is_some() {
        return Err(p.error("a `src` on every block or on none"));
    }
    let known = sources
        .declared
        .iter()
        .find(|(s, _)| *s == src)
        .map(|(_, provider)| provider.clone());
    let provider = match (p.attribute("provider")?, known) {
        (Some((start, raw)), None) => {
            let provider = unescaped(start, raw, token)?;
            sources.declared.push((src, provider.clone()));
            provider
        }
        (None, Some(provider)) => provider,
        (Some(_), Some(_)) => {
            return Err(p.error("no `provider` on a later block of the same provider"))
        }
        (None, None) => return Err(p.error("`provider` on the first block of its provider")),
    };
    let label = match p.attribute("label")? {
        Some((start, raw)) => unescaped(start, raw, token)?,
        None => return Err(p.error("the `label` attribute")),
    };
    let title = match p.attribute("title")? {
        Some((start, raw)) if !raw.is_empty() => unescaped(start, raw, token)?,
        Some(_) => return Err(p.error("no `title` attribute rather than an empty one")),
        None => String::new(),
    };
    p.expect(">\n", "`>` and a newline ending the opening line")?;
    // The token occurs in no content: the first closing line is this block's.
    let start = p.pos;
    let Some(n) = p.rest().find(close) else {
        return Err(p.error("the closing `</frame-TOKEN>` line"));
    };
    let region = &p.rest()[..n];
    let Some(content) = region.strip_suffix('\n') else {
        return Err(ParseError {
            offset: start + n,
            expected: "a newline before the closing line",
        });
    };
    if contains_token(content, token) {
        return Err(ParseError {
            offset: start,
            expected: "content without the boundary token",
        });
    }
    p.pos += n + close.len();
    Ok(FencedFrame {
        provider,
        label,
        title,
        content: content.to_owned(),
    })
}
