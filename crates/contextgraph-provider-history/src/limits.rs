//! The bounds on the work one request (or one index build) may cause.

/// Most bytes of a commit message's body kept in the index and served.
pub const MAX_BODY_BYTES: usize = 2_000;

/// Most commits indexed in one build (newest first); older history is
/// left out with a note. An incremental build adds only new commits.
pub const MAX_INDEXED_COMMITS: usize = 200_000;

/// Most changed paths kept per commit (a vendoring commit touching
/// thousands of files says little about any one of them).
pub const MAX_PATHS_PER_COMMIT: usize = 200;

/// Most diff bytes shown in one frame (whole hunks, in order, while they fit).
pub const MAX_HUNK_BYTES_PER_FRAME: usize = 3_000;

/// Most diff bytes read to answer one request, over all its frames.
pub const MAX_DIFF_BYTES_PER_REQUEST: usize = 48_000;

/// Most anchor files blamed per request.
pub const MAX_BLAMED_FILES: usize = 4;

/// Most lines of one file blamed per request.
pub const MAX_BLAMED_LINES: u32 = 400;

/// Most candidates turned into frames per request before packing.
pub const MAX_CANDIDATES: usize = 48;

/// Most identities judged in one `verify`.
pub const MAX_VERIFY_IDS: usize = 256;

/// Most paths listed in one frame.
pub const MAX_LISTED_PATHS: usize = 30;
