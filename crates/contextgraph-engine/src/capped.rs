//! A [`ProviderClient`] whose every request is cut off at the provider's
//! own timeout, so one fan-out can give each provider a different bound
//! while the host's single deadline stays the outer limit.

use std::sync::Arc;
use std::time::Duration;

use contextgraph_host::client::BoxFuture;
use contextgraph_host::{Answer, ProviderClient, ProviderDescriptor, RequestError};
use contextgraph_types::{ContextQuery, VerifyRequest};
use tokio::time::Instant;

/// `inner`, with each call's deadline brought forward to `timeout` from
/// the moment it is made.
pub(crate) struct Capped {
    inner: Arc<dyn ProviderClient>,
    timeout: Duration,
}

impl Capped {
    pub(crate) fn new(inner: Arc<dyn ProviderClient>, timeout: Duration) -> Self {
        Capped { inner, timeout }
    }

    fn cap(&self, deadline: Instant) -> Instant {
        deadline.min(Instant::now() + self.timeout)
    }
}

impl ProviderClient for Capped {
    fn label(&self) -> String {
        self.inner.label()
    }

    fn ready(
        &self,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        self.inner.ready(self.cap(deadline))
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        self.inner.query(query, self.cap(deadline))
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        self.inner.verify(request, self.cap(deadline))
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.inner.shutdown()
    }
}
