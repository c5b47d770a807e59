//! TLS from a certificate chain and a private key in PEM files (rustls with
//! the ring provider). Only HTTP/1.1 is offered in ALPN: the server speaks
//! one envelope per request and needs nothing more.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

/// Largest PEM file read (a certificate chain is a few KiB).
const MAX_PEM_BYTES: u64 = 1024 * 1024;

/// Where the certificate chain and key are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// PEM file with the server certificate first, then any intermediates.
    pub cert_chain: PathBuf,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1).
    pub private_key: PathBuf,
}

/// Why TLS could not be set up. Names the file; never quotes key material.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}; check the path and its permissions")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file holds no usable PEM item of the expected kind.
    #[error("{path}: {detail}")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What is wrong and what to do.
        detail: String,
    },
    /// rustls refused the pair (e.g. the key does not match the certificate).
    #[error("the certificate {cert} and key {key} cannot be used together: {detail}")]
    Pair {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// rustls's reason.
        detail: String,
    },
}

fn read_bounded(path: &Path) -> Result<Vec<u8>, TlsError> {
    use std::io::Read as _;
    let read = |source| TlsError::Read {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read)?;
    let mut bytes = Vec::new();
    file.take(MAX_PEM_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read)?;
    if bytes.len() as u64 > MAX_PEM_BYTES {
        return Err(TlsError::Pem {
            path: path.to_owned(),
            detail: format!("larger than {MAX_PEM_BYTES} bytes; is this really a PEM file?"),
        });
    }
    Ok(bytes)
}

/// Load the files into a server configuration.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let cert_pem = read_bounded(&files.cert_chain)?;
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Pem {
            path: files.cert_chain.clone(),
            detail: format!("not a valid PEM certificate chain ({e})"),
        })?;
    if certs.is_empty() {
        return Err(TlsError::Pem {
            path: files.cert_chain.clone(),
            detail: "contains no CERTIFICATE block; pass the certificate chain, not the key".into(),
        });
    }
    let key_pem = read_bounded(&files.private_key)?;
    // The parser's message is not quoted: it could echo key bytes.
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(|_| TlsError::Pem {
        path: files.private_key.clone(),
        detail: "contains no usable PRIVATE KEY block (PKCS#8, PKCS#1 or SEC1 PEM expected)".into(),
    })?;
    let mut config =
        ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .map_err(|e| pair_error(files, &e))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| pair_error(files, &e))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn pair_error(files: &TlsFiles, e: &rustls::Error) -> TlsError {
    TlsError::Pair {
        cert: files.cert_chain.clone(),
        key: files.private_key.clone(),
        detail: e.to_string(),
    }
}
