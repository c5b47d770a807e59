//! The boundary token: a short lowercase hex string, the same in every fence
//! line of a prompt, chosen so that it occurs in no content and no attribute
//! value of that prompt. Content is then quoted byte for byte, and still
//! cannot end its block or open another: every fence line carries the token,
//! and no content holds it.
//!
//! "Occurs" is read loosely, so that a reader (person or model) cannot be
//! fooled either: the scan folds ASCII case, the fullwidth forms
//! (`０`–`９`, `Ａ`–`Ｆ`, `ａ`–`ｆ`) and the mathematical alphanumeric symbols
//! (`𝟎`, `𝐀`, `𝒂`, …) onto the hex digits they look like, so `7F3A`,
//! `７ｆ３ａ` and `𝟕𝐟𝟑𝐚` all count as occurrences of `7f3a`.
//!
//! # Choice, in linear time
//!
//! One pass over the texts collects every window of `len` consecutive
//! (folded) hex digits. Candidates then come from a fixed full-period
//! sequence over the `16^len` tokens (so the usual token is the same from one
//! prompt to the next, which prompt caches like), and the first candidate not
//! collected is the token. The texts hold fewer windows than their length in
//! bytes, and `len` is chosen so that `16^len` exceeds that length
//! ([`token_len_for`]), so a free candidate always exists and is found after
//! at most `windows + 1` set lookups, however the content was crafted.

use std::collections::HashSet;

/// The shortest boundary token, in hex digits (16⁴ = 65,536 tokens: enough
/// for prompts up to 64 KiB, which covers the usual budgets).
pub const MIN_TOKEN_LEN: usize = 4;
/// The longest boundary token (a `u64` of hex digits).
pub const MAX_TOKEN_LEN: usize = 16;

/// Where the candidate sequence starts, and its (odd, so full-period) step.
const SEED: u64 = 0x9e37_79b9_7f4a_7c15;
const STEP: u64 = 0xbf58_476d_1ce4_e5b9;

/// The token length for texts of `bytes` bytes in total: the shortest,
/// at least [`MIN_TOKEN_LEN`], with more tokens than the texts have windows.
pub fn token_len_for(bytes: usize) -> usize {
    let mut len = MIN_TOKEN_LEN;
    while len < MAX_TOKEN_LEN && (1u128 << (4 * len)) <= bytes as u128 {
        len += 1;
    }
    len
}

/// The hex digit a character reads as (see the module docs), if any.
#[inline]
fn hex_of_char(c: u32) -> Option<u8> {
    let ascii = match c {
        0x30..=0x39 | 0x41..=0x46 | 0x61..=0x66 => c,
        // Fullwidth digits and letters.
        0xFF10..=0xFF19 | 0xFF21..=0xFF26 | 0xFF41..=0xFF46 => c - 0xFEE0,
        // Mathematical alphanumeric letters: 13 styles of A–Z a–z.
        0x1D400..=0x1D6A3 => {
            let i = (c - 0x1D400) % 52;
            if i < 26 {
                0x41 + i
            } else {
                0x61 + i - 26
            }
        }
        // Mathematical digits: 5 styles of 0–9.
        0x1D7CE..=0x1D7FF => 0x30 + (c - 0x1D7CE) % 10,
        _ => return None,
    };
    match ascii {
        0x30..=0x39 => Some((ascii - 0x30) as u8),
        0x41..=0x46 => Some((ascii - 0x41 + 10) as u8),
        0x61..=0x66 => Some((ascii - 0x61 + 10) as u8),
        _ => None,
    }
}

/// Call `window` with every run of `len` consecutive folded hex digits in
/// `text`, as a number (first digit most significant). One forward pass;
/// ASCII bytes are classified without decoding.
fn for_each_window(text: &str, len: usize, mut window: impl FnMut(u64) -> bool) -> bool {
    let mask = if len >= 16 {
        u64::MAX
    } else {
        (1u64 << (4 * len)) - 1
    };
    let (mut value, mut run) = (0u64, 0usize);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let digit = if b < 0x80 {
            i += 1;
            match b {
                b'0'..=b'9' => Some(b - b'0'),
                b'a'..=b'f' => Some(b - b'a' + 10),
                b'A'..=b'F' => Some(b - b'A' + 10),
                _ => None,
            }
        } else {
            // Only 3-byte (U+FFxx) and 4-byte (U+1D4xx–U+1D7xx) characters
            // can fold; others are skipped by their length alone.
            let width = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let digit = if b == 0xEF || b == 0xF0 {
                text.get(i..i + width)
                    .and_then(|s| s.chars().next())
                    .and_then(|c| hex_of_char(u32::from(c)))
            } else {
                None
            };
            i += width;
            digit
        };
        match digit {
            Some(d) => {
                value = (value << 4 | u64::from(d)) & mask;
                run += 1;
                if run >= len && window(value) {
                    return true;
                }
            }
            None => run = 0,
        }
    }
    false
}

