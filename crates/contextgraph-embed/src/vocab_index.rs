//! The vocabulary's token → row lookup, done for every token of every
//! text embedded (every token of every file in a cold index build).
//!
//! An open-addressing table of `u64` slots, each the row and 32 bits of the
//! token's hash: a probe reads one slot and compares the token's bytes only
//! when the hash bits match, where a map of boxed strings to rows probed
//! groups of control bytes and compared through a pointer to each
//! candidate's string. The tokens themselves stay in the model's row
//! order ([`StaticModel::token`](crate::StaticModel::token)); the table
//! holds no copy of them.

use std::hash::BuildHasher;

/// The hash of the lookup (the one the map it replaces used).
type Hasher = std::hash::BuildHasherDefault<rustc_hash::FxHasher>;

/// Token → row (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct VocabIndex {
    /// Per slot, `hash bits << 32 | (row + 1)`; 0 is an empty slot. At
    /// most half full, so that probes stay short (and end).
    slots: Vec<u64>,
    /// Rows added.
    len: usize,
}

fn hash(token: &str) -> u64 {
    Hasher::default().hash_one(token)
}

impl VocabIndex {
    /// An empty index with room for `rows` tokens.
    pub(crate) fn with_capacity(rows: usize) -> VocabIndex {
        VocabIndex {
            slots: vec![0; rows.saturating_mul(2).max(16).next_power_of_two()],
            len: 0,
        }
    }

    /// Adds row `row`, `tokens[row]`, unless its token is already there:
    /// then `Err` with the earlier row, which keeps the token. A row out of
    /// range, or from `u32::MAX` on (the loader refuses those), is not
    /// added.
    pub(crate) fn insert(&mut self, tokens: &[Box<str>], row: usize) -> Result<(), u32> {
        let (Some(token), Some(row)) = (
            tokens.get(row),
            u32::try_from(row).ok().filter(|&r| r < u32::MAX),
        ) else {
            return Ok(());
        };
        if let Some(first) = self.get(tokens, token) {
            return Err(first);
        }
        if (self.len + 1) * 2 > self.slots.len() {
            self.grow(tokens);
        }
        self.place(hash(token), row);
        self.len += 1;
        Ok(())
    }

    /// Puts `row`, whose token hashes to `h`, in the first free slot from
    /// its own (there is one: the table is at most half full).
    fn place(&mut self, h: u64, row: u32) {
        let mask = self.slots.len() - 1;
        let mut i = h as usize & mask;
        while self.slots[i] != 0 {
            i = (i + 1) & mask;
        }
        self.slots[i] = (h >> 32 << 32) | u64::from(row + 1);
    }

    /// Doubles the table (the loader sizes it so that this does not
    /// happen; it keeps an index filled past its capacity correct).
    fn grow(&mut self, tokens: &[Box<str>]) {
        let len = (self.slots.len() * 2).max(16);
        let old = std::mem::replace(&mut self.slots, vec![0; len]);
        for slot in old.into_iter().filter(|&s| s != 0) {
            let row = (slot as u32).wrapping_sub(1);
            let token = tokens.get(row as usize).map_or("", |t| &**t);
            self.place(hash(token), row);
        }
    }

    /// The row of `token` in `tokens` (the list the index was built from).
    #[inline]
    pub(crate) fn get(&self, tokens: &[Box<str>], token: &str) -> Option<u32> {
        let h = hash(token);
        let mask = self.slots.len().checked_sub(1)?;
        let mut i = h as usize & mask;
        loop {
            let slot = *self.slots.get(i)?;
            if slot == 0 {
                return None;
            }
            if slot >> 32 == h >> 32 {
                let row = (slot as u32).wrapping_sub(1);
                if tokens.get(row as usize).is_some_and(|t| **t == *token) {
                    return Some(row);
                }
            }
            i = (i + 1) & mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every token finds its row, anything else nothing (prefixes,
    /// extensions, case variants, the empty string), across the table's
    /// sizes; a token given twice is refused with both rows.
    #[test]
    fn tokens_find_their_rows_and_nothing_else_does() {
        for n in [0usize, 1, 7, 8, 9, 1000, 5000] {
            let tokens: Vec<Box<str>> = (0..n).map(|i| format!("tok{i}").into()).collect();
            // Sized for all of them, for a few, for none (grown as filled).
            let mut index = VocabIndex::with_capacity([n, 3, 0][n % 3]);
            for row in 0..n {
                assert_eq!(index.insert(&tokens, row), Ok(()));
            }
            for (row, t) in tokens.iter().enumerate() {
                assert_eq!(index.get(&tokens, t), Some(row as u32));
                for other in [format!("{t}x"), t[..t.len() - 1].to_string(), t.to_uppercase()] {
                    if !tokens.iter().any(|x| **x == *other) {
                        assert_eq!(index.get(&tokens, &other), None, "{other}");
                    }
                }
            }
            assert_eq!(index.get(&tokens, ""), None);
        }
        let tokens: Vec<Box<str>> = ["a", "b", "c", "b"].iter().map(|t| (*t).into()).collect();
        let mut index = VocabIndex::with_capacity(4);
        let added: Vec<Result<(), u32>> = (0..4).map(|row| index.insert(&tokens, row)).collect();
        assert_eq!(added, [Ok(()), Ok(()), Ok(()), Err(1)]);
        assert_eq!(index.get(&tokens, "b"), Some(1));
        assert_eq!(VocabIndex::default().get(&tokens, "a"), None);
    }
}
