//! `cgp consent list | grant | revoke`: the durable consent store that
//! egress providers are checked against (C1, C2, C6). A grant pins the
//! provider's name and version as it reports them at a handshake, so a
//! provider that comes back as another version needs a new grant.

use std::io::Write;
use std::time::Duration;

use clap::{Args, Subcommand};
use contextgraph_engine::{
    ledger_entries, revoke, Engine, EngineOptions, GrantRequest, LedgerEntry,
};
use contextgraph_host::{ConsentRecord, ConsentStore};
use contextgraph_types::{EgressScope, Grantor, GrantorKind, Timestamp};

use super::config::{runtime, ConfigSelection};
use super::CommandError;
use crate::output;

/// Arguments of `cgp consent`.
#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  cgp consent list
  cgp consent grant search                          # an egress provider without scopes (C1, C2)
  cgp consent grant model --scope third-party-model --expires 30d   # one receipt per scope (C6)
  cgp consent grant search --expires 2027-01-01T00:00:00Z
  cgp consent grant shard-01 shard-02 shard-03 --scope org-tenant   # many shards at once
  cgp consent revoke search

The store is append-only: a revocation is itself recorded. Its location is consent_store in
cgp.toml, else $CGP_DATA_DIR/consent.ndjson, else $XDG_DATA_HOME/contextgraph/consent.ndjson,
else ~/.local/share/contextgraph/consent.ndjson.

Exit codes:
  0  done (the receipts are printed)
  1  refused or failed: the provider is not configured or not reachable, it needs no consent,
     a scope it does not declare, nothing to revoke, or the store is unusable (with several
     providers, each one that could be granted is, and those that were not are named)
  2  usage error")]
pub struct ConsentArgs {
    /// What to do.
    #[command(subcommand)]
    pub action: ConsentAction,
}

/// The consent subcommands.
#[derive(Debug, Subcommand)]
pub enum ConsentAction {
    /// Every record in the store, with whether it is still in force.
    List(ListArgs),
    /// Allow a configured provider to be sent queries.
    Grant(GrantArgs),
    /// Withdraw everything granted to a provider.
    Revoke(RevokeArgs),
}

