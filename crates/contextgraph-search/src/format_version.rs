//! The saved index's format version, and why each version was bumped: an
//! index written by another version is rebuilt, never reinterpreted
//! (`store.rs` checks it on every open, `artifact/` in every artifact).

/// Bumped whenever the encoding or the chunking changes meaning: an index
/// written by another version is rebuilt, never reinterpreted. Version 4:
/// oversized chunks are split into pieces that fit a frame and item-level
/// macro blocks are symbols, so an index chunked by version 3 would keep
/// serving the old, unservable chunks. Version 5: the snapshot is laid out
/// in checksummed sections read in place (see the module docs), so a
/// version 4 file would be misread, not merely slower. Version 6: eleven
/// more languages are code (Ruby, PHP, C#, Kotlin, Scala, Swift, Elixir,
/// Bash, Haskell, Lua, Zig), so an index written before keeps their files
/// as line windows of language `other` until it is rebuilt. Version 7:
/// files whose text holds a private key or a token are skipped as secrets,
/// so a version 6 index would keep serving them (their bytes unchanged).
/// Version 8: a Haskell function's equations (with its own signature
/// only) and an Elixir function's clauses are one chunk, PHP's and C#'s
/// `namespace X;` qualify what follows, a Swift extension is
/// `extension T`, an Elixir `defimpl P, for: T` is `P.T`, and Swift calls
/// on the right of an operator are edges, so a version 7 index would keep
/// the old chunk ids and names of those files. Version 9: definitions
/// inside a parse error's recovery are symbols (an ERROR node is walked),
/// so a version 8 index would keep those files, or the part of them after
/// the error, as line windows. Version 10: a file with one very long line
/// (an embedded blob) is no longer skipped as minified unless long lines
/// hold most of its bytes, so a version 9 index would keep lacking it;
/// and a Kotlin class whose annotated primary constructor starts its own
/// line keeps its body and the rest of its file (no longer one parse
/// error from there on), as do a Kotlin `when` guard or annotated
/// accessor, TypeScript generic call signatures without separators and a
/// C or C++ conditional whose branches each open a brace; and a JavaScript or
/// TypeScript function or class exported by assignment (`module.exports =
/// …`, `exports.name = …`) or as the anonymous default is a symbol.
/// Version 11: a Kotlin file that uses `suspend` as a name in an
/// expression (`acquire(suspend = { … })`, `if (suspend(w))`) keeps the
/// rest of the file (no longer one parse error from there on). Version 12:
/// so does one that starts a statement with a member access on a name
/// `where` (`where?.let { … }`, Exposed's SQL dialects). Version 13: a
/// symbol chunk's record holds its qualified name's tokens
/// (`ChunkRecord::symbol_tokens`, written after the symbol's kind label),
/// so a version 12 record would be misread.
pub const FORMAT_VERSION: u32 = 13;
