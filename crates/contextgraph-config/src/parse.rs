//! One `cgp.toml` file: deserialised with every key's span kept, then
//! checked, with each error pointing at the key that is wrong.
//!
//! Unknown keys are errors (`deny_unknown_fields`): a misspelt `timout_ms`
//! silently ignored would leave the user wondering why nothing changed.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::env::Environment;
use crate::error::{line_col, ConfigError};
use crate::model::{Origin, ProviderConfig, ProviderKind, TokenSource, MAX_TIMEOUT_MS, MAX_WEIGHT};

/// Largest configuration file read.
pub(crate) const MAX_FILE_BYTES: u64 = 1024 * 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    budget: Option<Spanned<u32>>,
    safety_factor: Option<Spanned<f64>>,
    timeout_ms: Option<Spanned<u64>>,
    strict_audit: Option<Spanned<bool>>,
    consent_store: Option<Spanned<String>>,
    #[serde(default)]
    providers: BTreeMap<String, Spanned<RawProvider>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    #[serde(rename = "type")]
    kind: Option<Spanned<String>>,
    dir: Option<Spanned<String>>,
    command: Option<Spanned<String>>,
    args: Option<Spanned<Vec<String>>>,
    env: Option<Spanned<BTreeMap<String, String>>>,
    pass_env: Option<Spanned<Vec<String>>>,
    cwd: Option<Spanned<String>>,
    url: Option<Spanned<String>>,
    token_env: Option<Spanned<String>>,
    token_file: Option<Spanned<String>>,
    /// Accepted by the parser only so its presence can be refused with a
    /// precise message; its value is never read or shown.
    token: Option<Spanned<toml::Value>>,
    timeout_ms: Option<Spanned<u64>>,
    weight: Option<Spanned<u32>>,
    enabled: Option<Spanned<bool>>,
}

/// What one file sets. Values carry the line that set them.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FileConfig {
    pub budget: Option<(u32, usize)>,
    pub safety_factor: Option<(f64, usize)>,
    pub timeout_ms: Option<(u64, usize)>,
    pub strict_audit: Option<(bool, usize)>,
    pub consent_store: Option<(PathBuf, usize)>,
    pub providers: Vec<ProviderConfig>,
}

/// Where the checks report: the file, its text, and how to build errors.
struct Ctx<'a> {
    path: &'a Path,
    text: &'a str,
    base: PathBuf,
    env: &'a Environment,
}

impl Ctx<'_> {
    fn at(
        &self,
        span: Range<usize>,
        key: impl Into<Option<String>>,
        message: impl Into<String>,
    ) -> ConfigError {
        let (line, column) = line_col(self.text, span.start);
        ConfigError::At {
            path: self.path.to_path_buf(),
            line,
            column,
            key: key.into(),
            message: message.into(),
        }
    }

    fn line(&self, span: &Range<usize>) -> usize {
        line_col(self.text, span.start).0
    }

    /// A path from the file: `~/` is the home directory, relative paths are
    /// relative to the file's directory.
    fn path_value(&self, value: &Spanned<String>, key: &str) -> Result<PathBuf, ConfigError> {
        let raw = value.get_ref();
        if raw.is_empty() {
            return Err(self.at(value.span(), key.to_owned(), "is empty; give a path"));
        }
        if let Some(rest) = raw.strip_prefix("~/") {
            return match &self.env.home {
                Some(home) => Ok(home.join(rest)),
                None => Err(self.at(
                    value.span(),
                    key.to_owned(),
                    "starts with ~/ but HOME is not set; write the path out in full",
                )),
            };
        }
        let p = PathBuf::from(raw);
        let joined = if p.is_absolute() {
            p
        } else {
            self.base.join(p)
        };
        // `./x` and `a/./b` read better without the `.`; `..` is kept
        // (dropping it would be wrong across symlinks).
        Ok(joined
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect())
    }
}

