//! Frame ids: `<relative path>#<heading slug>`.
//!
//! The id must survive a round trip through `verify`, which re-finds the
//! section from the id alone. Slugs never contain `#`, but paths may, so in
//! the path part `%` is written `%25` and `#` is written `%23`; the first
//! `#` of an id then always separates path from slug.

/// The frame id of the section `slug` of the document at `rel`.
pub fn frame_id(rel: &str, slug: &str) -> String {
    let mut id = String::with_capacity(rel.len() + slug.len() + 1);
    for c in rel.chars() {
        match c {
            '%' => id.push_str("%25"),
            '#' => id.push_str("%23"),
            c => id.push(c),
        }
    }
    id.push('#');
    id.push_str(slug);
    id
}

/// The `(relative path, slug)` a frame id names, or `None` when it is not
/// an id this provider issues.
pub fn parse_frame_id(id: &str) -> Option<(String, &str)> {
    let (path, slug) = id.split_once('#')?;
    if path.is_empty() || slug.is_empty() {
        return None;
    }
    let mut rel = String::with_capacity(path.len());
    let mut rest = path;
    while let Some(i) = rest.find('%') {
        rel.push_str(&rest[..i]);
        let code = rest.get(i..i + 3)?;
        rel.push(match code {
            "%25" => '%',
            "%23" => '#',
            _ => return None,
        });
        rest = &rest[i + 3..];
    }
    rel.push_str(rest);
    Some((rel, slug))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_paths_with_hash_and_percent() {
        for (rel, slug) in [
            ("docs/retry.md", "retry-policy"),
            ("a#b.md", "top"),
            ("100%/x.md", "über-uns-1"),
        ] {
            let id = frame_id(rel, slug);
            assert_eq!(parse_frame_id(&id), Some((rel.to_owned(), slug)), "{id}");
        }
        assert_eq!(frame_id("a#b.md", "top"), "a%23b.md#top");
        assert_eq!(parse_frame_id("no-fragment.md"), None);
        assert_eq!(parse_frame_id("bad%zz.md#top"), None);
        assert_eq!(parse_frame_id("#top"), None);
    }
}
