//! The artifact file: a fixed header, a checksummed manifest, then the
//! members' bytes back to back.
//!
//! ```text
//! magic          8 bytes   "CGPIXART"
//! version        u32       ARTIFACT_VERSION
//! manifest_len   u32       at most MAX_MANIFEST_BYTES
//! manifest       manifest_len bytes (below)
//! manifest_sha   32 bytes  SHA-256 of the manifest: the artifact's id
//! members        each member's bytes, in manifest order, to the end of the file
//! ```
//!
//! The manifest (little-endian; a string is a u32 length and UTF-8 bytes):
//! the index format, the `cgp` that wrote it, the commit (a tag byte, then
//! the id and the branch), the directory it was built from (informational:
//! nothing in the artifact depends on it, every path inside is relative),
//! the file and chunk counts, the embedding model's fingerprint when it
//! carries vectors, and the members (name, length, SHA-256).
//!
//! **Bounded reading.** An artifact may come from an untrusted place, so
//! every length read is checked before anything is allocated for it: the
//! manifest against [`MAX_MANIFEST_BYTES`] and the file size, each string
//! against its own cap and the bytes left, the member count against
//! [`MAX_MEMBERS`], and the members' lengths must add up (without
//! overflow) to exactly the bytes after the manifest. A member is then
//! read into a buffer of its checked length, and its SHA-256 compared,
//! before any of it is decoded. Nothing here panics on input.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::commit::Commit;
use super::error::ArtifactError;
use crate::index::sha256;

/// The file's first bytes.
pub const ARTIFACT_MAGIC: &[u8; 8] = b"CGPIXART";

/// Bumped whenever the layout above changes meaning: an artifact of
/// another version is refused, never reinterpreted.
pub const ARTIFACT_VERSION: u32 = 1;

/// Largest manifest read (a manifest of a handful of members is a few
/// hundred bytes).
pub const MAX_MANIFEST_BYTES: u32 = 1 << 20;

/// Most members an artifact may list.
pub const MAX_MEMBERS: u32 = 8;

/// The fixed header: magic, version, manifest length.
const HEADER_BYTES: u64 = 16;

/// Longest string field of the manifest (a path, a version string).
const MAX_STRING_BYTES: u32 = 4096;

/// The member holding the saved index (a snapshot file, see [`crate::store`]).
pub const INDEX_MEMBER: &str = "index";

/// The member holding the chunk vectors aligned to that snapshot (see
/// [`crate::vectors_file`]).
pub const VECTORS_MEMBER: &str = "vectors";

/// What the manifest says of one member.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// [`INDEX_MEMBER`] or [`VECTORS_MEMBER`].
    pub name: String,
    /// Its length in bytes.
    pub len: u64,
    /// The SHA-256 of its bytes.
    pub sha256: [u8; 32],
}

/// What an artifact describes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Manifest {
    /// The index format of the snapshot inside ([`crate::store::FORMAT_VERSION`]).
    pub index_format: u32,
    /// The `cgp` (or library) version that wrote it.
    pub created_by: String,
    /// The commit of the checkout it was built from.
    pub commit: Commit,
    /// The directory it was built from, for people: nothing depends on it.
    pub built_from: String,
    /// Files known to the index.
    pub files: u64,
    /// Chunks in the index.
    pub chunks: u64,
    /// The embedding model's fingerprint, when it carries chunk vectors.
    pub model: Option<String>,
    /// The members, in file order.
    pub members: Vec<Member>,
}

/// An artifact read and checked: its manifest, its id and its members' bytes.
#[derive(Debug)]
pub struct ArtifactFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// What it describes.
    pub manifest: Manifest,
    /// The SHA-256 of the manifest (which holds every member's digest).
    pub id: [u8; 32],
    /// Each member's bytes, by manifest order.
    pub members: Vec<Vec<u8>>,
}

impl ArtifactFile {
    /// The artifact id in hex (what health checks and logs show).
    pub fn id_hex(&self) -> String {
        hex(&self.id)
    }

    /// The bytes of the member called `name`.
    pub fn member(&self, name: &str) -> Option<&[u8]> {
        self.manifest
            .members
            .iter()
            .position(|m| m.name == name)
            .and_then(|i| self.members.get(i))
            .map(Vec::as_slice)
    }

