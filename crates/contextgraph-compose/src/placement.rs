//! Where included frames go in the prompt.

use serde::{Deserialize, Serialize};

/// The two placement (and selection) modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Byte-stable, for prompt caches (D2): frames are chosen and emitted in
    /// canonical FrameId order, and neither `score` nor any declared
    /// `token_cost` can change a byte of the prompt. The price is that,
    /// under a tight budget, selection follows FrameId order, not relevance;
    /// the host steers relevance through what it asks each provider for.
    #[default]
    Stable,
    /// Value-aware: frames are chosen by score (highest first) and placed
    /// with the best evidence at the edges and the weakest in the middle
    /// (models attend to the start and end of a long context best:
    /// "lost in the middle").
    Ranked,
}

/// Arrange items given best-first so that the best sit at the edges: ranks
/// 0, 2, 4, … from the front and 1, 3, 5, … from the back, the weakest in
/// the middle.
pub fn edges_first<T>(best_first: Vec<T>) -> Vec<T> {
    let mut front = Vec::with_capacity(best_first.len());
    let mut back = Vec::with_capacity(best_first.len() / 2);
    for (rank, item) in best_first.into_iter().enumerate() {
        if rank % 2 == 0 {
            front.push(item);
        } else {
            back.push(item);
        }
    }
    front.extend(back.into_iter().rev());
    front
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_at_the_edges_weakest_in_the_middle() {
        assert_eq!(edges_first(vec![0, 1, 2, 3, 4]), vec![0, 2, 4, 3, 1]);
        assert_eq!(edges_first(vec![0, 1, 2, 3]), vec![0, 2, 3, 1]);
        assert_eq!(edges_first(Vec::<u8>::new()), Vec::<u8>::new());
    }
}
