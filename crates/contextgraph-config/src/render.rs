//! The merged configuration as TOML, for `cgp config`: a file that would
//! load back to the same configuration, with a comment on every value
//! saying where it came from. Tokens appear only as the reference
//! (`token_env = "VAR"`, `token_file = "path"`).

use std::fmt::Write;
use std::path::Path;

use crate::model::{Config, Origin, ProviderKind, TokenSource};

fn quote(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

fn path(p: &Path) -> String {
    quote(&p.to_string_lossy())
}

fn list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quote(s)).collect();
    format!("[{}]", quoted.join(", "))
}

fn from(origin: &Origin) -> String {
    format!("# {origin}")
}

impl Config {
    /// The configuration as commented TOML.
    pub fn to_toml(&self) -> String {
        let mut out = String::new();
        if self.files.is_empty() {
            out.push_str("# No cgp.toml was found: these are the built-in defaults.\n");
        } else {
            out.push_str("# Merged from (later files win):\n");
            for f in &self.files {
                let _ = writeln!(out, "#   {}", f.display());
            }
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "budget = {}  {}",
            self.budget.value,
            from(&self.budget.origin)
        );
        let _ = writeln!(
            out,
            "safety_factor = {}  {}",
            toml::Value::Float(self.safety_factor.value),
            from(&self.safety_factor.origin)
        );
        let _ = writeln!(
            out,
            "timeout_ms = {}  {}",
            self.timeout_ms.value,
            from(&self.timeout_ms.origin)
        );
        let _ = writeln!(
            out,
            "strict_audit = {}  {}",
            self.strict_audit.value,
            from(&self.strict_audit.origin)
        );
        match &self.consent_store {
            Some(s) => {
                let _ = writeln!(
                    out,
                    "consent_store = {}  {}",
                    path(&s.value),
                    from(&s.origin)
                );
            }
            None => out.push_str(
                "# consent_store: the default location ($CGP_DATA_DIR or the XDG data dir)\n",
            ),
        }
        for p in &self.providers {
            let _ = writeln!(out, "\n[providers.{}]  {}", p.name, from(&p.origin));
            let _ = writeln!(out, "type = {}", quote(p.kind.type_name()));
            match &p.kind {
                ProviderKind::Workspace { dir } => match dir {
                    Some(d) => {
                        let _ = writeln!(out, "dir = {}", path(d));
                    }
                    None => out.push_str("# dir: the workspace the command runs on\n"),
                },
                ProviderKind::History { dir } => match dir {
                    Some(d) => {
                        let _ = writeln!(out, "dir = {}", path(d));
                    }
                    None => {
                        out.push_str("# dir: the repository of the workspace the command runs on\n")
                    }
                },
                ProviderKind::Docs { dir } => {
                    let _ = writeln!(out, "dir = {}", path(dir));
                }
                ProviderKind::Stdio {
                    command,
                    args,
                    env,
                    pass_env,
                    cwd,
                } => {
                    let _ = writeln!(out, "command = {}", path(command));
                    if !args.is_empty() {
                        let _ = writeln!(out, "args = {}", list(args));
                    }
                    if !env.is_empty() {
                        let pairs: Vec<String> = env
                            .iter()
                            .map(|(k, v)| format!("{} = {}", quote(k), quote(v)))
                            .collect();
                        let _ = writeln!(out, "env = {{ {} }}", pairs.join(", "));
                    }
                    if !pass_env.is_empty() {
                        let _ = writeln!(out, "pass_env = {}", list(pass_env));
                    }
                    if let Some(c) = cwd {
                        let _ = writeln!(out, "cwd = {}", path(c));
                    }
                }
                ProviderKind::Http { url, token } => {
                    let _ = writeln!(out, "url = {}", quote(url));
                    match token {
                        Some(TokenSource::Env(var)) => {
                            let _ = writeln!(out, "token_env = {}", quote(var));
                        }
                        Some(TokenSource::File(f)) => {
                            let _ = writeln!(out, "token_file = {}", path(f));
                        }
                        None => {}
                    }
                }
            }
            match p.timeout_ms {
                Some(t) => {
                    let _ = writeln!(out, "timeout_ms = {t}");
                }
                None => {
                    let _ = writeln!(out, "# timeout_ms: {} (the default)", self.timeout_ms.value);
                }
            }
            let _ = writeln!(out, "weight = {}", p.weight);
            let _ = writeln!(out, "enabled = {}", p.enabled);
        }
        out
    }
}