    /// Take the bytes of the member called `name` out of the artifact.
    pub fn take_member(&mut self, name: &str) -> Option<Vec<u8>> {
        let i = self.manifest.members.iter().position(|m| m.name == name)?;
        self.members.get_mut(i).map(std::mem::take)
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Write an artifact of `manifest` (its members' lengths and digests are
/// filled from `members`, given as name and bytes) to `out`, through a
/// temporary file renamed into place: a reader never sees half of one.
/// Returns the artifact id.
pub fn write_artifact(
    out: &Path,
    manifest: &mut Manifest,
    members: &[(&str, &[u8])],
) -> Result<[u8; 32], ArtifactError> {
    let io = |source| ArtifactError::Io {
        path: out.to_path_buf(),
        source,
    };
    manifest.members = members
        .iter()
        .map(|(name, bytes)| Member {
            name: (*name).to_owned(),
            len: bytes.len() as u64,
            sha256: sha256(bytes),
        })
        .collect();
    let encoded = encode_manifest(manifest);
    let manifest_len = u32::try_from(encoded.len())
        .ok()
        .filter(|&n| n <= MAX_MANIFEST_BYTES)
        .ok_or_else(|| ArtifactError::Corrupt {
            path: out.to_path_buf(),
            what: format!("a manifest of {} bytes is over the limit", encoded.len()),
        })?;
    let id = sha256(&encoded);
    let tmp = out.with_extension(format!("tmp{}", std::process::id()));
    let write = || -> std::io::Result<()> {
        let mut f = std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?,
        );
        f.write_all(ARTIFACT_MAGIC)?;
        f.write_all(&ARTIFACT_VERSION.to_le_bytes())?;
        f.write_all(&manifest_len.to_le_bytes())?;
        f.write_all(&encoded)?;
        f.write_all(&id)?;
        for (_, bytes) in members {
            f.write_all(bytes)?;
        }
        let f = f.into_inner().map_err(|e| e.into_error())?;
        f.sync_all()?;
        std::fs::rename(&tmp, out)
    };
    write().map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })?;
    Ok(id)
}

/// Read the artifact at `path` and check it whole: magic, versions, the
/// manifest's digest, every length against the file's size, and every
/// member's SHA-256. Nothing of a member is decoded here.
pub fn read_artifact(path: &Path) -> Result<ArtifactFile, ArtifactError> {
    let io = |source| ArtifactError::Io {
        path: path.to_path_buf(),
        source,
    };
    let corrupt = |what: String| ArtifactError::Corrupt {
        path: path.to_path_buf(),
        what,
    };
    let mut file = std::fs::File::open(path).map_err(io)?;
    let size = file.metadata().map_err(io)?.len();
    let mut head = [0u8; HEADER_BYTES as usize];
    if size < HEADER_BYTES {
        // Too short even for the header: say which, from what is there.
        let mut some = Vec::new();
        (&mut file).take(8).read_to_end(&mut some).map_err(io)?;
        if some.len() < 8 || some[..] != ARTIFACT_MAGIC[..] {
            return Err(ArtifactError::NotAnArtifact {
                path: path.to_path_buf(),
            });
        }
        return Err(corrupt(format!("{size} bytes, shorter than its header")));
    }
    file.read_exact(&mut head).map_err(io)?;
    if head[..8] != ARTIFACT_MAGIC[..] {
        return Err(ArtifactError::NotAnArtifact {
            path: path.to_path_buf(),
        });
    }
    let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
    if version != ARTIFACT_VERSION {
        return Err(ArtifactError::Version {
            path: path.to_path_buf(),
            what: "artifact format",
            found: version,
            supported: ARTIFACT_VERSION,
        });
    }
    let manifest_len = u32::from_le_bytes([head[12], head[13], head[14], head[15]]);
    if manifest_len > MAX_MANIFEST_BYTES {
        return Err(corrupt(format!(
            "a manifest length of {manifest_len} bytes, over the {MAX_MANIFEST_BYTES}-byte limit"
        )));
    }
    let members_start = HEADER_BYTES + u64::from(manifest_len) + 32;
    if members_start > size {
        return Err(corrupt(format!(
            "a manifest of {manifest_len} bytes in a file of {size}"
        )));
    }
    let mut manifest_bytes = vec![0u8; manifest_len as usize];
    file.read_exact(&mut manifest_bytes).map_err(io)?;
    let mut id = [0u8; 32];
    file.read_exact(&mut id).map_err(io)?;
    if sha256(&manifest_bytes) != id {
        return Err(corrupt("the manifest does not match its checksum".into()));
    }
    let manifest = decode_manifest(&manifest_bytes).map_err(corrupt)?;
    if manifest.index_format != crate::store::FORMAT_VERSION {
        return Err(ArtifactError::Version {
            path: path.to_path_buf(),
            what: "index format",
            found: manifest.index_format,
            supported: crate::store::FORMAT_VERSION,
        });
    }
    let total = manifest
        .members
        .iter()
        .try_fold(0u64, |sum, m| sum.checked_add(m.len))
        .ok_or_else(|| corrupt("member lengths overflow".into()))?;
    if total != size - members_start {
        return Err(corrupt(format!(
            "members of {total} bytes where the file holds {}",
            size - members_start
        )));
    }
    let mut members = Vec::with_capacity(manifest.members.len());
    for m in &manifest.members {
        // Checked above against the file's size: this allocation is of
        // bytes that are there.
        let len = usize::try_from(m.len)
            .map_err(|_| corrupt("a member over the address space".into()))?;
        let mut bytes = vec![0u8; len];
        file.read_exact(&mut bytes).map_err(io)?;
        if sha256(&bytes) != m.sha256 {
            return Err(corrupt(format!(
                "member {:?} does not match its checksum",
                m.name
            )));
        }
        members.push(bytes);
    }
    Ok(ArtifactFile {
        path: path.to_path_buf(),
        manifest,
        id,
        members,
    })
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn put_opt(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        None => out.push(0),
        Some(s) => {
            out.push(1);
            put_str(out, s);
        }
    }
}

