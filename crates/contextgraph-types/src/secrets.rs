//! The secrets deny-list: paths no provider that reads files may index or
//! serve, whatever the ignore files say.
//!
//! A repository's working tree routinely holds credentials that are not
//! committed but are on disk: dotenv files, cloud and CI credentials,
//! Terraform state (which stores resource secrets in clear) and variables,
//! kubeconfigs, private keys and keystores, and whole `secrets/`
//! directories. A context provider that served them would put them in a
//! prompt sent to a model. Every provider that reads files (the workspace
//! provider through `contextgraph-search`, the docs provider) asks
//! [`is_secret_path`] before reading anything.
//!
//! What is denied (names compared case-insensitively):
//! - **dotenv**: `.env`, `.env.*`, `.env-*`, `.env_*`, `*.env`, `.envrc`;
//! - **directories** anywhere in the path: `secrets`, `.secrets`, `secret`,
//!   `.ssh`, `.aws`, `.azure`, `.gnupg`, `.docker`, `.kube`, `.terraform`,
//!   `gcloud` (as in `.config/gcloud`), `.vault`;
//! - **cloud and CI credentials**: `credentials*`, `service-account*`,
//!   `application_default_credentials.json`, `.boto`, `.s3cfg`,
//!   `.vault-token`, `.terraformrc`, `terraform.rc`, `.netrc`, `_netrc`,
//!   `.pgpass`, `.npmrc`, `.pypirc`, `.htpasswd`, `.git-credentials`,
//!   `.dockercfg`, `secrets.*`, `*.secret`, `*.secrets`;
//! - **Terraform**: `*.tfstate`, `*.tfstate.backup`, `*.tfvars`,
//!   `*.tfvars.json`;
//! - **kubeconfig**: `kubeconfig`, `kubeconfig.*`, `*.kubeconfig`;
//! - **keys and keystores**: `id_rsa*`, `id_dsa*`, `id_ecdsa*`,
//!   `id_ed25519*`, `deploy_key*`, and the extensions `pem`, `key`, `p12`,
//!   `pfx`, `jks`, `keystore`, `kdbx`, `ppk`, `p8`, `gpg`, `asc`, `der`,
//!   `ovpn`;
//! - **shell and REPL histories** (commands typed with passwords in them):
//!   `.bash_history`, `.zsh_history`, `.psql_history`, `.mysql_history`,
//!   `.python_history`, `.sqlite_history`, `.node_repl_history`,
//!   `.rediscli_history`, `.irb_history`, and any other `.*_history`;
//! - **tool credentials**: `.my.cnf`, `auth.json` (Composer, `.composer/`),
//!   `.yarnrc.yml`, `pip.conf` (also `.pip/pip.conf`), `.sentryclirc`,
//!   `gradle.properties`, `local.properties`, `htpasswd`, `.token`; the
//!   stems `token`, `tokens`, `api_key`, `api-key`, `apikey`, `secret` with
//!   no extension or a data one (`txt`, `json`, `yaml`, `yml`, `toml`,
//!   `ini`, `cfg`, `conf`; `token.rs` is code); and by directory:
//!   `gh/hosts.yml` (`.config/gh`), `.bundle/config`;
//! - **MCP client configs** (they hold server tokens): `.mcp.json`,
//!   `.cursor/mcp.json`, `claude_desktop_config.json`.
//!
//! cgp's own state (session files, the trust and consent stores) is never
//! evidence either ([`is_cgp_state`], by name and by content).
//!
//! A name can lie, so [`secret_in_content`] also looks inside: a file whose
//! text holds a PEM private-key block or a high-confidence token shape
//! (listed at [`TOKEN_SHAPES`]) is a secret whatever it is called. Both
//! lists live in this one file.

use std::sync::OnceLock;

use memchr::memmem;

/// Directory names whose whole contents are secret.
const SECRET_DIRS: &[&str] = &[
    "secrets",
    ".secrets",
    "secret",
    ".ssh",
    ".aws",
    ".azure",
    ".gnupg",
    ".docker",
    ".kube",
    ".terraform",
    "gcloud",
    ".vault",
];

/// Extensions of key and keystore files.
const KEY_EXTENSIONS: &[&str] = &[
    "pem", "key", "p12", "pfx", "jks", "keystore", "kdbx", "ppk", "p8", "gpg", "asc", "der", "ovpn",
];

