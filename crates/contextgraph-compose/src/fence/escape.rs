//! Attribute escaping: an attribute value is one line of text between two
//! `"`, and nothing in it can end the value, the line or the tag, nor be
//! displayed as something else.
//!
//! `&` `<` `>` `"` become `&amp;` `&lt;` `&gt;` `&quot;`; every other
//! character that must go becomes a hexadecimal character reference
//! (`&#xFF1C;`): the look-alikes of those four (compatibility forms such as
//! fullwidth `＜` and small `﹤`, `≮`, and the common visual confusables
//! `‹ 〈 ⟨ ❮ ˂ ᐸ …`), every control character (so a value is one line) and
//! the bidirectional controls (so a value cannot be displayed reordered).
//! Content is never escaped: it is quoted byte for byte (see [`super`]).

use std::fmt;

/// Look-alikes of `<`, `&`, `>` and `"` (compatibility forms and common
/// visual confusables), escaped in attribute values.
const LOOKALIKES: [char; 26] = [
    '\u{02C2}', '\u{02C3}', '\u{1433}', '\u{1438}', '\u{16B2}', '\u{2039}', '\u{203A}', '\u{226E}',
    '\u{226F}', '\u{2329}', '\u{232A}', '\u{276C}', '\u{276D}', '\u{276E}', '\u{276F}', '\u{27E8}',
    '\u{27E9}', '\u{3008}', '\u{3009}', '\u{FE60}', '\u{FE64}', '\u{FE65}', '\u{FF02}', '\u{FF06}',
    '\u{FF1C}', '\u{FF1E}',
];

/// Whether an attribute value must escape `c`.
pub(crate) fn is_attribute_escaped(c: char) -> bool {
    matches!(c, '&' | '<' | '>' | '"')
        || c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{061C}' | '\u{200E}' | '\u{200F}'
                | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
        || LOOKALIKES.binary_search(&c).is_ok()
}

/// Append `value` escaped for a fence attribute to `out`.
pub fn escape_attribute_into(value: &str, out: &mut String) {
    for c in value.chars() {
        push_attribute_char(c, out);
    }
}

pub(crate) fn push_attribute_char(c: char, out: &mut String) {
    if !is_attribute_escaped(c) {
        out.push(c);
        return;
    }
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        '"' => out.push_str("&quot;"),
        _ => {
            use fmt::Write;
            // Writing to a String cannot fail.
            let _ = write!(out, "&#x{:X};", u32::from(c));
        }
    }
}

/// The byte length of `value` escaped for an attribute.
pub fn escaped_attribute_len(value: &str) -> usize {
    value
        .chars()
        .map(|c| {
            if !is_attribute_escaped(c) {
                return c.len_utf8();
            }
            match c {
                '&' | '<' | '>' => 4 + usize::from(c == '&'),
                '"' => 6,
                // "&#x" + hex digits + ";"
                _ => 4 + hex_digits(u32::from(c)),
            }
        })
        .sum()
}

fn hex_digits(mut v: u32) -> usize {
    let mut n = 1;
    while v >= 16 {
        v >>= 4;
        n += 1;
    }
    n
}

/// Undo attribute escaping, accepting only the canonical form; on failure,
/// the byte offset (within `raw`) of the offending character.
pub(crate) fn unescape_attribute(raw: &str) -> Result<String, usize> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices();
    while let Some((at, c)) = chars.next() {
        if c != '&' {
            if is_attribute_escaped(c) {
                return Err(at);
            }
            out.push(c);
            continue;
        }
        let tail = &raw[at..];
        // The longest canonical reference is `&#x10FFFF;` (10 bytes).
        let end = tail.bytes().take(10).position(|b| b == b';').ok_or(at)?;
        let reference = &tail[..=end];
        let decoded = decode_reference(reference).ok_or(at)?;
        // Canonical: the renderer would have written exactly this reference.
        if !is_attribute_escaped(decoded) {
            return Err(at);
        }
        let mut canonical = String::new();
        push_attribute_char(decoded, &mut canonical);
        if canonical != reference {
            return Err(at);
        }
        out.push(decoded);
        // References are ASCII: one char per byte.
        for _ in 1..reference.len() {
            chars.next();
        }
    }
    Ok(out)
}

/// `&amp;` `&lt;` `&gt;` `&quot;` or `&#x<HEX>;` to its character.
fn decode_reference(reference: &str) -> Option<char> {
    match reference {
        "&amp;" => Some('&'),
        "&lt;" => Some('<'),
        "&gt;" => Some('>'),
        "&quot;" => Some('"'),
        _ => {
            let hex = reference.strip_prefix("&#x")?.strip_suffix(';')?;
            if hex.is_empty() || hex.len() > 6 {
                return None;
            }
            char::from_u32(u32::from_str_radix(hex, 16).ok()?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookalikes_are_sorted_for_binary_search() {
        assert!(LOOKALIKES.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn escaping_round_trips_and_predicts_its_length() {
        for value in [
            "p\"<&>",
            "\u{202E}x\n",
            "＜l＞",
            "t\u{7F}",
            "plain",
            "日本語 ≮",
        ] {
            let mut out = String::new();
            escape_attribute_into(value, &mut out);
            assert_eq!(out.len(), escaped_attribute_len(value));
            assert!(!out.contains(['"', '<', '>', '\n']), "{out}");
            assert_eq!(unescape_attribute(&out).as_deref(), Ok(value));
        }
    }

    #[test]
    fn only_the_canonical_reference_is_accepted() {
        assert!(unescape_attribute("&#x3C;").is_err(), "`<` is written &lt;");
        assert!(
            unescape_attribute("&#x41;").is_err(),
            "`A` is never escaped"
        );
        assert!(unescape_attribute("&nbsp;").is_err());
        assert!(unescape_attribute("&amp").is_err());
        assert!(unescape_attribute("a<b").is_err());
        assert_eq!(unescape_attribute("&#xFF1C;").as_deref(), Ok("＜"));
    }
}
