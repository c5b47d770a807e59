//! Training a static embedding model from source code, count-based:
//! co-occurrence counts within a sliding window, positive pointwise mutual
//! information (PPMI), and a truncated SVD.
//!
//! Why count-based and not word2vec-style: with a corpus of a few hundred
//! crates the two are about as good (Levy, Goldberg & Dagan 2015 found
//! PPMI+SVD with the same tweaks competitive), and this pipeline is
//! deterministic, needs no learning rate, and runs in minutes on one core.
//! The tweaks kept here are theirs: context-distribution smoothing
//! (`alpha = 0.75`), eigenvalue weighting (`U·Σ^p`, `p = 0.5`), and a
//! harmonic window weight (`1/d` for a neighbour at distance `d`).
//!
//! Pipeline ([`train`] runs it end to end):
//! 1. [`VocabCounter`]: pass one over the corpus counts each token's
//!    frequency and how many groups (crates) use it; the vocabulary is the
//!    most frequent tokens used by at least `min_groups` groups, which keeps
//!    one project's private names out.
//! 2. [`Cooccurrence`]: pass two counts weighted co-occurrences within the
//!    window and document frequencies over fixed-size line chunks (for the
//!    pooling weights), plus extra pairs between each doc comment's words
//!    and the code it documents ([`align`], weight `align_weight`): the
//!    prose ↔ identifier links a window only sees at the comment's end.
//! 3. [`ppmi`]: turns counts into a sparse PPMI matrix.
//! 4. [`randomized_svd`]: the top singular vectors by randomised subspace
//!    iteration (Halko, Martinsson & Tropp 2011).
//! 5. Rows `U·Σ^p` are normalised to unit length; each token's pooling weight
//!    is its inverse chunk frequency.
//!
//! Then, for the shipped model (v3), the count-based rows are fine-tuned
//! for retrieval: [`pairs`] mines (doc comment, documented code) and (module
//! doc, file chunk) pairs from the same corpus, and [`train_contrastive`]
//! trains the rows with a symmetric InfoNCE loss over in-batch negatives
//! from the same package, through the unchanged encoder (weighted mean,
//! normalised). The count-based start matters: it gives every word a place,
//! and the pairs then move the words that prose and code share.

pub mod align;
mod contrastive;
mod cooccur;
pub mod corpus;
mod linalg;
pub mod pairs;
mod pipeline;
mod ppmi;
mod sparse;
mod svd;
mod vocab;

pub use contrastive::{
    batch_loss, train_contrastive, ContrastiveConfig, ContrastiveReport, Gradient, Table, TokenPair,
};
pub use cooccur::Cooccurrence;
pub use pipeline::{train, TrainConfig, TrainReport, TrainedModel};
pub use ppmi::ppmi;
pub use sparse::Csr;
#[cfg(test)]
pub(crate) use svd::SplitMix;
pub use svd::{randomized_svd, Svd};
pub use vocab::{Vocab, VocabCounter};
