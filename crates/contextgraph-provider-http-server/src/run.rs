//! [`serve_until_signal`]: the whole life of a server for a binary that has
//! no async runtime of its own (`cgp serve … --http`).

use std::net::SocketAddr;

use contextgraph_provider_sdk::Provider;

use crate::options::HttpServeOptions;
use crate::server::{HttpServeError, HttpServer, ServeSummary};

/// Build a runtime, bind `addr`, call `on_listening` with the URL hosts
/// should POST to (the real port when 0 was asked for), and serve until
/// SIGINT/SIGTERM ([`shutdown_signal`](crate::shutdown_signal)); in-flight
/// requests get the shutdown grace.
pub fn serve_until_signal<P: Provider>(
    provider: P,
    options: HttpServeOptions,
    addr: SocketAddr,
    on_listening: impl FnOnce(&str),
) -> Result<ServeSummary, HttpServeError> {
    let grace = options.shutdown_grace;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("cgp-http")
        .build()
        .map_err(|source| HttpServeError::Runtime { source })?;
    let result = runtime.block_on(async {
        let bound = HttpServer::new(provider, options)?.bind(addr).await?;
        on_listening(&bound.url());
        Ok(bound.serve(crate::shutdown_signal()).await)
    });
    // Provider calls abandoned after the grace do not hold the process.
    runtime.shutdown_timeout(grace);
    result
}
