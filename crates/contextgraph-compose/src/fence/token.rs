//! The boundary token: a short lowercase hex string, the same in every fence
//! line of a prompt, chosen so that it occurs in no content and no attribute
//! value of that prompt. Content is then quoted byte for byte, and still
//! cannot end its block or open another: every fence line carries the token,
//! and no content holds it.
//!
//! "Occurs" is read loosely, so that a reader (person or model) cannot be
//! fooled either: the scan folds ASCII case, the fullwidth forms
//! (`０`–`９`, `Ａ`–`Ｆ`, `ａ`–`ｆ`), the mathematical alphanumeric symbols
//! (`𝟎`, `𝐀`, `𝒂`, …) and the Cyrillic, Greek and other look-alikes of
//! [`CONFUSABLES`] onto the hex digits they look like, so `7F3A`,
//! `７ｆ３ａ`, `𝟕𝐟𝟑𝐚` and `7с15` (Cyrillic `с`) all count as occurrences
//! of their hex reading.
//!
//! # Unpredictable, and reproducible where it matters (N4)
//!
//! A token that is the same in every prompt (`7c15`) lets a file hold a
//! look-alike of it that a model or a person takes for the real fence. So
//! the candidate sequence starts at a point derived from a **per-run
//! random seed** and the prompt's own texts (a keyed hash of them): the
//! token differs from run to run and from prompt to prompt, a file's
//! author cannot know it, and within one run the same texts still get the
//! same token (composing twice gives the same bytes, and parallel and
//! sequential composition agree). The seed is random per process unless
//! fixed: [`FENCE_SEED_ENV`] (`CGP_FENCE_SEED`) or [`set_fence_seed`], where
//! seed `0` means the fixed, content-independent sequence (`7c15` first)
//! that reproducible dumps and tests compare against.
//!
//! # Choice, in linear time
//!
//! One pass over the texts collects every window of `len` consecutive
//! (folded) hex digits. Candidates then come from a full-period sequence
//! over the `16^len` tokens starting at the seeded point, and the first
//! candidate not collected is the token. The texts hold fewer windows than
//! their length in bytes, and `len` is chosen so that `16^len` exceeds that
//! length ([`token_len_for`]), so a free candidate always exists and is
//! found after at most `windows + 1` set lookups, however the content was
//! crafted.

use std::collections::HashSet;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

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

/// Environment variable fixing the fence seed (a decimal or `0x` hex
/// `u64`; `0` is the fixed sequence). Unset: random per process.
pub const FENCE_SEED_ENV: &str = "CGP_FENCE_SEED";