/// The manifest's bytes (see the module docs).
fn encode_manifest(m: &Manifest) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&m.index_format.to_le_bytes());
    put_str(&mut out, &m.created_by);
    match &m.commit {
        Commit::None => out.push(0),
        Commit::Git { id, head } => {
            out.push(1);
            put_str(&mut out, id);
            put_opt(&mut out, head.as_deref());
        }
    }
    put_str(&mut out, &m.built_from);
    out.extend_from_slice(&m.files.to_le_bytes());
    out.extend_from_slice(&m.chunks.to_le_bytes());
    put_opt(&mut out, m.model.as_deref());
    out.extend_from_slice(&(m.members.len() as u32).to_le_bytes());
    for member in &m.members {
        put_str(&mut out, &member.name);
        out.extend_from_slice(&member.len.to_le_bytes());
        out.extend_from_slice(&member.sha256);
    }
    out
}

/// A cursor over the manifest whose every read is bounded by what is left.
struct Cursor<'a> {
    bytes: &'a [u8],
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err(format!("the manifest ends inside its {what}"));
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    fn u8(&mut self, what: &str) -> Result<u8, String> {
        Ok(self.array::<1>(what)?[0])
    }

    fn u32(&mut self, what: &str) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &str) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    fn str(&mut self, what: &str) -> Result<String, String> {
        let len = self.u32(what)?;
        if len > MAX_STRING_BYTES {
            return Err(format!(
                "a {what} of {len} bytes, over the {MAX_STRING_BYTES}-byte limit"
            ));
        }
        let bytes = self.take(len as usize, what)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| format!("its {what} is not UTF-8"))
    }

    fn opt_str(&mut self, what: &str) -> Result<Option<String>, String> {
        match self.u8(what)? {
            0 => Ok(None),
            1 => self.str(what).map(Some),
            tag => Err(format!("an unknown tag {tag} before its {what}")),
        }
    }
}

/// The manifest from its bytes; the error says what does not hold.
fn decode_manifest(bytes: &[u8]) -> Result<Manifest, String> {
    let mut c = Cursor { bytes };
    let index_format = c.u32("index format")?;
    let created_by = c.str("writer's version")?;
    let commit = match c.u8("commit")? {
        0 => Commit::None,
        1 => {
            let id = c.str("commit id")?;
            let valid = matches!(id.len(), 40 | 64)
                && id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
            if !valid {
                return Err(format!(
                    "a commit id {:?} that is not 40 or 64 hex digits",
                    id.chars().take(80).collect::<String>()
                ));
            }
            Commit::Git {
                id,
                head: c.opt_str("branch")?,
            }
        }
        tag => return Err(format!("an unknown commit tag {tag}")),
    };
    let built_from = c.str("source directory")?;
    let files = c.u64("file count")?;
    let chunks = c.u64("chunk count")?;
    let model = c.opt_str("model fingerprint")?;
    let count = c.u32("member count")?;
    if count > MAX_MEMBERS {
        return Err(format!("{count} members, over the limit of {MAX_MEMBERS}"));
    }
    let mut members: Vec<Member> = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let name = c.str("member name")?;
        if name != INDEX_MEMBER && name != VECTORS_MEMBER {
            return Err(format!(
                "an unknown member {:?}",
                name.chars().take(80).collect::<String>()
            ));
        }
        if members.iter().any(|m| m.name == name) {
            return Err(format!("member {name:?} twice"));
        }
        members.push(Member {
            name,
            len: c.u64("member length")?,
            sha256: c.array("member checksum")?,
        });
    }
    if !c.bytes.is_empty() {
        return Err(format!(
            "{} bytes after the manifest's last field",
            c.bytes.len()
        ));
    }
    if !members.iter().any(|m| m.name == INDEX_MEMBER) {
        return Err("no index member".into());
    }
    if model.is_some() != members.iter().any(|m| m.name == VECTORS_MEMBER) {
        return Err("a model fingerprint without vectors, or vectors without one".into());
    }
    Ok(Manifest {
        index_format,
        created_by,
        commit,
        built_from,
        files,
        chunks,
        model,
        members,
    })
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
