//! Why the engine could not do what was asked. Messages name the provider
//! or file, the rule, and what to do; none carries a credential.

use contextgraph_types::EgressScope;

/// An engine failure.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The configuration enables no provider.
    #[error("no provider is enabled in the configuration; enable one (enabled = true) or remove the file to use the built-in workspace provider")]
    NoProviders,
    /// The request cannot be answered as given.
    #[error("{0}")]
    BadRequest(String),
    /// A provider named on the command line is not configured.
    #[error("provider {name} is not configured (configured: {configured}); see `cgp config`")]
    UnknownProvider {
        /// The name given.
        name: String,
        /// The names that are configured.
        configured: String,
    },
    /// A provider that had to be reached could not be.
    #[error("provider {name}: {error}")]
    ProviderUnavailable {
        /// The provider.
        name: String,
        /// Why.
        error: String,
    },
    /// The consent operation does not fit what the provider declared.
    #[error("provider {name}: {message}")]
    Consent {
        /// The provider.
        name: String,
        /// What is wrong and what to run instead.
        message: String,
    },
    /// The provider declares off-machine scopes and none was granted (C6).
    #[error("provider {name}: C6: it sends data to {} and each scope needs its own receipt; run: {command}", join(scopes))]
    ScopesRequired {
        /// The provider.
        name: String,
        /// Its off-machine scopes.
        scopes: Vec<EgressScope>,
        /// The command granting all of them.
        command: String,
    },
    /// The consent store could not be used.
    #[error(transparent)]
    ConsentStore(#[from] contextgraph_host::consent::ConsentStoreError),
    /// Composition failed.
    #[error("cannot compose the prompt: {0}")]
    Compose(#[from] contextgraph_compose::ComposeError),
}

fn join(scopes: &[EgressScope]) -> String {
    scopes
        .iter()
        .map(EgressScope::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}
