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
//!   `id_ed25519*`, and the extensions `pem`, `key`, `p12`, `pfx`, `jks`,
//!   `keystore`, `kdbx`, `ppk`, `p8`, `gpg`, `asc`, `der`, `ovpn`.

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
];

/// Whether `rel_path` (`/`-separated, relative to the served root) is on
/// the deny-list.
pub fn is_secret_path(rel_path: &str) -> bool {
    let lower = rel_path.to_ascii_lowercase();
    let mut segments: Vec<&str> = lower.split('/').filter(|s| !s.is_empty()).collect();
    let Some(name) = segments.pop() else {
        return false;
    };
    if segments.iter().any(|d| SECRET_DIRS.contains(d)) {
        return true;
    }
    let ext = name.rsplit_once('.').map_or("", |(_, e)| e);
    name == ".env"
        || name.starts_with(".env.")
        || name.starts_with(".env-")
        || name.starts_with(".env_")
        || name.ends_with(".env")
        || SECRET_NAMES.contains(&name)
        || KEY_EXTENSIONS.contains(&ext)
        || ["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519"]
            .iter()
            .any(|k| name.starts_with(k))
        || name.starts_with("credentials")
        || name.starts_with("service-account")
        || name.starts_with("secrets.")
        || name.ends_with(".secret")
        || name.ends_with(".secrets")
        || name.ends_with(".tfstate")
        || name.ends_with(".tfstate.backup")
        || name.ends_with(".tfvars")
        || name.ends_with(".tfvars.json")
        || name.starts_with("kubeconfig.")
        || name.ends_with(".kubeconfig")
}

#[cfg(test)]
mod tests {
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
        ] {
            assert!(!is_secret_path(p), "{p} should be served");
        }
    }
}