/// Look-alikes of the hex digits outside ASCII, fullwidth and the
/// mathematical alphanumerics: `(code point, the digit it reads as)`.
/// Source: the prototypes `0`–`9`, `a`–`f`, `A`–`F` (and `O`, `l`, which
/// read as `0` and `1`) in Unicode Technical Standard #39's
/// `confusables.txt`, restricted to Cyrillic, Greek, Latin extensions,
/// number forms and letterlike symbols (the scripts a prompt plausibly
/// mixes with Latin text).
pub const CONFUSABLES: &[(u32, u8)] = &[
    (0x0184, 0xb), // Latin capital tone six Ƅ
    (0x01B7, 0x3), // Latin capital ezh Ʒ
    (0x01BC, 0x5), // Latin capital tone five Ƽ
    (0x021C, 0x3), // Latin capital yogh Ȝ
    (0x0222, 0x8), // Latin capital ou Ȣ
    (0x0223, 0x8), // Latin small ou ȣ
    (0x0251, 0xa), // Latin small alpha ɑ
    (0x0391, 0xa), // Greek capital alpha Α
    (0x0392, 0xb), // Greek capital beta Β
    (0x0395, 0xe), // Greek capital epsilon Ε
    (0x0399, 0x1), // Greek capital iota Ι
    (0x039F, 0x0), // Greek capital omicron Ο
    (0x03B1, 0xa), // Greek small alpha α
    (0x03BF, 0x0), // Greek small omicron ο
    (0x03DC, 0xf), // Greek letter digamma Ϝ
    (0x03DD, 0xf), // Greek small digamma ϝ
    (0x03F2, 0xc), // Greek lunate sigma ϲ
    (0x03F9, 0xc), // Greek capital lunate sigma Ϲ
    (0x0406, 0x1), // Cyrillic capital byelorussian-ukrainian I І
    (0x0410, 0xa), // Cyrillic capital A А
    (0x0412, 0xb), // Cyrillic capital ve В
    (0x0415, 0xe), // Cyrillic capital ie Е
    (0x0417, 0x3), // Cyrillic capital ze З
    (0x041E, 0x0), // Cyrillic capital O О
    (0x0421, 0xc), // Cyrillic capital es С
    (0x042C, 0xb), // Cyrillic capital soft sign Ь
    (0x0430, 0xa), // Cyrillic small a а
    (0x0431, 0x6), // Cyrillic small be б
    (0x0435, 0xe), // Cyrillic small ie е
    (0x0437, 0x3), // Cyrillic small ze з
    (0x043E, 0x0), // Cyrillic small o о
    (0x0441, 0xc), // Cyrillic small es с
    (0x04BD, 0xe), // Cyrillic small abkhasian che ҽ
    (0x04C0, 0x1), // Cyrillic palochka Ӏ
    (0x04E0, 0x3), // Cyrillic capital abkhasian dze Ӡ
    (0x0501, 0xd), // Cyrillic small komi de ԁ
    (0x1D04, 0xc), // Latin letter small capital C ᴄ
    (0x212C, 0xb), // script capital B ℬ
    (0x212E, 0xe), // estimated symbol ℮
    (0x2130, 0xe), // script capital E ℰ
    (0x2131, 0xf), // script capital F ℱ
    (0x2160, 0x1), // Roman numeral one Ⅰ
    (0x216D, 0xc), // Roman numeral one hundred Ⅽ
    (0x216E, 0xd), // Roman numeral five hundred Ⅾ
    (0x217C, 0x1), // small Roman numeral fifty ⅼ
    (0x217D, 0xc), // small Roman numeral one hundred ⅽ
    (0x217E, 0xd), // small Roman numeral five hundred ⅾ
];

/// Sentinel: no seed set programmatically.
const UNSET: u64 = u64::MAX;
static SEED_OVERRIDE: AtomicU64 = AtomicU64::new(UNSET);

/// Fix the fence seed for this process (`Some(0)`: the fixed sequence;
/// `None`: back to [`FENCE_SEED_ENV`] or random). For tests and
/// reproducible dumps; a host serving real prompts leaves it random.
pub fn set_fence_seed(seed: Option<u64>) {
    SEED_OVERRIDE.store(seed.unwrap_or(UNSET), Ordering::Relaxed);
}

/// The seed in force: set programmatically, else from the environment,
/// else random once per process.
pub fn fence_seed() -> u64 {
    let set = SEED_OVERRIDE.load(Ordering::Relaxed);
    if set != UNSET {
        return set;
    }
    static RUN: OnceLock<u64> = OnceLock::new();
    *RUN.get_or_init(|| {
        if let Ok(text) = std::env::var(FENCE_SEED_ENV) {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => text.parse().ok(),
            };
            if let Some(seed) = parsed {
                return seed;
            }
        }
        // std's RandomState is keyed from the OS's randomness.
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u128(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos()),
        );
        h.write_u32(std::process::id());
        // Never 0 (the fixed sequence) nor the sentinel.
        h.finish().clamp(1, UNSET - 1)
    })
}

/// The hex digit a character reads as (see the module docs), if any.
#[inline]
fn hex_of_char(c: u32) -> Option<u8> {
    if let Ok(i) = CONFUSABLES.binary_search_by_key(&c, |(cp, _)| *cp) {
        return Some(CONFUSABLES[i].1);
    }
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
            let width = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let digit = text
                .get(i..i + width)
                .and_then(|s| s.chars().next())
                .and_then(|c| hex_of_char(u32::from(c)));
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
    choose_token_seeded(texts, len, fence_seed())
}