/// Exact file names of credential files.
const SECRET_NAMES: &[&str] = &[
    ".envrc",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".htpasswd",
    ".git-credentials",
    ".dockercfg",
    ".boto",
    ".s3cfg",
    ".vault-token",
    ".terraformrc",
    "terraform.rc",
    "application_default_credentials.json",
    "kubeconfig",
    ".my.cnf",
    "auth.json",
    ".yarnrc.yml",
    "pip.conf",
    ".sentryclirc",
    "gradle.properties",
    "local.properties",
    "htpasswd",
    ".token",
    ".mcp.json",
    "claude_desktop_config.json",
];

/// File names that are secret inside one directory: (directory, name).
const SECRET_IN_DIR: &[(&str, &str)] = &[
    ("gh", "hosts.yml"),
    ("gh", "hosts.yaml"),
    (".cursor", "mcp.json"),
    (".bundle", "config"),
];

/// File-name prefixes of secrets (a stem then anything: `token.txt`,
/// `api_key.txt`, `secret.yaml`, `deploy_key.pub`).
const SECRET_PREFIXES: &[&str] = &[
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "deploy_key",
    "credentials",
    "service-account",
    "secrets.",
    "kubeconfig.",
];

/// Stems that are secret with no extension or a data-file extension
/// (`token.txt`, `api_key.json`, `secret.yaml`), but not as source code
/// (`token.rs`, `secret.py` are code about secrets).
const SECRET_DATA_STEMS: &[&str] = &["token", "tokens", "api_key", "api-key", "apikey", "secret"];

/// The extensions [`SECRET_DATA_STEMS`] are secret with.
const DATA_EXTENSIONS: &[&str] = &[
    "", "txt", "json", "yaml", "yml", "toml", "ini", "cfg", "conf",
];

/// Whether `rel_path` (`/`-separated, relative to the served root) is on
/// the deny-list.
pub fn is_secret_path(rel_path: &str) -> bool {
    let lower = rel_path.to_ascii_lowercase();
    let mut segments: Vec<&str> = lower.split('/').filter(|s| !s.is_empty()).collect();
    let Some(name) = segments.pop() else {
        return false;
    };
    if segments.iter().any(|d| SECRET_DIRS.contains(d)) || is_cgp_state(name, "") {
        return true;
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    let parent = segments.last().copied().unwrap_or("");
    name == ".env"
        || (name.starts_with('.') && name.ends_with("_history"))
        || SECRET_IN_DIR.contains(&(parent, name))
        || SECRET_PREFIXES.iter().any(|p| name.starts_with(p))
        || {
            let (stem, data_ext) = name.rsplit_once('.').unwrap_or((name, ""));
            SECRET_DATA_STEMS.contains(&stem) && DATA_EXTENSIONS.contains(&data_ext)
        }
        || name.starts_with(".env.")
        || name.starts_with(".env-")
        || name.starts_with(".env_")
        || name.ends_with(".env")
        || SECRET_NAMES.contains(&name)
        || KEY_EXTENSIONS.contains(&ext)
        || name.ends_with(".secret")
        || name.ends_with(".secrets")
        || name.ends_with(".tfstate")
        || name.ends_with(".tfstate.backup")
        || name.ends_with(".tfvars")
        || name.ends_with(".tfvars.json")
        || name.ends_with(".kubeconfig")
}

/// File names of cgp's own state, never evidence (N9): the session file
/// the README's example names, the trust and consent stores, the session
/// key.
const CGP_STATE_NAMES: &[&str] = &[
    ".cgp-session.json",
    "trusted-configs.ndjson",
    "trusted-configs.lock",
    "session-key",
    "consent.ndjson",
];

/// How cgp's session files begin (`cgp context --session`, both forms).
const CGP_STATE_PREFIXES: &[&str] = &[
    "{\"format\":\"cgp-session-file/",
    "{\"format\":\"cgp-session/",
];

/// Whether the file at `rel_path` holding `text` is cgp's own state (a
/// session file under any name, the trust or consent store): never indexed
/// nor served as evidence, whatever the ignore files say (N9). `text` may
/// be empty when only the name is known.
pub fn is_cgp_state(rel_path: &str, text: &str) -> bool {
    let name = rel_path.rsplit('/').next().unwrap_or(rel_path);
    CGP_STATE_NAMES.contains(&name)
        || CGP_STATE_PREFIXES
            .iter()
            .any(|p| text.trim_start().starts_with(p))
}

/// A token shape: a literal prefix, then at least `min` (at most `max`)
/// characters of `charset`, not preceded by a letter or digit (so the
/// prefix starts a word).
#[derive(Debug, Clone, Copy)]
pub struct TokenShape {
    /// What the token is.
    pub name: &'static str,
    /// Its fixed prefix.
    pub prefix: &'static str,
    /// Fewest body characters after the prefix.
    pub min: usize,
    /// Characters the body is made of.
    pub charset: Charset,
}

/// The body alphabets of [`TokenShape`]s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charset {
    /// `A-Z 0-9`.
    UpperAlnum,
    /// `A-Z a-z 0-9`.
    Alnum,
    /// `A-Z a-z 0-9 _ -`.
    UrlSafe,
}

