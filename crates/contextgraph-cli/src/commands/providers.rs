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

/// The table: one row per provider, columns padded to their widest cell
/// except the last (health), which carries the error. When that is wider
/// than the terminal (see [`crate::width`]), one block per provider
/// instead, every value wrapped to the width and none cut.
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
    blocks(&header, &rows, columns)
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
