//! R3 through the whole composer: hostile ids, labels, titles and content from
//! several providers compose into a prompt that parses back into exactly the
//! cited frames, with unique labels and a budget that holds.
#![no_main]

use contextgraph_compose::{compose, parse_prompt, Budget, Options, ProviderOutcome};
use contextgraph_types::{token_cost_of_len, ContextFrame, FrameKind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let budget = data.first().map_or(0, |&b| u32::from(b) * 64);
    let mut outcomes: Vec<ProviderOutcome> = (0..3).map(|p| ProviderOutcome::accepted(format!("p{p}<\""), vec![])).collect();
    for (i, frame) in data.get(1..).unwrap_or_default().split(|&b| b == 0xFE).take(16).enumerate() {
        let mut fields = frame.split(|&b| b == 0xFF).map(|f| String::from_utf8_lossy(f).into_owned());
        let mut next = || fields.next().unwrap_or_default();
        let id = format!("{}#{i}", next());
        let (label, title, content) = (next(), next(), next());
        let mut f = ContextFrame::new(id, FrameKind::Doc, title, content);
        f.citation_label = Some(label);
        if let contextgraph_compose::ProviderStatus::Accepted { frames } = &mut outcomes[i % 3].status {
            frames.push(f);
        }
    }
    let c = compose(&outcomes, &Options::new(Budget::budget_tokens(budget))).expect("distinct providers");
    let parsed = parse_prompt(&c.prompt).expect("a composed prompt always parses");
    assert_eq!(parsed.len(), c.citations.len());
    for (block, citation) in parsed.iter().zip(&c.citations) {
        assert_eq!(block.label, citation.label);
        assert_eq!(block.provider, citation.frame.provider_id);
        let source = outcomes
            .iter()
            .flat_map(|o| o.offered_frames())
            .find(|f| f.id == citation.frame.frame_id)
            .expect("cited frames were offered");
        assert_eq!(Some(block.content.as_str()), source.content.as_deref());
    }
    assert!(token_cost_of_len(c.prompt.len()) <= budget);
    let offered: usize = outcomes.iter().map(|o| o.offered_frames().len()).sum();
    assert_eq!(c.audit.frames.len(), offered);
});
