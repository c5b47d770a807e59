//! Pass one: which tokens get a vector.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::tokenize::for_each_token;

/// Counts token frequencies and the groups (crates, packages) using each.
#[derive(Debug, Default)]
pub struct VocabCounter {
    counts: FxHashMap<String, (u64, u32)>,
    seen_in_group: FxHashSet<String>,
    current_group: Option<String>,
}

/// The chosen vocabulary: tokens in row order and their ids.
#[derive(Debug, Clone)]
pub struct Vocab {
    /// Tokens, most frequent first.
    pub tokens: Vec<String>,
    /// Token to row.
    pub ids: FxHashMap<String, u32>,
    /// Corpus frequency of each token.
    pub counts: Vec<u64>,
}

impl VocabCounter {
    /// A counter with nothing counted.
    pub fn new() -> Self {
        Self::default()
    }

    /// Counts the tokens of one document belonging to `group`. Documents of
    /// one group should be added one after another: a group's distinct
    /// tokens are tracked only while it is the current one.
    pub fn add(&mut self, group: &str, text: &str) {
        if self.current_group.as_deref() != Some(group) {
            self.current_group = Some(group.to_string());
            self.seen_in_group.clear();
        }
        for_each_token(text, |token| {
            let entry = match self.counts.get_mut(token) {
                Some(entry) => entry,
                None => self.counts.entry(token.to_string()).or_insert((0, 0)),
            };
            entry.0 += 1;
            if !self.seen_in_group.contains(token) {
                self.seen_in_group.insert(token.to_string());
                entry.1 += 1;
            }
        });
    }

    /// The `size` most frequent tokens used by at least `min_groups` groups
    /// and at least `min_count` times, leaving out numbers and non-ASCII
    /// tokens (see `is_word`); ties broken alphabetically so the
    /// result does not depend on hash order.
    pub fn finish(self, size: usize, min_groups: u32, min_count: u64) -> Vocab {
        let mut ranked: Vec<(String, u64)> = self
            .counts
            .into_iter()
            .filter(|(token, (count, groups))| {
                *groups >= min_groups && *count >= min_count && is_word(token)
            })
            .map(|(token, (count, _))| (token, count))
            .collect();
        ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        ranked.truncate(size);
        Vocab::from_ranked(ranked)
    }
}

/// Whether a token may get a vector: ASCII, not only digits. Numbers carry
/// no topic (and `1234` would otherwise sit next to `parse`, from test
/// inputs); in a code corpus the non-ASCII tokens are mostly locale tables
/// and test strings, while the benchmark's queries are English.
pub fn is_word(token: &str) -> bool {
    token.is_ascii() && !token.bytes().all(|b| b.is_ascii_digit())
}

impl Vocab {
    /// Builds a vocabulary from `(token, count)` pairs in row order.
    pub fn from_ranked(ranked: Vec<(String, u64)>) -> Self {
        let ids = ranked
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (t.clone(), i as u32))
            .collect();
        let (tokens, counts) = ranked.into_iter().unzip();
        Self {
            tokens,
            ids,
            counts,
        }
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::VocabCounter;

    #[test]
    fn keeps_frequent_tokens_shared_by_enough_groups() {
        let mut c = VocabCounter::new();
        c.add("a", "parse parse parse private_name token");
        c.add("b", "parse budget token");
        c.add("c", "parse token");
        let v = c.finish(10, 2, 1);
        assert_eq!(v.tokens, ["parse", "token"]);
        assert_eq!(v.counts, [5, 3]);
        assert_eq!(v.ids["token"], 1);
    }

    #[test]
    fn numbers_and_non_ascii_tokens_get_no_vector() {
        let mut c = VocabCounter::new();
        c.add("a", "1234 1234 ты ты sha256 sha256");
        let v = c.finish(10, 1, 1);
        assert_eq!(v.tokens, ["sha"]);
    }

    #[test]
    fn truncates_to_size_by_frequency() {
        let mut c = VocabCounter::new();
        c.add("a", "aa aa aa bb bb cc");
        let v = c.finish(2, 1, 1);
        assert_eq!(v.tokens, ["aa", "bb"]);
    }
}
