//! Flag values checked the way `cgp.toml` and the MCP tool check the same
//! values, with the same words, so a value is refused everywhere or
//! nowhere. Used as clap value parsers: a bad value is a usage error
//! (exit 2) naming the flag, with the fix.

/// `--budget`: as `budget` in cgp.toml.
pub fn budget(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1 (model tokens)".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "must be a whole number of model tokens from 1 to {}",
            u32::MAX
        )),
    }
}

/// The goal of `cgp context`: something to look for.
pub fn goal(text: &str) -> Result<String, String> {
    if text.trim().is_empty() {
        Err("the goal is empty: say what the context is for, e.g. cgp context \"how is the config loaded?\"".to_owned())
    } else {
        Ok(text.to_owned())
    }
}

/// `--safety-factor`: as `safety_factor` in cgp.toml (model tokens per
/// budget token can be no fewer than one).
pub fn safety_factor(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if f.is_finite() && f >= 1.0 => Ok(f),
        _ => Err("must be a number of at least 1.0 (1.35 is typical)".to_owned()),
    }
}

/// `--max-frames`: asking a provider for no frame at all asks for nothing.
pub fn max_frames(text: &str) -> Result<u32, String> {
    match text.trim().parse::<u32>() {
        Ok(0) => Err("must be at least 1 (frames asked of each provider)".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("must be a whole number from 1 to {}", u32::MAX)),
    }
}

/// `--dir`: the workspace must be an existing directory.
pub fn existing_dir(text: &str) -> Result<std::path::PathBuf, String> {
    let path = std::path::PathBuf::from(text);
    if path.is_dir() {
        Ok(path)
    } else if path.exists() {
        Err("not a directory: give the workspace directory (default: the current one)".to_owned())
    } else {
        Err(
            "no such directory: give an existing workspace directory (default: the current one)"
                .to_owned(),
        )
    }
}

/// One `--kinds` value: as `kinds` in the MCP tool.
pub fn kind(text: &str) -> Result<String, String> {
    let names = contextgraph_mcp::args::known_kind_names();
    let name = text.trim();
    if names.contains(&name) {
        Ok(name.to_owned())
    } else {
        Err(format!(
            "{name:?} is not a frame kind (one of: {})",
            names.join(", ")
        ))
    }
}

/// `--max-body-bytes`: a limit of 0 would refuse every request.
pub fn max_body_bytes(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1 byte (larger request bodies get 413)".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err("must be a whole number of bytes".to_owned()),
    }
}

/// Shortest bearer token accepted: one guessable in a few tries protects nothing.
pub const MIN_TOKEN_CHARS: usize = 12;

/// Why a bearer token is too weak to serve with, if it is.
pub fn token_strength(token: &str) -> Result<(), String> {
    let n = token.trim().chars().count();
    if n < MIN_TOKEN_CHARS {
        return Err(format!(
            "the token is {n} characters; use at least {MIN_TOKEN_CHARS} random ones (e.g. `openssl rand -hex 32`)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_refused_in_cgp_toml_and_the_mcp_tool_are_refused_here() {
        assert!(budget("0").unwrap_err().contains("at least 1"));
        assert_eq!(budget("4000"), Ok(4000));
        assert!(kind("symbols").unwrap_err().contains("not a frame kind"));
        assert_eq!(kind("symbol"), Ok("symbol".to_owned()));
        assert!(max_body_bytes("0").is_err());
        assert!(goal("  ").is_err());
        assert_eq!(goal("retry"), Ok("retry".to_owned()));
        for bad in ["0", "0.99", "NaN", "inf", "-2", "lots"] {
            assert!(safety_factor(bad).is_err(), "{bad}");
        }
        assert_eq!(safety_factor("1.35"), Ok(1.35));
        assert!(max_frames("0").is_err());
        assert_eq!(max_frames("3"), Ok(3));
        assert!(existing_dir("/definitely/not/here").is_err());
        assert!(existing_dir("Cargo.toml")
            .unwrap_err()
            .contains("not a directory"));
        assert!(existing_dir(".").is_ok());
        assert!(token_strength("x").is_err());
        assert!(token_strength("0123456789ab").is_ok());
        assert!(token_strength("0123456789a").is_err());
    }
}
