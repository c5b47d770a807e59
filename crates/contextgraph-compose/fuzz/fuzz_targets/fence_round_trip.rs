//! R3: whatever bytes become a frame's provider, label, title and content,
//! the rendered prompt parses back into exactly those frames, each content
//! quoted byte for byte and free of the prompt's boundary token.
#![no_main]

use contextgraph_compose::fence::contains_token;
use contextgraph_compose::{parse_prompt, render_prompt, FenceAttributes, FencedFrame, PREAMBLE};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Frames separated by 0xFE, fields by 0xFF (neither occurs in UTF-8).
    let frames: Vec<FencedFrame> = data
        .split(|&b| b == 0xFE)
        .take(8)
        .map(|frame| {
            let mut fields = frame.split(|&b| b == 0xFF).map(|f| String::from_utf8_lossy(f).into_owned());
            let mut next = || fields.next().unwrap_or_default();
            FencedFrame { provider: next(), label: next(), title: next(), content: next() }
        })
        .collect();
    let prompt = render_prompt(frames.iter().map(|f| {
        (
            FenceAttributes { provider: &f.provider, label: &f.label, title: &f.title },
            f.content.as_str(),
        )
    }));
    let parsed = parse_prompt(&prompt).expect("a rendered prompt always parses");
    assert_eq!(parsed, frames, "parse(render(frames)) == frames");
    if let Some(rest) = prompt.get(PREAMBLE.len() + "<frame-".len()..) {
        let token = &rest[..rest.find([' ', '>']).expect("a fence line")];
        for f in &frames {
            assert!(!contains_token(&f.content, token), "the token occurs in no content");
            assert!(prompt.contains(&format!(">\n{}\n</frame-{token}>\n", f.content)), "verbatim");
        }
    }
});