/// Parse and check one file.
pub(crate) fn parse_file(
    text: &str,
    path: &Path,
    env: &Environment,
) -> Result<FileConfig, ConfigError> {
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let ctx = Ctx {
        path,
        text,
        base,
        env,
    };
    let raw: RawFile = toml::from_str(text).map_err(|e| from_toml_error(&ctx, &e))?;
    let mut out = FileConfig::default();
    if let Some(b) = &raw.budget {
        if *b.get_ref() == 0 {
            return Err(ctx.at(
                b.span(),
                "budget".to_owned(),
                "must be at least 1 (model tokens)",
            ));
        }
        out.budget = Some((*b.get_ref(), ctx.line(&b.span())));
    }
    if let Some(f) = &raw.safety_factor {
        let v = *f.get_ref();
        if !(v.is_finite() && (1.0..=100.0).contains(&v)) {
            return Err(ctx.at(
                f.span(),
                "safety_factor".to_owned(),
                "must be a number from 1.0 to 100.0 (model tokens per budget token; 1.35 is typical)",
            ));
        }
        out.safety_factor = Some((v, ctx.line(&f.span())));
    }
    if let Some(t) = &raw.timeout_ms {
        out.timeout_ms = Some((check_timeout(&ctx, t)?, ctx.line(&t.span())));
    }
    if let Some(s) = &raw.strict_audit {
        out.strict_audit = Some((*s.get_ref(), ctx.line(&s.span())));
    }
    if let Some(c) = &raw.consent_store {
        out.consent_store = Some((ctx.path_value(c, "consent_store")?, ctx.line(&c.span())));
    }
    for (name, spanned) in &raw.providers {
        out.providers.push(provider(&ctx, name, spanned)?);
    }
    Ok(out)
}

fn check_timeout(ctx: &Ctx<'_>, t: &Spanned<u64>) -> Result<u64, ConfigError> {
    let v = *t.get_ref();
    if v == 0 || v > MAX_TIMEOUT_MS {
        return Err(ctx.at(
            t.span(),
            "timeout_ms".to_owned(),
            format!("must be from 1 to {MAX_TIMEOUT_MS} milliseconds"),
        ));
    }
    Ok(v)
}

/// Whether `name` can be a provider name: it is typed on command lines
/// (`cgp consent grant <name>`), so only characters no shell mangles.
pub fn is_valid_provider_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The keys each provider type takes, besides the common ones.
fn keys_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "workspace" => &["dir"],
        "history" => &["dir"],
        "docs" => &["dir"],
        "stdio" => &["command", "args", "env", "pass_env", "cwd"],
        _ => &["url", "token_env", "token_file"],
    }
}

const COMMON_KEYS: &[&str] = &["type", "timeout_ms", "weight", "enabled"];

fn provider(
    ctx: &Ctx<'_>,
    name: &str,
    spanned: &Spanned<RawProvider>,
) -> Result<ProviderConfig, ConfigError> {
    let table_span = spanned.span();
    let raw = spanned.get_ref();
    let key = |k: &str| Some(format!("providers.{name}.{k}"));
    if !is_valid_provider_name(name) {
        return Err(ctx.at(
            table_span,
            Some(format!("providers.{name}")),
            "a provider name is 1 to 64 letters, digits, '-', '_' or '.', not starting with '-' (it is typed in `cgp consent grant <name>`)",
        ));
    }
    if let Some(t) = &raw.token {
        return Err(ctx.at(
            t.span(),
            key("token"),
            "a token is never read from the configuration file (it would be committed, copied and printed); \
             use token_env = \"VAR\" (an environment variable) or token_file = \"path\" (a file only you can read)",
        ));
    }
    let kind = match &raw.kind {
        Some(k) => match k.get_ref().as_str() {
            t @ ("workspace" | "history" | "docs" | "stdio" | "http") => t,
            _ => {
                return Err(ctx.at(
                    k.span(),
                    key("type"),
                    "unknown provider type; use one of workspace, history, docs, stdio, http",
                ))
            }
        },
        None if raw.command.is_some() => "stdio",
        None if raw.url.is_some() => "http",
        None if name == "workspace" => "workspace",
        None if name == "history" => "history",
        None if name == "docs" => "docs",
        None => {
            return Err(ctx.at(
                table_span,
                key("type"),
                "missing: say type = \"workspace\", \"docs\", \"stdio\" (with command) or \"http\" (with url)",
            ))
        }
    };
    // Keys of another type are as wrong as unknown ones: a `url` on a stdio
    // provider would be silently ignored otherwise.
    let present: [(&str, Option<Range<usize>>); 10] = [
        ("dir", raw.dir.as_ref().map(Spanned::span)),
        ("command", raw.command.as_ref().map(Spanned::span)),
        ("args", raw.args.as_ref().map(Spanned::span)),
        ("env", raw.env.as_ref().map(Spanned::span)),
        ("pass_env", raw.pass_env.as_ref().map(Spanned::span)),
        ("cwd", raw.cwd.as_ref().map(Spanned::span)),
        ("url", raw.url.as_ref().map(Spanned::span)),
        ("token_env", raw.token_env.as_ref().map(Spanned::span)),
        ("token_file", raw.token_file.as_ref().map(Spanned::span)),
        ("type", None),
    ];
    let allowed = keys_of(kind);
    for (k, span) in present {
        if let Some(span) = span {
            if !allowed.contains(&k) {
                let mut takes: Vec<&str> = allowed.to_vec();
                takes.extend_from_slice(COMMON_KEYS);
                return Err(ctx.at(
                    span,
                    key(k),
                    format!(
                        "does not apply to a {kind} provider, which takes: {}",
                        takes.join(", ")
                    ),
                ));
            }
        }
    }
    // The built-in providers whose `dir` is optional (the working tree).
    let optional_dir = || {
        raw.dir
            .as_ref()
            .map(|d| ctx.path_value(d, "dir"))
            .transpose()
            .map_err(|e| rekey(e, key("dir")))
    };
    let kind = match kind {
        "workspace" => ProviderKind::Workspace {
            dir: optional_dir()?,
        },
        "history" => ProviderKind::History {
            dir: optional_dir()?,
        },
        "docs" => {
            let Some(dir) = &raw.dir else {
                return Err(ctx.at(
                    table_span,
                    key("dir"),
                    "missing: a docs provider serves a folder; add dir = \"docs\"",
                ));
            };
            ProviderKind::Docs {
                dir: ctx
                    .path_value(dir, "dir")
                    .map_err(|e| rekey(e, key("dir")))?,
            }
        }
        "stdio" => stdio(ctx, name, table_span.clone(), raw)?,
        _ => http(ctx, name, table_span.clone(), raw)?,
    };
    let timeout_ms = raw
        .timeout_ms
        .as_ref()
        .map(|t| check_timeout(ctx, t))
        .transpose()
        .map_err(|e| rekey(e, key("timeout_ms")))?;
    let weight = match &raw.weight {
        None => 1,
        Some(w) if (1..=MAX_WEIGHT).contains(w.get_ref()) => *w.get_ref(),
        Some(w) => {
            return Err(ctx.at(
                w.span(),
                key("weight"),
                format!("must be from 1 to {MAX_WEIGHT} (its share of the budget relative to the others); to turn a provider off use enabled = false"),
            ))
        }
    };
    Ok(ProviderConfig {
        name: name.to_owned(),
        kind,
        timeout_ms,
        weight,
        enabled: raw.enabled.as_ref().is_none_or(|e| *e.get_ref()),
        origin: Origin::File {
            path: ctx.path.to_path_buf(),
            line: ctx.line(&table_span),
        },
    })
}

