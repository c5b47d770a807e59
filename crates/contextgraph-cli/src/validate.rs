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
        assert!(token_strength("x").is_err());
        assert!(token_strength("0123456789ab").is_ok());
        assert!(token_strength("0123456789a").is_err());
    }
}
