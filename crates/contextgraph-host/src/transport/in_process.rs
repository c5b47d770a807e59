//! In-process providers: a [`Provider`] called on a blocking thread, under the
//! same handshake checks, deadlines and audit as a remote one.
//!
//! Running in the host's process does not make a provider trustworthy: its
//! ack is checked like any other (H2, C5, …) and its answers are audited by
//! the fan-out exactly as a child process's would be.

use std::sync::Arc;

use contextgraph_provider_sdk::Provider;
use contextgraph_types::{ContextQuery, VerifyRequest, PROTOCOL_VERSION};
use tokio::time::{timeout_at, Instant};

use crate::client::{BoxFuture, ProviderClient, RequestError};
use crate::connection::{Answer, ConnectionError};
use crate::handshake::{check_ack, HandshakeError, ProviderDescriptor, TransportKind};
use contextgraph_types::display_text::bounded;

/// A [`Provider`] inside the host process.
pub struct InProcessProvider {
    provider: Arc<dyn Provider>,
    descriptor: Arc<ProviderDescriptor>,
}

impl std::fmt::Debug for InProcessProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessProvider")
            .field("provider", &self.descriptor.id)
            .finish_non_exhaustive()
    }
}

impl InProcessProvider {
    /// Wrap `provider`, running the handshake checks on its `info()` and
    /// `capabilities()` as if they had arrived in a `handshake_ack`.
    pub fn new(provider: impl Provider) -> Result<Self, HandshakeError> {
        Self::from_arc(Arc::new(provider))
    }

    /// [`new`](Self::new) for a shared provider.
    pub fn from_arc(provider: Arc<dyn Provider>) -> Result<Self, HandshakeError> {
        let info = provider.info();
        let label = bounded(&info.name, 80);
        let descriptor = check_ack(
            PROTOCOL_VERSION.to_owned(),
            info,
            provider.capabilities(),
            TransportKind::InProcess,
            if label.is_empty() {
                "in-process"
            } else {
                &label
            },
        )?;
        Ok(InProcessProvider {
            provider,
            descriptor: Arc::new(descriptor),
        })
    }

    /// What the provider declared.
    pub fn descriptor(&self) -> &ProviderDescriptor {
        &self.descriptor
    }

    async fn call<T: Send + 'static>(
        &self,
        deadline: Instant,
        work: impl FnOnce(&dyn Provider) -> T + Send + 'static,
    ) -> Result<T, RequestError> {
        let provider = Arc::clone(&self.provider);
        let started = Instant::now();
        let task = tokio::task::spawn_blocking(move || work(provider.as_ref()));
        match timeout_at(deadline, task).await {
            Err(_) => Err(ConnectionError::Timeout {
                provider: self.descriptor.id.clone(),
                after_ms: started.elapsed().as_millis(),
            }
            .into()),
            Ok(Err(join)) => Err(RequestError::InProcess {
                provider: self.descriptor.id.clone(),
                detail: if join.is_panic() {
                    "the provider panicked".to_owned()
                } else {
                    "the call was cancelled".to_owned()
                },
            }),
            Ok(Ok(value)) => Ok(value),
        }
    }
}

impl ProviderClient for InProcessProvider {
    fn label(&self) -> String {
        self.descriptor.id.clone()
    }

    fn ready(
        &self,
        _deadline: Instant,
    ) -> BoxFuture<'_, Result<Arc<ProviderDescriptor>, RequestError>> {
        let d = Arc::clone(&self.descriptor);
        Box::pin(async move { Ok(d) })
    }

    fn query<'a>(
        &'a self,
        query: &'a ContextQuery,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        let query = query.clone();
        Box::pin(async move {
            let result = self.call(deadline, move |p| p.query(&query)).await?;
            Ok(match result {
                Ok(frames) => Answer::Frames(frames),
                Err(e) => Answer::Error {
                    code: Some(e.code),
                    message: bounded(&e.message, 1024),
                },
            })
        })
    }

    fn verify<'a>(
        &'a self,
        request: &'a VerifyRequest,
        deadline: Instant,
    ) -> BoxFuture<'a, Result<Answer, RequestError>> {
        let request = request.clone();
        Box::pin(async move {
            let response = self.call(deadline, move |p| p.verify(&request)).await?;
            Ok(Answer::Verified(response))
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}
