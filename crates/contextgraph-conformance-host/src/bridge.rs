//! From the host's fan-out to the composer's input, as an embedder would
//! wire them, and a helper to run one fan-out over in-process providers.

use std::time::Duration;

use contextgraph_compose::{ProviderOutcome as Composed, ProviderStatus};
use contextgraph_host::{FanOutReport, Host, HostOptions, ProviderOutcome, ProviderReport};
use contextgraph_types::{ContextFrame, ContextQuery};

use super::adversary::Scripted;
use super::seen::Seen;

/// The composer's view of one host outcome. A quarantined answer is handed
/// over with the frames the provider offered (`offered`, which the host
/// itself does not keep) so the composition audit can name each one.
pub(crate) fn to_compose(report: &ProviderReport, offered: Vec<ContextFrame>) -> Composed {
    let id = report.provider_id.clone();
    match &report.outcome {
        ProviderOutcome::Accepted { frames, .. } => Composed::accepted(id, frames.clone()),
        ProviderOutcome::Quarantined { violations, .. } => {
            Composed::quarantined(id, offered, violations.clone())
        }
        ProviderOutcome::ConsentRequired { .. } => {
            Composed::without_frames(id, ProviderStatus::ConsentMissing { scopes: vec![] })
        }
        ProviderOutcome::ScopeReceiptsMissing { scopes, .. } => Composed::without_frames(
            id,
            ProviderStatus::ConsentMissing {
                scopes: scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            },
        ),
        ProviderOutcome::TimedOut { after_ms } => Composed::without_frames(
            id,
            ProviderStatus::TimedOut {
                after_ms: u64::try_from(*after_ms).unwrap_or(u64::MAX),
            },
        ),
        ProviderOutcome::ProviderError {
            effective, message, ..
        } => Composed::without_frames(
            id,
            ProviderStatus::Error {
                code: effective.clone(),
                message: message.clone(),
            },
        ),
        other => Composed::without_frames(
            id,
            ProviderStatus::Crashed {
                detail: Seen::of_outcome(other).to_string(),
            },
        ),
    }
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
        let name = contextgraph_provider::Provider::info(&p).name;
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