/// Put the full dotted key on an error raised by a shared helper.
fn rekey(e: ConfigError, key: Option<String>) -> ConfigError {
    match e {
        ConfigError::At {
            path,
            line,
            column,
            message,
            ..
        } => ConfigError::At {
            path,
            line,
            column,
            key,
            message,
        },
        other => other,
    }
}

fn stdio(
    ctx: &Ctx<'_>,
    name: &str,
    table_span: Range<usize>,
    raw: &RawProvider,
) -> Result<ProviderKind, ConfigError> {
    let key = |k: &str| Some(format!("providers.{name}.{k}"));
    let Some(command) = &raw.command else {
        return Err(ctx.at(
            table_span,
            key("command"),
            "missing: a stdio provider needs the program to run, e.g. command = \"cgp\"",
        ));
    };
    if command.get_ref().trim().is_empty() {
        return Err(ctx.at(
            command.span(),
            key("command"),
            "is empty; give the program to run",
        ));
    }
    // A bare name is looked up on PATH; anything with a slash is a path,
    // relative to this file like every other path in it.
    let program = if command.get_ref().contains('/') {
        ctx.path_value(command, "command")
            .map_err(|e| rekey(e, key("command")))?
    } else {
        PathBuf::from(command.get_ref())
    };
    // `command = "python3 provider.py"` is a command line, not a program:
    // nothing splits it, and starting it would fail with "No such file or
    // directory". A path with a space that exists is a program all the same.
    if command.get_ref().contains(char::is_whitespace)
        && !(command.get_ref().contains('/') && program.is_file())
    {
        return Err(ctx.at(
            command.span(),
            key("command"),
            "holds a space: `command` is the program alone, and its arguments go in `args`, e.g. command = \"python3\" and args = [\"provider.py\"]",
        ));
    }
    let env = match &raw.env {
        None => BTreeMap::new(),
        Some(env) => {
            for k in env.get_ref().keys() {
                if !is_valid_env_name(k) {
                    return Err(ctx.at(env.span(), key("env"), format!("{k:?} is not a usable environment variable name (letters, digits and '_', not starting with a digit)")));
                }
            }
            env.get_ref().clone()
        }
    };
    let pass_env = match &raw.pass_env {
        None => Vec::new(),
        Some(list) => {
            if let Some(bad) = list.get_ref().iter().find(|k| !is_valid_env_name(k)) {
                return Err(ctx.at(
                    list.span(),
                    key("pass_env"),
                    format!("{bad:?} is not a usable environment variable name"),
                ));
            }
            list.get_ref().clone()
        }
    };
    Ok(ProviderKind::Stdio {
        command: program,
        args: raw
            .args
            .as_ref()
            .map(|a| a.get_ref().clone())
            .unwrap_or_default(),
        env,
        pass_env,
        // By default it runs in this file's directory, so relative paths in
        // `args` mean what they say from here, whatever directory cgp was
        // started in.
        cwd: Some(
            raw.cwd
                .as_ref()
                .map(|c| ctx.path_value(c, "cwd"))
                .transpose()
                .map_err(|e| rekey(e, key("cwd")))?
                .unwrap_or_else(|| ctx.base.clone()),
        ),
    })
}