/// `cgp consent list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Where to look for the configuration (it may name the store).
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cgp consent grant`.
#[derive(Debug, Args)]
pub struct GrantArgs {
    /// The provider's name in cgp.toml (see `cgp providers`); several for
    /// a fleet of shards (`cgp consent grant shard-{01..50} --scope org-tenant`),
    /// each started, checked and granted on its own.
    #[arg(required = true, num_args = 1.., value_name = "PROVIDER")]
    pub providers: Vec<String>,
    /// An off-machine scope it declares (repeatable): third-party-model, third-party-index, org-tenant, vendor:name.
    #[arg(long = "scope", value_name = "SCOPE")]
    pub scopes: Vec<String>,
    /// When the grant lapses: an RFC 3339 UTC instant (2027-01-01T00:00:00Z), or a duration from now (30d, 12h, 90m).
    #[arg(long, value_name = "WHEN")]
    pub expires: Option<String>,
    /// Who is granting (recorded; default: $USER).
    #[arg(long, value_name = "ID")]
    pub grantor: Option<String>,
    /// Where to look for the configuration.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Print the receipts as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `cgp consent revoke`.
#[derive(Debug, Args)]
pub struct RevokeArgs {
    /// The provider: its name in cgp.toml, or its provider id as `cgp consent list` shows it.
    pub provider: String,
    /// Who is revoking (recorded; default: $USER).
    #[arg(long, value_name = "ID")]
    pub grantor: Option<String>,
    /// Where to look for the configuration.
    #[command(flatten)]
    pub selection: ConfigSelection,
    /// Print the record as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Run `cgp consent`.
pub fn run(args: ConsentArgs) -> Result<(), CommandError> {
    match args.action {
        ConsentAction::List(a) => list(a),
        ConsentAction::Grant(a) => grant(a),
        ConsentAction::Revoke(a) => revoke_cmd(a),
    }
}

fn grantor(id: Option<String>) -> Grantor {
    let id = id
        .or_else(|| std::env::var("USER").ok().filter(|u| !u.is_empty()))
        .or_else(|| std::env::var("LOGNAME").ok().filter(|u| !u.is_empty()))
        .unwrap_or_else(|| "unknown".to_owned());
    Grantor {
        kind: GrantorKind::Human,
        id,
    }
}

/// `--expires`: an RFC 3339 UTC instant (`…Z`, as on the wire, F4), or `<N>d`, `<N>h`, `<N>m` from `now`.
pub fn parse_expiry(text: &str, now: Timestamp) -> Result<Timestamp, String> {
    let text = text.trim();
    // The unit suffixes are ASCII, so stripping one keeps a char boundary.
    let duration = [('d', 86_400u64), ('h', 3_600), ('m', 60)]
        .iter()
        .find_map(|&(unit, secs)| {
            let n = text.strip_suffix(unit)?.parse::<u64>().ok()?;
            Some((n, secs))
        });
    if let Some((n, secs)) = duration {
        if n == 0 || n > 36_500 * 86_400 / secs {
            return Err(format!(
                "--expires {text}: give a duration from 1 up to 100 years"
            ));
        }
        return Ok(now.add(Duration::from_secs(n * secs)));
    }
    Timestamp::parse(text).map_err(|e| {
        format!(
            "--expires {text:?}: not an RFC 3339 UTC instant ({e}) nor a duration like 30d, 12h or 90m"
        )
    })
}

/// A `--json` document (with `format_version`; a list of records is
/// `{"records": […]}`).
fn print_json(value: &impl serde::Serialize) -> Result<(), CommandError> {
    output::print_json("records", value)
}

fn print_text(text: &str) -> Result<(), CommandError> {
    let mut stdout = std::io::stdout().lock();
    output::finish_stdout(
        stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush()),
    )
}

/// One line describing a record: every field comes from the store file
/// or a provider's handshake, so it is shown through `for_terminal`.
fn describe(record: &ConsentRecord) -> String {
    crate::terminal::for_terminal(&describe_raw(record))
}

fn describe_raw(record: &ConsentRecord) -> String {
    let until = |e: &Option<String>| {
        e.as_ref()
            .map(|e| format!(" until {e}"))
            .unwrap_or_else(|| " until revoked".to_owned())
    };
    // The key the record is under, with the name the provider announced
    // beside it when that differs (two providers may announce one name).
    let who = |id: &str, name: &str| {
        if id == name {
            id.to_owned()
        } else {
            format!("{id} ({name})")
        }
    };
    match record {
        ConsentRecord::Receipt(r) => {
            let (kind, what) = match &r.scope {
                None => ("grant   ", "(egress)".to_owned()),
                Some(scope) => ("receipt ", format!("scope {}", scope.as_str())),
            };
            format!(
                "{kind} {} {} {what} by {} at {}{}",
                who(&r.provider_id, &r.provider_name),
                r.provider_version,
                r.grantor.id,
                r.granted_at,
                until(&r.expires_at)
            )
        }
        ConsentRecord::Revocation(v) => format!(
            "revoked  {}{} by {} at {}",
            v.provider_id,
            v.scope
                .as_ref()
                .map(|s| format!(" scope {}", s.as_str()))
                .unwrap_or_default(),
            v.grantor.id,
            v.revoked_at
        ),
    }
}

fn list(args: ListArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let path = contextgraph_engine::store_path(&config)?;
    // A directory or FIFO there is an error (from open), not "no records";
    // so is a path that cannot exist (N18: CGP_DATA_DIR a regular file),
    // which `grant` would fail on too.
    let entries: Vec<LedgerEntry> = match std::fs::metadata(&path) {
        Ok(_) => {
            let ledger = ConsentStore::open(&path)?.load()?;
            for w in &ledger.warnings {
                eprintln!("warning: {}", crate::terminal::for_terminal(w));
            }
            ledger_entries(&ledger, Timestamp::now())
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent().filter(|d| d.exists() && !d.is_dir()) {
                return Err(format!(
                    "the consent store's directory {} is not a directory; set CGP_DATA_DIR to a directory",
                    crate::terminal::path_for_terminal(dir)
                )
                .into());
            }
            Vec::new()
        }
        Err(e) => {
            return Err(format!(
                "the consent store {}: {}; set CGP_DATA_DIR to a directory of yours",
                crate::terminal::path_for_terminal(&path),
                crate::terminal::for_terminal(&e.to_string())
            )
            .into())
        }
    };
    if args.json {
        return print_json(&serde_json::json!({ "store": path, "records": entries }));
    }
    let mut out = format!(
        "# consent store: {}\n",
        crate::terminal::path_for_terminal(&path)
    );
    if entries.is_empty() {
        out.push_str("# no records: no egress provider may be sent anything\n");
    }
    for e in &entries {
        out.push_str(&format!(
            "{:>3}  {:<14} {}\n",
            e.index,
            e.state,
            describe(&e.record)
        ));
    }
    print_text(&out)
}

fn grant(args: GrantArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let now = Timestamp::now();
    let expires_at = args
        .expires
        .as_deref()
        .map(|e| parse_expiry(e, now))
        .transpose()
        .map_err(|e| super::UsageError(e.to_string()))?;
    let scopes: Vec<EgressScope> = args
        .scopes
        .iter()
        .map(|s| EgressScope::from_wire(s.trim()))
        .collect();
    if let Some(bad) = scopes.iter().find(|s| !s.is_valid()) {
        return Err(Box::new(super::UsageError(format!(
            "--scope {:?} is not a scope: use local-only, org-tenant, third-party-index, third-party-model or vendor:name",
            bad.as_str()
        ))));
    }
    let request = GrantRequest {
        scopes,
        expires_at,
        grantor: grantor(args.grantor.clone()),
    };
    let mut names: Vec<String> = Vec::with_capacity(args.providers.len());
    for name in &args.providers {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    let options = EngineOptions {
        only: Some(names.clone()),
        grant_command_args: args.selection.repeat_args(),
        ..EngineOptions::default()
    };
    let (granted, refused, store) = runtime()?.block_on(async {
        // One engine for all of them: the providers start concurrently, so
        // granting fifty shards costs one start, not fifty.
        let engine = Engine::start_with(&config, &args.selection.dir, options).await?;
        let mut granted = Vec::new();
        let mut refused = Vec::new();
        for name in &names {
            match engine.grant(name, &request) {
                Ok(records) => granted.extend(records),
                Err(e) => refused.push(e),
            }
        }
        let store = engine.consent_store_path().map(|p| p.display().to_string());
        engine.shutdown().await;
        Ok::<_, CommandError>((granted, refused, store))
    })?;
    // One provider: its error is the command's error, as it always was.
    if names.len() == 1 {
        if let Some(e) = refused.into_iter().next() {
            return Err(e.into());
        }
        return print_receipts(&granted, store, args.json);
    }
    print_receipts(&granted, store, args.json)?;
    if refused.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} of {} providers not granted (the others were):\n  {}",
        refused.len(),
        names.len(),
        refused
            .iter()
            .map(|e| crate::terminal::for_terminal(&e.to_string()))
            .collect::<Vec<_>>()
            .join("\n  ")
    )
    .into())
}

fn print_receipts(
    records: &[ConsentRecord],
    store: Option<String>,
    json: bool,
) -> Result<(), CommandError> {
    if json {
        return print_json(&records);
    }
    let mut out = String::new();
    for r in records {
        out.push_str(&describe(r));
        out.push('\n');
    }
    if let Some(s) = store.filter(|_| !records.is_empty()) {
        out.push_str(&format!("# recorded in {s}\n"));
    }
    print_text(&out)
}

fn revoke_cmd(args: RevokeArgs) -> Result<(), CommandError> {
    let config = args.selection.load()?;
    let path = contextgraph_engine::store_path(&config)?;
    if !path.exists() {
        return Err(format!(
            "provider {}: nothing is granted to it (the consent store {} does not exist yet)",
            args.provider,
            path.display()
        )
        .into());
    }
    let store = ConsentStore::open(&path)?;
    let ledger = store.load()?;
    // The id as stored, or the configured name's id learnt at a handshake.
    let id = if !ledger.pinned_versions(&args.provider).is_empty()
        || config.provider(&args.provider).is_none()
    {
        args.provider.clone()
    } else {
        let options = EngineOptions {
            only: Some(vec![args.provider.clone()]),
            ..EngineOptions::default()
        };
        runtime()?.block_on(async {
            let engine = Engine::start_with(&config, &args.selection.dir, options).await?;
            let id = engine.descriptor(&args.provider).map(|d| d.id.clone());
            engine.shutdown().await;
            id.map_err(|e| -> CommandError {
                format!("{e}; to revoke without reaching it, give its provider id as `cgp consent list` shows it").into()
            })
        })?
    };
    let record = revoke(&store, &id, grantor(args.grantor))?;
    if args.json {
        return print_json(&record);
    }
    print_text(&format!(
        "{}\n# recorded in {}\n",
        describe(&record),
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_is_an_instant_or_a_duration_from_now() {
        let now = Timestamp::parse("2026-01-01T00:00:00Z").unwrap();
        let at = |t: &str| parse_expiry(t, now).map(|t| t.to_wire());
        assert_eq!(
            at("30d").unwrap(),
            Timestamp::parse("2026-01-31T00:00:00Z").unwrap().to_wire()
        );
        assert_eq!(
            at("12h").unwrap(),
            Timestamp::parse("2026-01-01T12:00:00Z").unwrap().to_wire()
        );
        assert_eq!(
            at("90m").unwrap(),
            Timestamp::parse("2026-01-01T01:30:00Z").unwrap().to_wire()
        );
        assert_eq!(at("2027-05-01T08:00:00Z").unwrap(), "2027-05-01T08:00:00Z");
        // Timestamps are UTC with a Z, like every timestamp on the wire (F4).
        let err = at("2027-05-01T10:00:00+02:00").unwrap_err();
        assert!(err.contains("UTC"), "{err}");
        for bad in ["0d", "soon", "", "5é", "99999999999d", "-3d"] {
            assert!(at(bad).is_err(), "{bad:?} should be refused");
        }
    }
}
