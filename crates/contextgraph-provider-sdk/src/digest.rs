//! SHA-256 wire digests (F5, D1): the SDK's names for the workspace's one
//! hasher, [`contextgraph_types::sha256`], so every frame builder,
//! provenance helper and the runner's honesty guard agree with the host and
//! the composer on the exact same function.

pub use contextgraph_types::sha256::{sha256_digest, Sha256Hasher};
