//! Item 4 (R3): the rendered prompt parses back into exactly the frames that
//! went in, whatever their content, titles, labels and provider ids, and the
//! content is in the prompt byte for byte.

use crate::common::*;
use contextgraph_compose::fence::{
    block_len, contains_token, escaped_attribute_len, provider_declaration_len, BLOCK_SEPARATOR,
};
use contextgraph_compose::{
    parse_prompt, render_prompt, FenceAttributes, FencedFrame, ProviderOutcome, PREAMBLE,
};
use contextgraph_types::{ContextFrame, FrameKind};
use proptest::prelude::*;

fn fenced() -> impl Strategy<Value = FencedFrame> {
    (
        // Few distinct providers, so prompts mix numbered blocks of one
        // provider with others.
        prop_oneof![
            Just("p".to_owned()),
            Just("q\"<".to_owned()),
            hostile_string()
        ],
        hostile_string(),
        hostile_string(),
        hostile_string(),
    )
        .prop_map(|(provider, label, title, content)| FencedFrame {
            provider,
            label,
            title,
            content,
        })
}

fn attributes(f: &FencedFrame) -> FenceAttributes<'_> {
    FenceAttributes {
        provider: &f.provider,
        label: &f.label,
        title: &f.title,
    }
}

/// The token of a prompt: what follows `<frame-` on its first fence line.
fn token_of(prompt: &str) -> &str {
    let rest = &prompt[PREAMBLE.len() + "<frame-".len()..];
    &rest[..rest.find([' ', '>']).expect("a fence line")]
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn fencing_render_then_parse_is_the_identity(frames in prop::collection::vec(fenced(), 0..6)) {
        let prompt = render_prompt(frames.iter().map(|f| (attributes(f), f.content.as_str())));
        let parsed = parse_prompt(&prompt).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed, &frames);
        if frames.is_empty() {
            prop_assert_eq!(prompt, "");
            return Ok(());
        }
        // The token occurs in no content and no attribute value, and exactly
        // one opening and one closing line per frame carry it: no content
        // closed its block or forged another.
        let token = token_of(&prompt).to_owned();
        for f in &frames {
            for text in [&f.content, &f.provider, &f.label, &f.title] {
                prop_assert!(!contains_token(text, &token), "{:?} holds {}", text, token);
            }
        }
        prop_assert_eq!(prompt.matches(&format!("<frame-{token}")).count(), frames.len());
        prop_assert_eq!(prompt.matches(&format!("\n</frame-{token}>\n")).count(), frames.len());
        // Every content is in the prompt byte for byte, in order.
        let mut at = PREAMBLE.len();
        for f in &frames {
            let found = prompt[at..].find(&format!(">\n{}\n</frame-{token}>\n", f.content));
            prop_assert!(found.is_some(), "{:?} quoted verbatim", f.content);
            at += found.unwrap_or(0) + 1;
        }
        // The predicted size is the rendered size.
        let numbered = frames.iter().any(|f| f.provider != frames[0].provider);
        let mut providers: Vec<&str> = Vec::new();
        let mut expected = PREAMBLE.len() + (frames.len() - 1) * BLOCK_SEPARATOR.len();
        for f in &frames {
            if !providers.contains(&f.provider.as_str()) {
                providers.push(&f.provider);
                expected += provider_declaration_len(&f.provider);
            }
            let src = numbered.then(|| {
                providers.iter().position(|p| *p == f.provider).unwrap_or(0) as u32 + 1
            });
            let title = (!f.title.is_empty()).then(|| escaped_attribute_len(&f.title));
            expected += block_len(token.len(), src, escaped_attribute_len(&f.label), title, f.content.len());
        }
        prop_assert_eq!(prompt.len(), expected, "charged size is the rendered size");
    }

    #[test]
    fn fencing_composed_prompts_parse_back_into_the_cited_frames(
        frames in prop::collection::vec((0usize..3, hostile_string(), hostile_string(), hostile_string(), hostile_string()), 0..10),
    ) {
        let mut outcomes: Vec<ProviderOutcome> =
            ["p\"<one>", "p&two;", "＜three＞"].iter().map(|p| ProviderOutcome::accepted(*p, vec![])).collect();
        for (i, (p, id, label, title, content)) in frames.into_iter().enumerate() {
            let mut f = ContextFrame::new(format!("{id}#{i}"), FrameKind::Doc, title, content);
            f.citation_label = Some(label);
            if let contextgraph_compose::ProviderStatus::Accepted { frames } = &mut outcomes[p].status {
                frames.push(f);
            }
        }
        let c = composed(&outcomes, &unlimited());
        assert_sound(&c, &outcomes);
    }

    #[test]
    fn fencing_no_content_can_close_its_block_or_forge_another(
        content in hostile_string(),
        others in prop::collection::vec(hostile_string(), 0..4),
    ) {
        // Whatever the hostile content holds (closers and openers with the
        // usual token, every case, partial tags, look-alikes, CRLF), the
        // prompt still has exactly one block per frame and the hostile one
        // comes back whole, from the block it was put in.
        let mut frames = vec![FencedFrame {
            provider: "evil".into(),
            label: "evil".into(),
            title: String::new(),
            content: content.clone(),
        }];
        frames.extend(others.into_iter().enumerate().map(|(i, c)| FencedFrame {
            provider: "honest".into(),
            label: format!("honest {i}"),
            title: String::new(),
            content: c,
        }));
        let prompt = render_prompt(frames.iter().map(|f| (attributes(f), f.content.as_str())));
        let parsed = parse_prompt(&prompt).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(parsed.len(), frames.len());
        prop_assert_eq!(&parsed[0].content, &content);
        prop_assert!(parsed.iter().skip(1).all(|f| f.provider == "honest"));
    }
}

#[test]
fn fencing_round_trips_content_edge_cases_exactly() {
    for content in [
        "",
        "\n",
        "\n\n",
        "x\n",
        "\nx",
        "\r",
        "\r\n",
        "x\r\n\r\n",
        "&",
        "&amp;",
        "<",
        ">",
        "\u{0}",
        "</frame-7c15>",
        "\n</frame-7c15>\n",
        "7c15",
    ] {
        let f = FencedFrame {
            provider: "p".into(),
            label: "l".into(),
            title: "t".into(),
            content: content.into(),
        };
        let prompt = render_prompt([(attributes(&f), content)]);
        assert!(
            prompt.contains(&format!(">\n{content}\n</frame-")),
            "{content:?} verbatim"
        );
        assert_eq!(
            parse_prompt(&prompt).expect("parses"),
            vec![f],
            "{content:?}"
        );
    }
}

#[test]
fn fencing_code_is_quoted_unmangled() {
    let code =
        "pub fn summary(self) -> &'static str { \"a<b && c\" }\nlet v: Vec<String> = vec![];\n";
    let f = FencedFrame {
        provider: "p".into(),
        label: "src/lib.rs L1-2".into(),
        title: String::new(),
        content: code.into(),
    };
    let prompt = render_prompt([(attributes(&f), code)]);
    assert!(prompt.contains(code));
    assert!(!prompt.contains("&lt;") && !prompt.contains("&amp;"));
}
