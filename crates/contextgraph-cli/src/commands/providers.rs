//! `cgp providers`: handshake every configured provider and show what each
//! declares, whether it may be sent queries, and whether it is healthy.

use std::io::Write;

use clap::Args;
use contextgraph_engine::{ConsentState, Engine, EngineOptions, ProviderStatus};

use super::config::{runtime, ConfigSelection};
use super::CommandError;
use crate::output;
use crate::terminal::for_terminal;

/// Arguments of `cgp providers`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp providers                    # a table: name, version, transport, data flow, capabilities, consent, health
  cgp providers --json | jq '.providers[] | select(.consent.state == \"required\")'
  cgp providers --config ./ci/cgp.toml

Only the handshake is exchanged: no query is sent to any provider.

Exit codes:
  0  every provider is up
  1  a provider could not be started or reached (its error is in the table), or the configuration is wrong
  2  usage error")]
pub struct ProvidersArgs {
    /// Where to look for the configuration.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Run `cgp providers`.
pub fn run(args: ProvidersArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let options = EngineOptions {
        grant_command_args: args.selection.repeat_args(),
        ..EngineOptions::default()
    };
    let statuses = runtime()?.block_on(async {
        let engine = Engine::start_with(&config, &args.selection.dir, options).await?;
        let statuses = engine.providers().await;
        engine.shutdown().await;
        Ok::<_, CommandError>(statuses)
    })?;
    if args.json {
        output::print_json("providers", &statuses)?;
    } else {
        let mut stdout = std::io::stdout().lock();
        let written = stdout.write_all(table(&statuses).as_bytes());
        output::finish_stdout(written.and_then(|()| stdout.flush()))?;
    }
    let down: Vec<&str> = statuses
        .iter()
        .filter(|s| s.health.is_err())
        .map(|s| s.name.as_str())
        .collect();
    if down.is_empty() {
        Ok(())
    } else {
        Err(format!("not healthy: {} (see the health column)", down.join(", ")).into())
    }
}

fn data_flow(s: &ProviderStatus) -> String {
    let Some(flow) = &s.data_flow else {
        return "?".to_owned();
    };
    let mut parts = Vec::new();
    if flow.reads {
        parts.push("reads".to_owned());
    }
    if flow.writes {
        parts.push("writes".to_owned());
    }
    if flow.egress {
        parts.push("egress".to_owned());
    }
    if parts.is_empty() {
        parts.push("none".to_owned());
    }
    let mut text = parts.join("+");
    if !flow.egress_scopes.is_empty() {
        let scopes: Vec<&str> = flow.egress_scopes.iter().map(|s| s.as_str()).collect();
        text.push_str(&format!(" [{}]", scopes.join(",")));
    }
    text
}

fn capabilities(s: &ProviderStatus) -> String {
    let Some(c) = &s.capabilities else {
        return "?".to_owned();
    };
    let kinds: Vec<&str> = c.query.kinds.iter().map(|k| k.as_str()).collect();
    let mut text = if kinds.is_empty() {
        "any kind".to_owned()
    } else {
        kinds.join(",")
    };
    for (on, name) in [
        (c.correlation, "correlation"),
        (c.verify, "verify"),
        (c.graph, "graph"),
        (c.resolve, "resolve"),
        (c.embeddings_fingerprint.is_some(), "embeddings"),
    ] {
        if on {
            text.push_str(&format!(" +{name}"));
        }
    }
    text
}

fn consent(s: &ProviderStatus) -> String {
    match &s.consent {
        ConsentState::NotRequired => "not needed".to_owned(),
        ConsentState::Granted { expires_at, .. } => match expires_at {
            Some(e) => format!("granted until {e}"),
            None => "granted".to_owned(),
        },
        ConsentState::Required { command, .. } => format!("REQUIRED: run {command}"),
        ConsentState::Unknown => "?".to_owned(),
    }
}

fn health(s: &ProviderStatus) -> String {
    match &s.health {
        Ok(d) => format!("ok ({:.1} ms)", d.as_secs_f64() * 1000.0),
        Err(e) => format!("DOWN: {e}"),
    }
}

/// Most providers shown one block each when the full table is too wide:
/// past this (a fleet of shards), blocks of eight lines each are a
/// scroll of hundreds of lines, so [`compact`] keeps one line per provider.
const BLOCKS_UP_TO: usize = 8;

/// Widest NAME cell of the compact table: a longer configured name is cut
/// there (the notes below the table name it whole).
const COMPACT_NAME_WIDTH: usize = 32;

/// The table: one row per provider, columns padded to their widest cell
/// except the last (health), which carries the error. When that is wider
/// than the terminal (see [`crate::width`]), one block per provider
/// instead, every value wrapped to the width and none cut; for more than
/// [`BLOCKS_UP_TO`] providers, the [`compact`] table instead.
fn table(statuses: &[ProviderStatus]) -> String {
    table_for(statuses, crate::width::stdout_columns())
}

fn table_for(statuses: &[ProviderStatus], columns: usize) -> String {
    let header = [
        "NAME",
        "VERSION",
        "TRANSPORT",
        "DATA FLOW",
        "CAPABILITIES",
        "CONSENT",
        "HEALTH",
    ];
    let rows: Vec<[String; 7]> = statuses
        .iter()
        .map(|s| {
            // Every cell may carry what a provider declared or a peer's
            // error: shown, never obeyed by the terminal.
            [
                match &s.announced_name {
                    Some(a) if *a != s.name => format!("{} ({a})", s.name),
                    _ => s.name.clone(),
                },
                s.version.clone().unwrap_or_else(|| "?".to_owned()),
                s.transport.clone(),
                data_flow(s),
                capabilities(s),
                consent(s),
                health(s),
            ]
            .map(|cell| for_terminal(&cell))
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                out.push_str(cell);
            } else {
                let pad = widths[i] - cell.chars().count();
                out.push_str(cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(&header.map(str::to_owned));
    for row in &rows {
        out.push_str(&line(row));
    }
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    if widest < columns {
        return out;
    }
    if rows.len() > BLOCKS_UP_TO {
        return compact(statuses, &rows, columns);
    }
    blocks(&header, &rows, columns)
}

/// Many providers on a narrow terminal: one line per provider (NAME,
/// HEALTH, CONSENT, TRANSPORT), each cut to the width, so fifty shards are
/// fifty lines and the ones that need attention stand out. Nothing a
/// person must act on is cut: every error and every consent command is a
/// numbered note below the table, wrapped whole; what every provider
/// declares alike (version, data flow, capabilities) is said once.
fn compact(statuses: &[ProviderStatus], rows: &[[String; 7]], columns: usize) -> String {
    let mut notes: Vec<String> = Vec::new();
    let mut note = |name: &str, text: &str| {
        notes.push(format!("[{}] {name}: {text}", notes.len() + 1));
        format!("[{}]", notes.len())
    };
    let cells: Vec<[String; 4]> = statuses
        .iter()
        .zip(rows)
        .map(|(s, row)| {
            let name = for_terminal(&s.name);
            let health = match &s.health {
                Ok(_) => row[6].clone(),
                Err(_) => format!("DOWN {}", note(&name, &row[6])),
            };
            let consent = match &s.consent {
                ConsentState::Required { .. } => format!("REQUIRED {}", note(&name, &row[5])),
                ConsentState::Granted {
                    expires_at: Some(e),
                    ..
                } => format!(
                    "granted until {}",
                    for_terminal(e.get(..10).unwrap_or(e.as_str()))
                ),
                _ => row[5].clone(),
            };
            let shown = if name.chars().count() > COMPACT_NAME_WIDTH {
                let mut cut: String = name.chars().take(COMPACT_NAME_WIDTH - 1).collect();
                cut.push('…');
                cut
            } else {
                name
            };
            [shown, health, consent, row[2].clone()]
        })
        .collect();
    let header = ["NAME", "HEALTH", "CONSENT", "TRANSPORT"].map(str::to_owned);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; 4]| {
        let mut out = String::new();
        for (i, cell) in cells.iter().take(3).enumerate() {
            out.push_str(cell);
            out.push_str(&" ".repeat(widths[i] - cell.chars().count() + 2));
        }
        // The transport keeps its end when cut: of `http (https://…:port/path)`
        // the host, port and path tell shards apart, not the scheme.
        let room = columns
            .saturating_sub(1)
            .saturating_sub(out.chars().count());
        if cells[3].chars().count() <= room || room < 12 {
            out.push_str(&cells[3]);
        } else {
            out.push_str(&crate::width::keep_end(&cells[3], room));
        }
        crate::width::fit(&out, columns)
    };
    let up = statuses.iter().filter(|s| s.health.is_ok()).count();
    let mut out = String::new();
    let summary = format!(
        "{} providers: {up} up, {} down; {} need consent",
        statuses.len(),
        statuses.len() - up,
        statuses
            .iter()
            .filter(|s| matches!(s.consent, ConsentState::Required { .. }))
            .count()
    );
    for piece in crate::width::wrap(&summary, columns.saturating_sub(1).max(10)) {
        out.push_str(&piece);
        out.push('\n');
    }
    out.push_str(&line(&header));
    out.push('\n');
    for row in &cells {
        out.push_str(&line(row));
        out.push('\n');
    }
    // Said once when every provider that handshook declared the same.
    let alike = |i: usize| {
        let mut known = statuses
            .iter()
            .zip(rows)
            .filter(|(s, _)| s.version.is_some());
        let first = known.next().map(|(_, r)| r[i].clone())?;
        known.all(|(_, r)| r[i] == first).then_some(first)
    };
    let declared = match (alike(1), alike(3), alike(4)) {
        (Some(v), Some(d), Some(c)) => {
            format!("every provider up declares: version {v}; data flow {d}; capabilities {c}")
        }
        _ => "version, data flow and capabilities differ: see `cgp providers --json`, or widen the terminal".to_owned(),
    };
    let room = columns.saturating_sub(1).max(10);
    for text in notes.iter().chain(std::iter::once(&declared)) {
        for (i, piece) in crate::width::wrap(text, room.saturating_sub(4).max(10))
            .into_iter()
            .enumerate()
        {
            out.push_str(if i == 0 { "" } else { "    " });
            out.push_str(&piece);
            out.push('\n');
        }
    }
    out
}

/// One block per provider: its name, then `  FIELD  value` lines, values
/// wrapped under themselves to fit `columns`.
fn blocks(header: &[&str; 7], rows: &[[String; 7]], columns: usize) -> String {
    let label_width = header[1..].iter().map(|h| h.len()).max().unwrap_or(0);
    let indent = 2 + label_width + 2;
    let room = columns.saturating_sub(1).saturating_sub(indent).max(10);
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        if n > 0 {
            out.push('\n');
        }
        for piece in crate::width::wrap(&row[0], columns.saturating_sub(1).max(10)) {
            out.push_str(&piece);
            out.push('\n');
        }
        for (field, value) in header[1..].iter().zip(&row[1..]) {
            for (i, piece) in crate::width::wrap(value, room).into_iter().enumerate() {
                let label = if i == 0 {
                    field.to_ascii_lowercase()
                } else {
                    String::new()
                };
                out.push_str(&format!("  {label:<label_width$}  {piece}\n"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_types::{Capabilities, DataFlow};
    use std::time::Duration;

    /// Fifty shards as `cgp providers` sees them: two down, one needing
    /// consent, the rest up and granted.
    fn fleet() -> Vec<ProviderStatus> {
        (0..50)
            .map(|i| {
                let name = format!("shard-{i:02}");
                let url = format!("http://127.0.0.1:{}/cgp", 40_000 + i);
                let down = i == 7 || i == 31;
                ProviderStatus {
                    provider_id: (!down).then(|| name.clone()),
                    announced_name: (!down).then(|| "shard".to_owned()),
                    version: (!down).then(|| "1.0.0".to_owned()),
                    transport: format!("http ({url})"),
                    data_flow: (!down).then(|| DataFlow {
                        reads: true,
                        egress: true,
                        egress_scopes: vec![contextgraph_types::EgressScope::from_wire("org-tenant")],
                        ..DataFlow::default()
                    }),
                    capabilities: (!down).then(Capabilities::default),
                    consent: match i {
                        7 | 31 => ConsentState::Unknown,
                        12 => ConsentState::Required {
                            reason: "no live consent receipt for org-tenant".to_owned(),
                            command: format!("cgp consent grant {name} --scope org-tenant"),
                        },
                        _ => ConsentState::Granted {
                            expires_at: Some("2027-01-05T04:00:00Z".to_owned()),
                            scopes: vec!["org-tenant".to_owned()],
                        },
                    },
                    health: if down {
                        Err(format!(
                            "provider {url}: request failed: error sending request: tcp connect error: \
                             Connection refused (os error 111); it is left out of every answer until it is reachable"
                        ))
                    } else {
                        Ok(Duration::from_micros(1200))
                    },
                    weight: 1,
                    timeout_ms: 2000,
                    name,
                }
            })
            .collect()
    }

    #[test]
    fn fifty_providers_on_80_columns_are_one_line_each_and_nothing_to_act_on_is_cut() {
        let fleet = fleet();
        let text = table_for(&fleet, 80);
        for line in text.lines() {
            assert!(
                line.chars().count() < 80,
                "{} columns: {line:?}",
                line.chars().count()
            );
        }
        for s in &fleet {
            let rows = text
                .lines()
                .filter(|l| l.starts_with(&format!("{} ", s.name)))
                .count();
            assert_eq!(rows, 1, "one row for {}:\n{text}", s.name);
        }
        // Header, summary, 50 rows, a few notes: not 50 blocks of 8 lines.
        assert!(text.lines().count() < 70, "{text}");
        assert!(
            text.starts_with("50 providers: 48 up, 2 down; 1 need consent"),
            "{text}"
        );
        let row = |name: &str| {
            text.lines()
                .find(|l| l.starts_with(name))
                .unwrap()
                .to_owned()
        };
        assert!(row("shard-07 ").contains("DOWN [1]"), "{text}");
        assert!(row("shard-12 ").contains("REQUIRED [2]"), "{text}");
        assert!(row("shard-31 ").contains("DOWN [3]"), "{text}");
        assert!(
            row("shard-00 ").contains("granted until 2027-01-05"),
            "{text}"
        );
        // A transport cut to fit keeps its end: the port tells shards apart.
        assert!(row("shard-49 ").ends_with(":40049/cgp)"), "{text}");
        // The errors and the command, whole, in the notes.
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            words.contains(
                "[1] shard-07: DOWN: provider http://127.0.0.1:40007/cgp: request failed"
            ),
            "{words}"
        );
        assert!(words.contains("Connection refused (os error 111); it is left out of every answer until it is reachable"), "{words}");
        assert!(
            words.contains(
                "[2] shard-12: REQUIRED: run cgp consent grant shard-12 --scope org-tenant"
            ),
            "{words}"
        );
        assert!(
            words.contains(
                "every provider up declares: version 1.0.0; data flow reads+egress [org-tenant]"
            ),
            "{words}"
        );
    }

    #[test]
    fn a_few_providers_too_wide_for_the_terminal_are_still_shown_as_blocks() {
        let few: Vec<_> = fleet().into_iter().take(BLOCKS_UP_TO).collect();
        let text = table_for(&few, 80);
        assert!(
            !text.starts_with("NAME") && !text.contains(" providers: "),
            "{text}"
        );
        assert!(text.contains("\n  transport"), "{text}");
    }

    #[test]
    fn a_wide_terminal_keeps_the_full_table_at_fifty() {
        let text = table_for(&fleet(), 10_000);
        assert!(text.starts_with("NAME"), "{text}");
        assert_eq!(text.lines().count(), 51, "{text}");
    }
}
