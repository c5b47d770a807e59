//! Fuzz target bodies (not API: hidden from the docs, may change any time).
//!
//! [`fence`] is the `fence` target's whole body: the libFuzzer program in the
//! repository's `fuzz/` workspace calls it with the fuzzer's bytes, and a
//! stable test replays every committed seed and regression input through it
//! (`tests/it/fuzz_replay.rs`). It panics exactly when a property breaks.

use std::sync::OnceLock;

use crate::fence::{contains_token, parse_prompt, render_prompt, FenceAttributes, PREAMBLE};

/// Whether [`fence`] asserts the look-alike property (see
/// [`lookalike_property_enabled`]) when `CGP_FUZZ_N4_LOOKALIKES` is unset.
///
/// On since issue 26's finding N4 was fixed (the fence fold now covers the
/// Cyrillic and Greek look-alikes [`lookalike_hex`] lists, and the fence
/// token is random per run); `CGP_FUZZ_N4_LOOKALIKES=0` turns it off to
/// fuzz the other properties alone.
pub const N4_LOOKALIKE_PROPERTY_DEFAULT: bool = true;

/// The environment switch: `1` asserts the look-alike property, `0` does
/// not, anything else (or unset) follows [`N4_LOOKALIKE_PROPERTY_DEFAULT`].
pub const N4_LOOKALIKE_ENV: &str = "CGP_FUZZ_N4_LOOKALIKES";

/// Whether the look-alike property is asserted (read once per process).
pub fn lookalike_property_enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| match std::env::var(N4_LOOKALIKE_ENV).as_deref() {
        Ok("1") => true,
        Ok("0") => false,
        _ => N4_LOOKALIKE_PROPERTY_DEFAULT,
    })
}

/// The ASCII hex character a non-Latin letter is drawn like, for the
/// letters a reader (person or model) takes for one (Unicode's
/// confusables for 0–9, a–f, A–F in the Cyrillic, Greek and Armenian
/// blocks). ASCII case, fullwidth and mathematical forms are the fence's
/// own fold ([`contains_token`]) and are not repeated here.
pub fn lookalike_hex(c: char) -> Option<char> {
    Some(match c {
        // 0
        '\u{041E}' | '\u{043E}' | '\u{039F}' | '\u{03BF}' | '\u{0555}' | '\u{0585}' => '0',
        '\u{0417}' => '3', // Cyrillic Ze
        '\u{0431}' => '6', // Cyrillic be
        '\u{0430}' | '\u{03B1}' => 'a',
        '\u{0410}' | '\u{0391}' => 'A',
        '\u{042C}' => 'b', // Cyrillic soft sign
        '\u{0412}' | '\u{0392}' => 'B',
        '\u{0441}' | '\u{03F2}' => 'c',
        '\u{0421}' | '\u{03F9}' => 'C',
        '\u{0501}' => 'd', // Cyrillic komi de
        '\u{0435}' => 'e',
        '\u{0415}' | '\u{0395}' => 'E',
        '\u{03DC}' => 'F', // Greek digamma
        _ => return None,
    })
}

/// Whether `text` shows `token` to a reader: the fence's fold, plus
/// [`lookalike_hex`].
fn shows_token(text: &str, token: &str) -> bool {
    if contains_token(text, token) {
        return true;
    }
    if !text.chars().any(|c| lookalike_hex(c).is_some()) {
        return false;
    }
    let folded: String = text
        .chars()
        .map(|c| lookalike_hex(c).unwrap_or(c))
        .collect();
    contains_token(&folded, token)
}

/// One frame of the input: provider, label, title, content.
type Parts = [String; 4];

/// The frames an input describes: records separated by U+001E, fields
/// (provider, label, title, content) by U+001F; missing fields are empty.
/// At most 8 frames.
fn frames_of(text: &str) -> Vec<Parts> {
    text.split('\u{1e}')
        .take(8)
        .map(|record| {
            let mut fields = record.splitn(4, '\u{1f}').map(str::to_owned);
            std::array::from_fn(|_| fields.next().unwrap_or_default())
        })
        .collect()
}

fn render(frames: &[Parts]) -> String {
    render_prompt(frames.iter().map(|[provider, label, title, content]| {
        (
            FenceAttributes {
                provider,
                label,
                title,
            },
            content.as_str(),
        )
    }))
}

/// `fence`: the input (lossy UTF-8) as frames (see `frames_of`) and as a
/// prompt.
///
/// - Render then parse is the identity: every content, label, title and
///   provider comes back exactly, so no content ended its block, opened
///   another or broke an attribute; there is exactly one opening and one
///   closing fence line per frame.
/// - The token shows in no content or attribute to a reader, look-alikes
///   included (`shows_token`); asserted only when
///   [`lookalike_property_enabled`] (finding N4).
/// - The input read as a prompt parses or is refused with an error, and
///   what parses renders back to a prompt that parses to the same frames.
pub fn fence(data: &[u8]) {
    fence_with(data, lookalike_property_enabled());
}

/// [`fence`], with the look-alike property asserted or not as `lookalikes`
/// says instead of the switch.
pub fn fence_with(data: &[u8], lookalikes: bool) {
    let text = String::from_utf8_lossy(data);
    let frames = frames_of(&text);
    let prompt = render(&frames);
    let parsed = parse_prompt(&prompt)
        .unwrap_or_else(|e| panic!("a rendered prompt parses: {e}\n{prompt:?}"));
    let back: Vec<Parts> = parsed
        .into_iter()
        .map(|f| [f.provider, f.label, f.title, f.content])
        .collect();
    assert_eq!(back, frames, "parse(render(frames)) == frames");
    let rest = &prompt[PREAMBLE.len()..];
    let token = &rest["<frame-".len()..rest.find([' ', '>']).expect("a fence line")];
    assert_eq!(
        prompt.matches(&format!("<frame-{token}")).count(),
        frames.len(),
        "one opening line per frame"
    );
    assert_eq!(
        prompt.matches(&format!("\n</frame-{token}>\n")).count(),
        frames.len(),
        "one closing line per frame"
    );
    if lookalikes {
        for text in frames.iter().flatten() {
            assert!(
                !shows_token(text, token),
                "N4: the boundary token {token} shows (through look-alikes) in {text:?}"
            );
        }
    }
    if let Ok(read) = parse_prompt(&text) {
        let frames: Vec<Parts> = read
            .into_iter()
            .map(|f| [f.provider, f.label, f.title, f.content])
            .collect();
        let again = parse_prompt(&render(&frames))
            .unwrap_or_else(|e| panic!("a re-rendered prompt parses: {e}"));
        let again: Vec<Parts> = again
            .into_iter()
            .map(|f| [f.provider, f.label, f.title, f.content])
            .collect();
        assert_eq!(again, frames, "a parsed prompt renders back to itself");
    }
}
