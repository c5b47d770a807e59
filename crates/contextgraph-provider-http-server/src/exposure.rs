//! Which addresses the server may bind (C7, C8 from the server's side).
//!
//! Loopback is the default and needs nothing. Any other address would put
//! the workspace's content on the network, so it needs both TLS (nothing in
//! plaintext leaves the machine) and a bearer token (no anonymous reader),
//! unless the operator explicitly says a proxy in front provides them.

use std::net::SocketAddr;

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to serve on {addr}, a non-loopback address, without {missing} (C7: plaintext must not leave the machine; C8: no anonymous access): pass --tls-cert/--tls-key and --token-env/--token-file, bind 127.0.0.1, or pass --insecure-public if a proxy in front terminates TLS and authenticates")]
pub struct ExposureError {
    /// The address asked for.
    pub addr: SocketAddr,
    /// What is missing: `TLS`, `a bearer token`, or both.
    pub missing: String,
}

/// Check `addr` against the protections configured.
pub fn check_exposure(
    addr: SocketAddr,
    tls: bool,
    token: bool,
    allow_insecure_public: bool,
) -> Result<(), ExposureError> {
    if addr.ip().is_loopback() || allow_insecure_public || (tls && token) {
        return Ok(());
    }
    let missing = match (tls, token) {
        (false, false) => "TLS and a bearer token",
        (false, true) => "TLS",
        _ => "a bearer token",
    };
    Err(ExposureError {
        addr,
        missing: missing.to_owned(),
    })
}

/// Whether a `Host` header names this machine's loopback (`localhost`,
/// `127.x.y.z`, `[::1]`, with or without a port). A loopback server refuses
/// other names: a web page whose domain was re-pointed at 127.0.0.1 (DNS
/// rebinding) must not be able to read the provider.
pub fn is_loopback_host_header(value: &str) -> bool {
    contextgraph_types::loopback::is_loopback_host_header(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn c7_loopback_needs_no_protection() {
        assert!(check_exposure(addr("127.0.0.1:0"), false, false, false).is_ok());
        assert!(check_exposure(addr("[::1]:8700"), false, false, false).is_ok());
    }

    #[test]
    fn c7_c8_a_public_address_needs_tls_and_a_token() {
        let e = check_exposure(addr("0.0.0.0:8700"), false, false, false).unwrap_err();
        assert_eq!(e.missing, "TLS and a bearer token");
        assert!(e.to_string().contains("--insecure-public"));
        let e = check_exposure(addr("192.0.2.1:8700"), true, false, false).unwrap_err();
        assert_eq!(e.missing, "a bearer token");
        let e = check_exposure(addr("192.0.2.1:8700"), false, true, false).unwrap_err();
        assert_eq!(e.missing, "TLS");
        assert!(check_exposure(addr("0.0.0.0:8700"), true, true, false).is_ok());
    }

    #[test]
    fn c7_the_explicit_flag_allows_a_public_address() {
        assert!(check_exposure(addr("0.0.0.0:8700"), false, false, true).is_ok());
    }

    #[test]
    fn rebinding_host_headers_are_not_loopback() {
        for ok in [
            "127.0.0.1:8700",
            "localhost",
            "LOCALHOST:1",
            "[::1]:80",
            "127.9.9.9",
        ] {
            assert!(is_loopback_host_header(ok), "{ok}");
        }
        for bad in [
            "evil.example:8700",
            "127.0.0.1.evil.example",
            "[::1",
            "10.0.0.1:80",
            "",
        ] {
            assert!(!is_loopback_host_header(bad), "{bad}");
        }
    }
}