impl Charset {
    fn admits(self, b: u8) -> bool {
        match self {
            Charset::UpperAlnum => b.is_ascii_uppercase() || b.is_ascii_digit(),
            Charset::Alnum => b.is_ascii_alphanumeric(),
            Charset::UrlSafe => b.is_ascii_alphanumeric() || b == b'_' || b == b'-',
        }
    }
}

/// High-confidence credential shapes: vendor prefixes followed by the
/// length and alphabet the vendor documents (GitHub, GitLab, AWS, Slack,
/// Stripe, Google, OpenAI, Anthropic, npm, PyPI). A shape that random
/// code matches by accident is not on this list.
pub const TOKEN_SHAPES: &[TokenShape] = &[
    TokenShape {
        name: "GitHub token",
        prefix: "ghp_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "GitHub token",
        prefix: "gho_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "GitHub token",
        prefix: "ghu_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "GitHub token",
        prefix: "ghs_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "GitHub token",
        prefix: "ghr_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "GitHub token",
        prefix: "github_pat_",
        min: 60,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "GitLab token",
        prefix: "glpat-",
        min: 20,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "AWS access key id",
        prefix: "AKIA",
        min: 16,
        charset: Charset::UpperAlnum,
    },
    TokenShape {
        name: "AWS access key id",
        prefix: "ASIA",
        min: 16,
        charset: Charset::UpperAlnum,
    },
    TokenShape {
        name: "Slack token",
        prefix: "xoxb-",
        min: 24,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "Slack token",
        prefix: "xoxp-",
        min: 24,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "Stripe key",
        prefix: "sk_live_",
        min: 24,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "Stripe key",
        prefix: "rk_live_",
        min: 24,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "Google API key",
        prefix: "AIza",
        min: 35,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "OpenAI key",
        prefix: "sk-proj-",
        min: 40,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "Anthropic key",
        prefix: "sk-ant-api",
        min: 80,
        charset: Charset::UrlSafe,
    },
    TokenShape {
        name: "npm token",
        prefix: "npm_",
        min: 36,
        charset: Charset::Alnum,
    },
    TokenShape {
        name: "PyPI token",
        prefix: "pypi-AgEIcHlwaS5vcmc",
        min: 50,
        charset: Charset::UrlSafe,
    },
];

/// What secret `text` holds, if any: a PEM private-key block (a
/// `-----BEGIN … PRIVATE KEY…-----` line followed by a base64 line) or a
/// [`TOKEN_SHAPES`] match. Linear in the text; for files whose names are
/// innocent (`notes.md` holding an SSH key).
pub fn secret_in_content(text: &str) -> Option<&'static str> {
    if has_private_key_block(text) {
        return Some("PEM private key");
    }
    let bytes = text.as_bytes();
    for (shape, finder) in TOKEN_SHAPES.iter().zip(prefix_finders()) {
        if finder.find_iter(bytes).any(|at| token_at(bytes, at, shape)) {
            return Some(shape.name);
        }
    }
    None
}

/// Whether the `shape` prefix found at `at` starts a token of that shape:
/// it starts a word and enough body characters follow.
fn token_at(bytes: &[u8], at: usize, shape: &TokenShape) -> bool {
    if at > 0 && bytes[at - 1].is_ascii_alphanumeric() {
        return false;
    }
    let body = bytes[at + shape.prefix.len()..]
        .iter()
        .take_while(|b| shape.charset.admits(**b))
        .count();
    body >= shape.min
}

