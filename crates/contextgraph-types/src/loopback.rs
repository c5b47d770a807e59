//! Which host names stay on this machine: the one rule behind C7 (a bearer
//! token over plain `http` only to a loopback provider) and the HTTP server
//! adapter's DNS-rebinding guard. The host's client, the conformance suite's
//! HTTP target and the server adapter all ask this module, so they cannot
//! disagree on what "loopback" means.

use std::net::IpAddr;

/// Whether `host`, as it appears in a URL (`localhost`, `127.0.0.1`,
/// `[::1]`), names this machine's loopback. Any other name is not loopback,
/// even one that resolves to 127.0.0.1 today: DNS can change its mind.
pub fn is_loopback_host(host: &str) -> bool {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether an HTTP `Host` header (`localhost:8700`, `127.0.0.1`,
/// `[::1]:8700`) names this machine's loopback: the port is dropped, then
/// [`is_loopback_host`] decides. A bracket that is never closed is not a
/// host at all.
pub fn is_loopback_host_header(value: &str) -> bool {
    let host = if let Some(rest) = value.strip_prefix('[') {
        match rest.split_once(']') {
            Some((inside, _)) => inside,
            None => return false,
        }
    } else {
        value.rsplit_once(':').map_or(value, |(h, _)| h)
    };
    is_loopback_host(host)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_hosts() {
        for (host, loopback) in [
            ("localhost", true),
            ("LocalHost", true),
            ("127.0.0.1", true),
            ("127.8.9.10", true),
            ("[::1]", true),
            ("::1", true),
            ("10.0.0.1", false),
            ("localhost.example.com", false),
            ("[::1", false),
            ("", false),
        ] {
            assert_eq!(is_loopback_host(host), loopback, "{host}");
        }
    }

    #[test]
    fn host_headers() {
        for (header, loopback) in [
            ("localhost:8700", true),
            ("127.0.0.1", true),
            ("[::1]:8700", true),
            ("[::1]", true),
            ("evil.example:8700", false),
            ("[::1:8700", false),
            ("127.0.0.1.nip.io:80", false),
        ] {
            assert_eq!(is_loopback_host_header(header), loopback, "{header}");
        }
    }
}