/// Whether `token` (lowercase hex) occurs in `text`, folded as the module
/// docs say.
pub fn contains_token(text: &str, token: &str) -> bool {
    let Some(wanted) = token_value(token) else {
        return false;
    };
    for_each_window(text, token.len(), |v| v == wanted)
}

/// The number a token of [`MIN_TOKEN_LEN`]..=[`MAX_TOKEN_LEN`] lowercase hex digits stands for.
pub(crate) fn token_value(token: &str) -> Option<u64> {
    if !(MIN_TOKEN_LEN..=MAX_TOKEN_LEN).contains(&token.len())
        || !token
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    {
        return None;
    }
    u64::from_str_radix(token, 16).ok()
}

/// A token of `len` hex digits that occurs in none of `texts`.
///
/// `len` should be [`token_len_for`] the texts' total length (a longer one
/// is fine); it is clamped to [`MIN_TOKEN_LEN`]..=[`MAX_TOKEN_LEN`]. Linear
/// in the total length.
pub fn choose_token<'t>(texts: impl IntoIterator<Item = &'t str>, len: usize) -> String {
    let len = len.clamp(MIN_TOKEN_LEN, MAX_TOKEN_LEN);
    let mut taken: HashSet<u64> = HashSet::new();
    for text in texts {
        for_each_window(text, len, |v| {
            taken.insert(v);
            false
        });
    }
    let mask = if len >= 16 {
        u64::MAX
    } else {
        (1u64 << (4 * len)) - 1
    };
    // `SEED + i·STEP` (mod 16^len) visits every token once as `i` goes
    // round (STEP is odd, 16^len a power of two): there are more tokens
    // than windows, so this ends within `taken.len() + 1` candidates.
    let mut candidate = SEED & mask;
    while taken.contains(&candidate) {
        candidate = candidate.wrapping_add(STEP) & mask;
    }
    format!("{candidate:0len$x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_usual_token_is_stable_and_the_right_length() {
        assert_eq!(choose_token(["plain text"], 4), "7c15");
        assert_eq!(choose_token(["plain text"], 6), "4a7c15");
        assert_eq!(choose_token([], 8).len(), 8);
        assert_eq!(token_len_for(0), 4);
        assert_eq!(token_len_for((1 << 16) - 1), 4);
        assert_eq!(token_len_for(1 << 16), 5);
        assert_eq!(token_len_for(1 << 24), 7);
    }

    #[test]
    fn a_token_present_in_any_folded_form_is_skipped() {
        let first = choose_token([""], 6);
        let upper = first.to_uppercase();
        let fullwidth: String = first
            .chars()
            .map(|c| char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c))
            .collect();
        for text in [first.clone(), upper, fullwidth, format!("x{first}y")] {
            assert!(contains_token(&text, &first), "{text}");
            let token = choose_token([text.as_str()], 6);
            assert_ne!(token, first, "{text}");
            assert!(!contains_token(&text, &token));
        }
        // Mathematical bold digits and letters fold too.
        assert_eq!(hex_of_char(0x1D7CF), Some(1), "𝟏");
        assert_eq!(hex_of_char(0x1D41A), Some(10), "𝐚");
        assert_eq!(hex_of_char(0x1D400 + 52 + 5), Some(15), "𝐹 (italic F)");
        assert_eq!(hex_of_char(u32::from('g')), None);
    }

    #[test]
    fn content_holding_the_first_many_candidates_gets_a_fresh_token() {
        let mask = (1u64 << 24) - 1;
        let mut candidate = SEED & mask;
        let mut text = String::new();
        for _ in 0..2000 {
            text.push_str(&format!("{candidate:06x} "));
            candidate = candidate.wrapping_add(STEP) & mask;
        }
        let token = choose_token([text.as_str()], 6);
        assert_eq!(token, format!("{candidate:06x}"));
        assert!(!contains_token(&text, &token));
    }

    #[test]
    fn windows_never_span_a_non_hex_character() {
        assert!(!contains_token("4a7 c15", "4a7c15"));
        assert!(!contains_token("4a7\u{FF47}c15", "4a7c15"), "ｇ is not hex");
        assert!(contains_token("日本4a7c15語", "4a7c15"));
    }
}