fn http(
    ctx: &Ctx<'_>,
    name: &str,
    table_span: Range<usize>,
    raw: &RawProvider,
) -> Result<ProviderKind, ConfigError> {
    let key = |k: &str| Some(format!("providers.{name}.{k}"));
    let Some(url) = &raw.url else {
        return Err(ctx.at(
            table_span,
            key("url"),
            "missing: an http provider needs url = \"https://…\"",
        ));
    };
    let u = url.get_ref();
    let rest = u
        .strip_prefix("https://")
        .or_else(|| u.strip_prefix("http://"));
    if rest.is_none_or(|r| r.is_empty() || r.starts_with('/')) {
        return Err(ctx.at(
            url.span(),
            key("url"),
            "must be an http:// or https:// URL with a host",
        ));
    }
    if rest.is_some_and(|r| {
        r.split('/')
            .next()
            .is_some_and(|authority| authority.contains('@'))
    }) {
        return Err(ctx.at(
            url.span(),
            key("url"),
            "carries credentials (user:password@); credentials never go in the configuration: use token_env or token_file (C8)",
        ));
    }
    let token = match (&raw.token_env, &raw.token_file) {
        (Some(_), Some(f)) => {
            return Err(ctx.at(
                f.span(),
                key("token_file"),
                "give either token_env or token_file, not both",
            ))
        }
        (Some(v), None) => {
            if !is_valid_env_name(v.get_ref()) {
                return Err(ctx.at(v.span(), key("token_env"), "must be the NAME of an environment variable (letters, digits and '_'), not the token"));
            }
            Some(TokenSource::Env(v.get_ref().clone()))
        }
        (None, Some(f)) => Some(TokenSource::File(
            ctx.path_value(f, "token_file")
                .map_err(|e| rekey(e, key("token_file")))?,
        )),
        (None, None) => None,
    };
    Ok(ProviderKind::Http {
        url: u.clone(),
        token,
    })
}

/// Whether `name` can name an environment variable.
pub(crate) fn is_valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 128
}

/// Turn a toml error into one naming line, column and key. The source
/// line itself is never quoted: it might hold a secret.
fn from_toml_error(ctx: &Ctx<'_>, e: &toml::de::Error) -> ConfigError {
    let span = e.span().unwrap_or(0..0);
    let message = e.message().trim().to_owned();
    let key = backticked(&message)
        .filter(|_| message.starts_with("unknown field") || message.starts_with("missing field"))
        .or_else(|| key_on_line(ctx.text, span.start));
    let hint = if message.starts_with("unknown field") {
        "; remove it or fix its spelling (see the cgp.toml reference in the contextgraph-config README)"
    } else if message.starts_with("duplicate key") {
        "; a key or table may be set once: keep one of them"
    } else {
        ""
    };
    ctx.at(span, key, format!("{message}{hint}"))
}

fn backticked(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_owned())
}

/// The full dotted key on the line containing `offset`: a table header
/// (`[providers.a]` names `providers.a`), or `key = …` under the last
/// header above it (`providers.a.command`).
fn key_on_line(text: &str, offset: usize) -> Option<String> {
    let offset = offset.min(text.len());
    let start = text.get(..offset)?.rfind('\n').map_or(0, |i| i + 1);
    let line = text[start..].lines().next()?.trim();
    let key = if let Some(header) = table_header(line) {
        header
    } else {
        let (key, _) = line.split_once('=')?;
        let key = key.trim();
        if key.is_empty() || key.starts_with('[') {
            return None;
        }
        match text[..start]
            .lines()
            .rev()
            .find_map(|l| table_header(l.trim()))
        {
            Some(table) => format!("{table}.{key}"),
            None => key.to_owned(),
        }
    };
    (key.len() <= 200).then_some(key)
}

/// `providers.a` for a `[providers.a]` (or `[[…]]`) line.
fn table_header(line: &str) -> Option<String> {
    let inner = line.strip_prefix('[')?;
    let end = inner.find(']')?;
    let name = inner[..end].trim_start_matches('[').trim();
    (!name.is_empty()).then(|| name.to_owned())
}
