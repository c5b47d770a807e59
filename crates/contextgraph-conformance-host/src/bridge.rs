//! From the host's fan-out to the composer's input, as an embedder would
//! wire them, and a helper to run one fan-out over in-process providers.

use std::time::Duration;

use contextgraph_compose::ProviderOutcome as Composed;
use contextgraph_host::{FanOutReport, Host, HostOptions, ProviderReport};
use contextgraph_types::{ContextFrame, ContextQuery};

use super::adversary::Scripted;
use super::seen::Seen;

/// The composer's view of one host outcome: the host's one mapping
/// ([`contextgraph_host::ProviderOutcome::to_composition`]). A quarantined answer is handed
/// over with the frames the provider offered (`offered`, which the host
/// itself does not keep) so the composition audit can name each one.
pub(crate) fn to_compose(report: &ProviderReport, offered: Vec<ContextFrame>) -> Composed {
    report.outcome.to_composition(&report.provider_id, offered)
}

/// Add every provider in-process, fan `query` out once, and return the
/// report (or why a provider could not even be added).
pub(crate) async fn fan_out(
    providers: Vec<Scripted>,
    query: &ContextQuery,
    timeout: Duration,
) -> Result<FanOutReport, String> {
    let mut host = Host::new(HostOptions::default());
    for p in providers {
        let name = contextgraph_provider_sdk::Provider::info(&p).name;
        host.add_in_process(p)
            .await
            .map_err(|e| format!("adding {name}: {e}"))?;
    }
    let report = host.query_all(query, timeout).await;
    host.shutdown().await;
    Ok(report)
}

/// The host's outcome for `provider` in `report`, as a [`Seen`].
pub(crate) fn seen(report: &FanOutReport, provider: &str) -> Seen {
    report.provider(provider).map_or_else(
        || Seen::Failed {
            detail: format!("the fan-out report has no line for {provider}"),
        },
        Seen::of_report,
    )
}
