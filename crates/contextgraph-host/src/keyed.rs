//! A provider under the host's own key rather than the name it announces.
//!
//! A provider cannot know what a host calls it, and two providers may
//! announce the same name (two `cgp serve docs` on different folders). So a
//! host that configures its providers keys each by its configuration name:
//! frames, consent, reports and `verify` requests carry that key as
//! `provider_id`, and the announced name stays in the descriptor's
//! [`info`](ProviderDescriptor::info) (shown beside the key, and still
//! pinned in consent records with the version).
//!
//! [`Keyed`] does this for any [`ProviderClient`]: the descriptor it hands
//! out is the inner one with [`id`](ProviderDescriptor::id) set to the key.
//! The inner client's descriptor can change (a stdio provider respawned);
//! the keyed copy is remade only then.

use std::sync::{Arc, Mutex};

use contextgraph_types::{ContextQuery, VerifyRequest};
use tokio::time::Instant;

use crate::client::{BoxFuture, ProviderClient, RequestError};
use crate::connection::Answer;
use crate::handshake::ProviderDescriptor;

/// `inner`, known to the host as `key`.
pub(crate) struct Keyed {
    key: String,
    inner: Arc<dyn ProviderClient>,
    /// The last descriptor seen from `inner` and its keyed copy.
    last: Mutex<Option<(Arc<ProviderDescriptor>, Arc<ProviderDescriptor>)>>,
}

impl Keyed {
    pub(crate) fn new(key: impl Into<String>, inner: Arc<dyn ProviderClient>) -> Self {
        Keyed {
            key: key.into(),
            inner,
            last: Mutex::new(None),
        }
    }

    fn keyed(&self, inner: Arc<ProviderDescriptor>) -> Arc<ProviderDescriptor> {
        if inner.id == self.key {
            return inner;
        }
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((seen, keyed)) = last.as_ref() {
            if Arc::ptr_eq(seen, &inner) {
                return Arc::clone(keyed);
            }
        }
        let mut copy = (*inner).clone();
        copy.id.clone_from(&self.key);
        let keyed = Arc::new(copy);
        *last = Some((inner, Arc::clone(&keyed)));
        keyed
    }
}

impl ProviderClient for Keyed {
    fn label(&self) -> String {
        self.key.clone()
    }

    fn ready(
        &self,
        deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        Box::pin(async move {
            let inner = self.inner.ready(deadline).await?;
            Ok(self.keyed(inner))
        })
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        self.inner.query(query, deadline)
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        self.inner.verify(request, deadline)
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        self.inner.shutdown()
    }
}
