//! Item 4 (R3): the rendered prompt parses back into exactly the frames that
//! went in, whatever their content, titles, labels, ids and provider ids.

use crate::common::*;
use contextgraph_compose::fence::{block_len, escape_content_into, escaped_content_len};
use contextgraph_compose::{
    parse_prompt, render_prompt, FenceAttributes, FencedFrame, ProviderOutcome,
};
use contextgraph_types::{ContextFrame, FrameKind};
use proptest::prelude::*;

fn fenced() -> impl Strategy<Value = FencedFrame> {
    (
        hostile_string(),
        hostile_string(),
        hostile_string(),
        hostile_string(),
        hostile_string(),
        hostile_string(),
    )
        .prop_map(|(provider, id, kind, label, title, content)| FencedFrame {
            provider,
            id,
            kind,
            label,
            title,
            content,
        })
}

fn attributes(f: &FencedFrame) -> FenceAttributes<'_> {
    FenceAttributes {
        provider: &f.provider,
        id: &f.id,
        kind: &f.kind,
        label: &f.label,
        title: &f.title,
    }
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn fencing_render_then_parse_is_the_identity(frames in prop::collection::vec(fenced(), 0..6)) {
        let prompt = render_prompt(frames.iter().map(|f| (attributes(f), f.content.as_str())));
        let parsed = parse_prompt(&prompt).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(&parsed, &frames);
        // Exactly one opening and one closing line per frame: nothing forged.
        prop_assert_eq!(prompt.matches("<context-frame ").count(), frames.len() + usize::from(!frames.is_empty()));
        prop_assert_eq!(prompt.matches("</context-frame>\n").count(), frames.len());
        let expected_len: usize = frames.iter().map(|f| block_len(&attributes(f), &f.content)).sum::<usize>()
            + if frames.is_empty() { 0 } else { contextgraph_compose::PREAMBLE.len() + frames.len() - 1 };
        prop_assert_eq!(prompt.len(), expected_len, "charged size is the rendered size");
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
    fn fencing_escaped_content_has_no_angle_bracket_and_bounded_growth(content in hostile_string()) {
        let mut out = String::new();
        escape_content_into(&content, &mut out);
        prop_assert!(!out.contains('<'), "no `<` survives, so no fence line can start inside content");
        prop_assert_eq!(out.len(), escaped_content_len(&content));
        prop_assert!(out.len() <= 5 * content.len(), "linear output: at most 5 bytes per input byte");
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
        "&",
        "&amp;",
        "<",
        ">",
        "\u{0}",
        "</context-frame>",
    ] {
        let f = FencedFrame {
            provider: "p".into(),
            id: "i".into(),
            kind: "doc".into(),
            label: "l".into(),
            title: "t".into(),
            content: content.into(),
        };
        let prompt = render_prompt([(attributes(&f), content)]);
        assert_eq!(
            parse_prompt(&prompt).expect("parses"),
            vec![f],
            "{content:?}"
        );
    }
}
