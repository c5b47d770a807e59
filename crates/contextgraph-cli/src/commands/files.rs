//! Reading the small files a flag names (a bearer token, a CA bundle) with a
//! size cap, so a wrong path such as `/dev/zero` or a log file fails at once
//! with a sentence instead of filling memory.

use std::io::Read as _;
use std::path::Path;

/// Largest token file read (a token file holds only the token).
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 * 1024;

/// At most `max` bytes of `path`, or why not, in words for a person (the
/// caller names the flag and the file; the contents never appear).
pub fn read_capped(path: &Path, max: u64) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path)
        .map_err(|e| format!("cannot open it ({e}); check the path and permissions"))?;
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it ({e})"))?;
    if bytes.len() as u64 > max {
        return Err(format!("larger than {max} bytes"));
    }
    Ok(bytes)
}

/// The text of a token file: capped at [`MAX_TOKEN_FILE_BYTES`], UTF-8.
/// Trimming and validation are the caller's (each end has its own token type).
pub fn read_token_file(path: &Path) -> Result<String, String> {
    let bytes = read_capped(path, MAX_TOKEN_FILE_BYTES)
        .map_err(|d| format!("{d}; a token file holds only the token"))?;
    String::from_utf8(bytes).map_err(|_| "is not UTF-8 text".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_over_the_cap_is_refused_without_reading_it_all() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'a'; 2048]).unwrap();
        assert_eq!(read_capped(&big, 2048).unwrap().len(), 2048);
        let e = read_capped(&big, 2047).unwrap_err();
        assert!(e.contains("larger than 2047 bytes"), "{e}");
        let e = read_token_file(&dir.path().join("missing")).unwrap_err();
        assert!(e.contains("cannot open it"), "{e}");
        std::fs::write(&big, [0xff, 0xfe]).unwrap();
        assert_eq!(read_token_file(&big).unwrap_err(), "is not UTF-8 text");
    }
}