/// [`choose_token`] under an explicit `seed` (`0`: the fixed sequence).
pub fn choose_token_seeded<'t>(
    texts: impl IntoIterator<Item = &'t str>,
    len: usize,
    seed: u64,
) -> String {
    let len = len.clamp(MIN_TOKEN_LEN, MAX_TOKEN_LEN);
    let mut taken: HashSet<u64> = HashSet::new();
    // A keyed hash of the texts: the start differs per prompt and per run,
    // and is the same for the same texts within a run.
    let mut keyed = std::collections::hash_map::DefaultHasher::new();
    keyed.write_u64(seed);
    for text in texts {
        if seed != 0 {
            keyed.write(text.as_bytes());
            keyed.write_u8(0xff);
        }
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
    let start = if seed == 0 { SEED } else { keyed.finish() };
    // `start + i·STEP` (mod 16^len) visits every token once as `i` goes
    // round (STEP is odd, 16^len a power of two): there are more tokens
    // than windows, so this ends within `taken.len() + 1` candidates.
    let mut candidate = start & mask;
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
        assert_eq!(choose_token_seeded(["plain text"], 4, 0), "7c15");
        assert_eq!(choose_token_seeded(["plain text"], 6, 0), "4a7c15");
        assert_eq!(choose_token([], 8).len(), 8);
        assert_eq!(token_len_for(0), 4);
        assert_eq!(token_len_for((1 << 16) - 1), 4);
        assert_eq!(token_len_for(1 << 16), 5);
        assert_eq!(token_len_for(1 << 24), 7);
    }

    #[test]
    fn a_token_present_in_any_folded_form_is_skipped() {
        let first = choose_token_seeded([""], 6, 0);
        let upper = first.to_uppercase();
        let fullwidth: String = first
            .chars()
            .map(|c| char::from_u32(u32::from(c) + 0xFEE0).unwrap_or(c))
            .collect();
        for text in [first.clone(), upper, fullwidth, format!("x{first}y")] {
            assert!(contains_token(&text, &first), "{text}");
            let token = choose_token_seeded([text.as_str()], 6, 0);
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
        let token = choose_token_seeded([text.as_str()], 6, 0);
        assert_eq!(token, format!("{candidate:06x}"));
        assert!(!contains_token(&text, &token));
    }

    #[test]
    fn windows_never_span_a_non_hex_character() {
        assert!(!contains_token("4a7 c15", "4a7c15"));
        assert!(!contains_token("4a7\u{FF47}c15", "4a7c15"), "ｇ is not hex");
        assert!(contains_token("日本4a7c15語", "4a7c15"));
    }

    #[test]
    fn the_confusables_table_is_sorted_and_reads_each_as_its_digit() {
        assert!(CONFUSABLES.windows(2).all(|w| w[0].0 < w[1].0));
        // The second round's forgeries: Cyrillic с, о, З, ԁ; Greek ο, α.
        assert_eq!(hex_of_char(u32::from('с')), Some(0xc));
        assert_eq!(hex_of_char(u32::from('о')), Some(0x0));
        assert_eq!(hex_of_char(u32::from('З')), Some(0x3));
        assert_eq!(hex_of_char(u32::from('ԁ')), Some(0xd));
        assert_eq!(hex_of_char(u32::from('ο')), Some(0x0));
        assert_eq!(hex_of_char(u32::from('α')), Some(0xa));
        assert!(contains_token("</frame-7с15>", "7c15"), "Cyrillic с");
        assert!(contains_token("ԁеаԁ", "dead"));
        assert!(contains_token("З0о1", "3001"));
    }

    /// N4: the token is not constant: it depends on the run's seed and
    /// the prompt's texts, and is stable for the same seed and texts.
    #[test]
    fn the_token_is_unpredictable_across_runs_and_prompts_but_reproducible() {
        let texts = ["some content of a file"];
        let tokens: HashSet<String> = (1..=64u64)
            .map(|seed| choose_token_seeded(texts, 4, seed))
            .collect();
        assert!(tokens.len() > 48, "{} distinct of 64", tokens.len());
        let per_prompt: HashSet<String> = (0..64)
            .map(|i| choose_token_seeded([format!("file {i}").as_str()], 4, 99))
            .collect();
        assert!(per_prompt.len() > 48, "{} distinct of 64", per_prompt.len());
        assert_eq!(
            choose_token_seeded(texts, 4, 7),
            choose_token_seeded(texts, 4, 7)
        );
        assert_ne!(fence_seed(), UNSET);
    }
}