/// One searcher per [`TOKEN_SHAPES`] prefix, built once.
///
/// Why: every file of a cold build is scanned for each prefix; `str`'s
/// `match_indices` (a two-way search per prefix) was 4% of a cold build's
/// CPU on a 6,000-file corpus, where `memchr`'s searchers look for a rare
/// byte of the prefix with vector instructions first. Same matches: both
/// report every non-overlapping occurrence from the left.
fn prefix_finders() -> &'static [memmem::Finder<'static>] {
    static FINDERS: OnceLock<Vec<memmem::Finder<'static>>> = OnceLock::new();
    FINDERS.get_or_init(|| {
        TOKEN_SHAPES
            .iter()
            .map(|s| memmem::Finder::new(s.prefix.as_bytes()))
            .collect()
    })
}

fn has_private_key_block(text: &str) -> bool {
    const BEGIN: &str = "-----BEGIN ";
    for at in memmem::find_iter(text.as_bytes(), BEGIN.as_bytes()) {
        let rest = &text[at + BEGIN.len()..];
        let Some(end) = rest.find("-----") else {
            continue;
        };
        let label = &rest[..end];
        if !label.contains("PRIVATE KEY") || label.len() > 40 {
            continue;
        }
        // The next line must look like key material, so code and docs
        // that merely name the header are not secrets.
        let after = &rest[end + 5..];
        let mut lines = after.lines().skip(1).filter(|l| !l.contains(':'));
        if let Some(line) = lines.next() {
            let line = line.trim();
            if line.len() >= 40
                && line
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
            {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    /// The scan as it was before the `memchr` searchers (`str` matching):
    /// the reference the faster one must agree with.
    fn secret_in_content_by_str(text: &str) -> Option<&'static str> {
        if has_private_key_block(text) {
            return Some("PEM private key");
        }
        TOKEN_SHAPES
            .iter()
            .find(|shape| {
                text.match_indices(shape.prefix)
                    .any(|(at, _)| token_at(text.as_bytes(), at, shape))
            })
            .map(|shape| shape.name)
    }

    mod same_as_str_matching {
        use super::*;
        use proptest::prelude::*;

        /// Pieces that make near-misses likely: every prefix, its body
        /// alphabet, separators, a PEM header.
        fn piece() -> impl Strategy<Value = String> {
            let prefixes: Vec<String> = TOKEN_SHAPES.iter().map(|s| s.prefix.to_owned()).collect();
            prop_oneof![
                proptest::sample::select(prefixes),
                "[A-Za-z0-9_-]{0,48}",
                Just("-----BEGIN RSA PRIVATE KEY-----\n".to_owned()),
                Just("MIIEowIBAAKCAQEA1234567890abcdefghijklmnopqrstuvwxyzAB==\n".to_owned()),
                "[ \n:=é\"']{0,3}",
            ]
        }

        proptest! {
            #[test]
            fn the_scan_finds_what_str_matching_finds(pieces in proptest::collection::vec(piece(), 0..24)) {
                let text: String = pieces.concat();
                prop_assert_eq!(secret_in_content(&text), secret_in_content_by_str(&text));
            }
        }
    }

    use super::*;

    #[test]
    fn the_common_secret_stores_are_denied() {
        for p in [
            ".env",
            ".env.local",
            ".env-production",
            ".env_staging",
            "config/prod.env",
            ".envrc",
            "deploy/.envrc",
            "terraform.tfstate",
            "infra/terraform.tfstate.backup",
            "infra/prod.tfvars",
            "infra/prod.auto.tfvars.json",
            "infra/.terraform/providers/x.json",
            "secrets/db.yaml",
            "config/secrets/api.md",
            ".kube/config",
            "kubeconfig",
            "clusters/prod.kubeconfig",
            ".aws/credentials",
            ".config/gcloud/application_default_credentials.json",
            "credentials.json",
            "service-account-prod.json",
            "keys/server.KEY",
            "certs/site.pem",
            "release.keystore",
            "id_ed25519",
            ".npmrc",
            ".vault-token",
            ".docker/config.json",
            // N7: every file the second trust-boundary round found served.
            ".bash_history",
            ".zsh_history",
            ".psql_history",
            ".mysql_history",
            ".python_history",
            "home/.node_repl_history",
            ".my.cnf",
            ".config/gh/hosts.yml",
            ".mcp.json",
            ".cursor/mcp.json",
            "claude_desktop_config.json",
            "auth.json",
            ".composer/auth.json",
            ".yarnrc.yml",
            "pip.conf",
            ".pip/pip.conf",
            ".bundle/config",
            ".sentryclirc",
            "gradle.properties",
            "android/local.properties",
            ".token",
            "token.txt",
            "api_key.txt",
            "deploy_key",
            "deploy_key.pub",
            "secret.txt",
            "secret.yaml",
            "htpasswd",
        ] {
            assert!(is_secret_path(p), "{p} should be denied");
        }
    }

    #[test]
    fn ordinary_files_that_merely_look_close_are_not() {
        for p in [
            "src/environment.rs",
            "docs/envelope.md",
            "src/secret_sharing.rs",
            "docs/secrets-management.md",
            "src/keyboard.rs",
            "terraform/main.tf",
            "README.md",
            "src/credentials_test_helpers_are_not_here/x.rs",
            "src/history.rs",
            "docs/config",
            "src/token.rs",
            "src/tokenizer.rs",
            "src/secret.py",
            "src/api_key_check.rs",
            "src/mcp.rs",
            ".github/hosts.yml",
        ] {
            assert!(!is_secret_path(p), "{p} should be served");
        }
    }

    /// Built at run time so this file itself holds no key block.
    fn pem(label: &str) -> String {
        let dashes = "-".repeat(5);
        format!(
            "notes\n{dashes}BEGIN {label}{dashes}\n{}\n{}\n{dashes}END {label}{dashes}\n",
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAAB"
        )
    }

    #[test]
    fn private_key_blocks_are_secret_under_any_name() {
        for label in [
            "PRIVATE KEY",
            "RSA PRIVATE KEY",
            "EC PRIVATE KEY",
            "OPENSSH PRIVATE KEY",
            "ENCRYPTED PRIVATE KEY",
        ] {
            assert_eq!(
                secret_in_content(&pem(label)),
                Some("PEM private key"),
                "{label}"
            );
        }
        // A public key, or code naming the header, is not.
        assert_eq!(secret_in_content(&pem("PUBLIC KEY")), None);
        let code = format!(
            "if line.starts_with(\"{}BEGIN PRIVATE KEY\") {{\n",
            "-".repeat(5)
        );
        assert_eq!(secret_in_content(&code), None);
    }

    #[test]
    fn each_token_shape_is_found_and_near_misses_are_not() {
        for shape in TOKEN_SHAPES {
            let body: String = match shape.charset {
                Charset::UpperAlnum => "K7".repeat(shape.min),
                _ => "aZ9".repeat(shape.min),
            };
            let text = format!("key = \"{}{}\"\n", shape.prefix, &body[..shape.min]);
            assert_eq!(
                secret_in_content(&text),
                Some(shape.name),
                "{}",
                shape.prefix
            );
            let short = format!("key = {}{}\n", shape.prefix, &body[..shape.min - 1]);
            assert_eq!(
                secret_in_content(&short),
                None,
                "{} too short",
                shape.prefix
            );
            let glued = format!("x{}{}\n", shape.prefix, &body[..shape.min]);
            assert_eq!(
                secret_in_content(&glued),
                None,
                "{} inside a word",
                shape.prefix
            );
        }
        assert_eq!(secret_in_content("let ghp_ = 1; // AKIA prefix"), None);
    }

    /// N9: cgp's session files are never evidence, by name or by content.
    #[test]
    fn cgp_state_is_recognised_by_name_and_content() {
        assert!(is_secret_path(".cgp-session.json"));
        assert!(is_secret_path("sub/.cgp-session.json"));
        assert!(is_cgp_state(
            "turns.json",
            "{\"format\":\"cgp-session-file/1\",\"workspace\":\"/r\"}"
        ));
        assert!(is_cgp_state(
            "turns.json",
            "{\"format\":\"cgp-session/1\",\"turn\":1}"
        ));
        assert!(!is_cgp_state("package.json", "{\"format\":\"other\"}"));
    }
}
