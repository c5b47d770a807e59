//! The host suite's stdio adversaries, embedded: the process side of the
//! checks that need a real child (crash isolation, wire noise, correlation
//! ids, the line cap, shutdown).
//!
//! # Why embedded, and how they are started
//!
//! Those checks are about what a host does with a *process*: one that dies
//! mid-query leaving a stderr tail, one that ignores `shutdown` and must be
//! killed. No in-memory peer can show that, so something must be spawned.
//! The crate used to borrow the modes of the misbehaving provider, a test
//! fixture with some thirty modes, a corpus and a worker pool, which then
//! shipped inside `cgp` behind a hidden command. Only seven behaviours are
//! needed here, each a few lines on the codec, so they live in this crate
//! and nothing else is shipped.
//!
//! A binary that runs the host suite starts them by re-running itself: it
//! passes [`AdversaryCommand::reexec`](crate::AdversaryCommand::reexec),
//! which sets [`ADVERSARY_ENV`] on the child, and its `main` begins with
//! [`adversary_requested`] → [`serve_adversary`]. No command line flag or
//! subcommand exposes them (`cgp` has none), and the variable is only ever
//! set by the suite on its own children. This crate's
//! `contextgraph-host-adversary` binary serves the same adversaries for its
//! own tests (found through `CARGO_BIN_EXE_*`, no nested build).
//!
//! Every adversary speaks the protocol correctly except for its one fault:
//! lock-step reading, correlation declared (so wrong and missing ids are
//! H4 faults), two honest `doc` frames per answer, `bad_request` for a
//! malformed line (R1), exit 0 after `shutdown` or end of input.

use std::ffi::OsString;
use std::io::{self, BufWriter, Write};
use std::time::Duration;

use contextgraph_codec::{encode_line, Envelope, EnvelopeReader};
use contextgraph_types::{
    versions_compatible, Capabilities, DataFlow, EgressScope, ErrorCode, FrameKind, ProviderInfo,
    QueryCapability, PROTOCOL_VERSION,
};

use crate::adversary::{answer, honest_frames};

/// Set (to [`ADVERSARY_ENV_VALUE`]) on the children the suite spawns with
/// [`AdversaryCommand::reexec`](crate::AdversaryCommand::reexec).
pub const ADVERSARY_ENV: &str = "CONTEXTGRAPH_HOST_SUITE_ADVERSARY";

/// The value of [`ADVERSARY_ENV`]: a specific word, so a variable left set
/// to something else by accident does not turn a program into an adversary.
pub const ADVERSARY_ENV_VALUE: &str = "serve";

/// Exit code of `crash-on-query` (as the misbehaving fixture's crash modes).
pub const EXIT_CRASH: i32 = 3;

/// The garbage line `garbage-lines` writes first: not JSON.
const GARBAGE_LINE: &[u8] = b"this is not an envelope {{{";

/// The unknown-type notification `garbage-lines` writes last.
const PING_LINE: &[u8] = b"{\"type\":\"ping\"}";

/// Bytes of `garbage-lines`' oversized line: past the 1 MiB line cap the
/// suite's host runs with (`stdio::LINE_CAP`).
const LONG_LINE_BYTES: usize = 2 * 1024 * 1024 + 1;

/// What the oversized and the endless lines are made of.
static FILLER: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// Pause between `endless-line` chunks, so the line never ends without the
/// writer hogging a shared machine's CPU.
const ENDLESS_PAUSE: Duration = Duration::from_millis(1);

/// The one behaviour of an adversary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fault {
    /// None: the well-behaved twin.
    Normal,
    /// Writes to stderr and exits [`EXIT_CRASH`] on the first query.
    CrashOnQuery,
    /// Garbage, a blank line, an oversized line and an unknown-type
    /// notification before every reply after the handshake ack.
    GarbageLines,
    /// Replies echo a different id than the request's (H4).
    WrongId,
    /// Replies omit the id although correlation is declared (H4).
    DroppedId,
    /// Answers a query with a line that never ends.
    EndlessLine,
    /// Ignores `shutdown` and stays alive until killed (R2).
    HangOnShutdown,
}

impl Fault {
    /// Every adversary, in catalogue order.
    pub(crate) const ALL: [Fault; 7] = [
        Fault::Normal,
        Fault::CrashOnQuery,
        Fault::GarbageLines,
        Fault::WrongId,
        Fault::DroppedId,
        Fault::EndlessLine,
        Fault::HangOnShutdown,
    ];

    /// The `--mode` name (the misbehaving fixture's name for the same fault).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Fault::Normal => "normal",
            Fault::CrashOnQuery => "crash-on-query",
            Fault::GarbageLines => "garbage-lines",
            Fault::WrongId => "wrong-id",
            Fault::DroppedId => "dropped-id",
            Fault::EndlessLine => "endless-line",
            Fault::HangOnShutdown => "hang-on-shutdown",
        }
    }

    fn from_name(name: &str) -> Option<Fault> {
        Fault::ALL.into_iter().find(|f| f.name() == name)
    }

    /// H4: the id a reply carries instead of the request's `id`.
    fn reply_id(self, id: Option<String>) -> Option<String> {
        match self {
            Fault::DroppedId => None,
            Fault::WrongId => id.map(|id| format!("{id}-wrong")),
            _ => id,
        }
    }
}

/// Whether this process was started as an adversary by the host suite
/// ([`ADVERSARY_ENV`] is [`ADVERSARY_ENV_VALUE`]); a binary that runs the
/// suite with [`AdversaryCommand::reexec`](crate::AdversaryCommand::reexec)
/// checks this first in `main` and then calls [`serve_adversary`].
pub fn adversary_requested() -> bool {
    std::env::var_os(ADVERSARY_ENV).is_some_and(|v| v == ADVERSARY_ENV_VALUE)
}

/// What the command line asked for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    Serve { fault: Fault, name: String },
    ListModes,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Request, String> {
    let mut fault = Fault::Normal;
    let mut name = "host-suite-adversary".to_owned();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let arg = arg
            .into_string()
            .map_err(|a| format!("argument {a:?} is not UTF-8"))?;
        match arg.as_str() {
            "--list-modes" => return Ok(Request::ListModes),
            "--mode" | "--name" => {
                let value = args
                    .next()
                    .and_then(|v| v.into_string().ok())
                    .ok_or_else(|| format!("{arg} needs a UTF-8 value"))?;
                if arg == "--mode" {
                    fault = Fault::from_name(&value).ok_or_else(|| {
                        let known: Vec<_> = Fault::ALL.iter().map(|f| f.name()).collect();
                        format!("unknown mode {value:?}; known: {}", known.join(", "))
                    })?;
                } else {
                    name = value;
                }
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Request::Serve { fault, name })
}

/// Serve one adversary on this process's stdin/stdout. `args` are
/// `--mode <MODE> --name <NAME>` (or `--list-modes`); returns the exit
/// code: 0 after `shutdown` or end of input, 2 on bad arguments, 1 when
/// stdout fails. `crash-on-query` exits [`EXIT_CRASH`] itself, and
/// `hang-on-shutdown` never returns.
pub fn serve_adversary(args: impl IntoIterator<Item = OsString>) -> i32 {
    match parse(args) {
        Ok(Request::ListModes) => {
            let names: String = Fault::ALL
                .iter()
                .map(|f| format!("{}\n", f.name()))
                .collect();
            let _ = io::stdout().lock().write_all(names.as_bytes());
            0
        }
        Ok(Request::Serve { fault, name }) => {
            let result = serve(fault, &name, io::stdin().lock(), io::stdout().lock());
            if fault == Fault::HangOnShutdown {
                eprintln!("{name}: hang-on-shutdown: input ended; staying alive until killed");
                loop {
                    std::thread::park();
                }
            }
            match result {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("{name}: writing to stdout failed ({e}); exiting");
                    1
                }
            }
        }
        Err(e) => {
            eprintln!("host-suite adversary: {e}");
            2
        }
    }
}

/// The protocol loop, lock-step: read one envelope, answer it.
fn serve<R: io::Read, W: Write>(fault: Fault, name: &str, input: R, output: W) -> io::Result<()> {
    let mut out = BufWriter::new(output);
    let mut reader = EnvelopeReader::new(input);
    let mut acked = false;
    while let Some(item) = reader.next_envelope() {
        let reply = match item {
            Err(e) if !e.is_recoverable() => return Ok(()),
            // R1: a malformed line gets bad_request and the session goes on.
            Err(e) => Some(Envelope::error(
                None,
                ErrorCode::BadRequest,
                format!("{name}: R1: {e}"),
            )),
            Ok(Envelope::Handshake { protocol_version }) => {
                if versions_compatible(&protocol_version, PROTOCOL_VERSION) {
                    write(&mut out, &ack(name))?;
                    acked = true;
                    None
                } else {
                    Some(Envelope::error(
                        None,
                        ErrorCode::IncompatibleVersion,
                        format!("{name}: H3: this adversary speaks {PROTOCOL_VERSION}"),
                    ))
                }
            }
            Ok(Envelope::Query { id, query }) => {
                if fault == Fault::CrashOnQuery {
                    eprintln!(
                        "{name}: crash-on-query: exiting with code {EXIT_CRASH} on the first query, as this adversary is meant to"
                    );
                    let _ = io::stderr().flush();
                    std::process::exit(EXIT_CRASH);
                }
                let id = fault.reply_id(id);
                if !acked {
                    Some(Envelope::error(
                        id,
                        ErrorCode::BadRequest,
                        format!("{name}: query before the handshake"),
                    ))
                } else if fault == Fault::EndlessLine {
                    return endless(&mut out, id.as_deref());
                } else {
                    let mut frames = honest_frames("stdio", 2);
                    frames.truncate(usize::try_from(query.max_frames).unwrap_or(usize::MAX));
                    Some(Envelope::Frames {
                        id,
                        result: answer(frames),
                    })
                }
            }
            Ok(Envelope::Shutdown) => {
                if fault != Fault::HangOnShutdown {
                    return out.flush();
                }
                eprintln!(
                    "{name}: hang-on-shutdown: ignoring shutdown, as this adversary is meant to"
                );
                None
            }
            // A host's error and unknown notifications need no answer.
            Ok(Envelope::Error { .. } | Envelope::Unknown { id: None, .. }) => None,
            Ok(other) => Some(Envelope::error(
                fault.reply_id(other.correlation_id().map(str::to_owned)),
                ErrorCode::BadRequest,
                format!(
                    "{name}: R1: {} is not served by this adversary",
                    other.type_name()
                ),
            )),
        };
        if let Some(reply) = reply {
            if acked && fault == Fault::GarbageLines {
                garbage(&mut out)?;
            }
            write(&mut out, &reply)?;
        }
    }
    out.flush()
}

/// The handshake ack: a local provider of `doc` frames that declares
/// correlation.
fn ack(name: &str) -> Envelope {
    Envelope::HandshakeAck {
        protocol_version: PROTOCOL_VERSION.to_owned(),
        provider: ProviderInfo {
            name: name.to_owned(),
            version: "1.0.0".to_owned(),
            data_flow: DataFlow {
                reads: true,
                egress_scopes: vec![EgressScope::LocalOnly],
                ..DataFlow::default()
            },
        },
        capabilities: Capabilities {
            query: QueryCapability {
                kinds: vec![FrameKind::Doc],
            },
            correlation: true,
            ..Capabilities::default()
        },
    }
}

fn write<W: Write>(out: &mut W, envelope: &Envelope) -> io::Result<()> {
    let line = encode_line(envelope).map_err(io::Error::other)?;
    out.write_all(&line)?;
    out.flush()
}

/// `garbage-lines`' prelude: a line that is not JSON, a blank line, a line
/// past the suite host's line cap, and an unknown-type notification.
fn garbage<W: Write>(out: &mut W) -> io::Result<()> {
    out.write_all(GARBAGE_LINE)?;
    out.write_all(b"\n\n")?;
    let mut left = LONG_LINE_BYTES;
    while left > 0 {
        let n = left.min(FILLER.len());
        out.write_all(&FILLER[..n])?;
        left -= n;
    }
    out.write_all(b"\n")?;
    out.write_all(PING_LINE)?;
    out.write_all(b"\n")
}

/// `endless-line`: the start of a `frames` reply whose first title never
/// ends; returns only when the host closes the pipe.
fn endless<W: Write>(out: &mut W, id: Option<&str>) -> io::Result<()> {
    let id = id
        .and_then(|id| serde_json::to_string(id).ok())
        .map(|quoted| format!("\"id\":{quoted},"))
        .unwrap_or_default();
    let prefix = format!(
        "{{\"type\":\"frames\",{id}\"result\":{{\"frames\":[{{\"id\":\"endless\",\"kind\":\"doc\",\"title\":\""
    );
    out.write_all(prefix.as_bytes())?;
    loop {
        out.write_all(&FILLER)?;
        out.flush()?;
        std::thread::sleep(ENDLESS_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use contextgraph_codec::decode_envelope;
    use contextgraph_types::ContextQuery;

    fn session(fault: Fault, input: &[Envelope]) -> Vec<String> {
        let mut bytes = Vec::new();
        for e in input {
            bytes.extend(encode_line(e).expect("encodes"));
        }
        let mut out = Vec::new();
        serve(fault, "t", bytes.as_slice(), &mut out).expect("served");
        String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn handshake_and_query() -> Vec<Envelope> {
        vec![
            Envelope::Handshake {
                protocol_version: PROTOCOL_VERSION.to_owned(),
            },
            Envelope::Query {
                id: Some("q1".into()),
                query: ContextQuery::new("retries", 8, 8000),
            },
        ]
    }

    fn reply_id(line: &str) -> Option<String> {
        decode_envelope(line.as_bytes())
            .expect("an envelope")
            .correlation_id()
            .map(str::to_owned)
    }

    #[test]
    fn the_twin_acks_and_echoes_ids_with_valid_frames() {
        let lines = session(Fault::Normal, &handshake_and_query());
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(matches!(
            decode_envelope(lines[0].as_bytes()),
            Ok(Envelope::HandshakeAck { .. })
        ));
        match decode_envelope(lines[1].as_bytes()) {
            Ok(Envelope::Frames { id, result }) => {
                assert_eq!(id.as_deref(), Some("q1"));
                assert_eq!(result.frames.len(), 2);
                assert!(result.frames.iter().all(|f| f.validate().is_empty()));
            }
            other => panic!("expected frames, got {other:?}"),
        }
    }

    #[test]
    fn the_id_adversaries_break_exactly_the_id() {
        let wrong = session(Fault::WrongId, &handshake_and_query());
        assert_eq!(reply_id(&wrong[1]).as_deref(), Some("q1-wrong"));
        let dropped = session(Fault::DroppedId, &handshake_and_query());
        assert_eq!(reply_id(&dropped[1]), None);
    }

    #[test]
    fn garbage_lines_precede_replies_after_the_ack_only() {
        let lines = session(Fault::GarbageLines, &handshake_and_query());
        assert!(matches!(
            decode_envelope(lines[0].as_bytes()),
            Ok(Envelope::HandshakeAck { .. })
        ));
        assert_eq!(lines[1].as_bytes(), GARBAGE_LINE);
        assert_eq!(lines[2], "");
        assert!(lines[3].len() > 1024 * 1024);
        assert_eq!(lines[4].as_bytes(), PING_LINE);
        assert_eq!(reply_id(&lines[5]).as_deref(), Some("q1"));
    }

    #[test]
    fn a_malformed_line_gets_bad_request_and_shutdown_ends_the_session() {
        let mut out = Vec::new();
        let input = b"{not json\n{\"type\":\"shutdown\"}\n{\"type\":\"handshake\",\"protocol_version\":\"contextgraph/1.0\"}\n";
        serve(Fault::Normal, "t", &input[..], &mut out).expect("served");
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<_> = text.lines().collect();
        assert_eq!(lines.len(), 1, "nothing after shutdown: {lines:?}");
        assert!(matches!(
            decode_envelope(lines[0].as_bytes()),
            Ok(Envelope::Error {
                code: Some(ErrorCode::BadRequest),
                ..
            })
        ));
    }

    #[test]
    fn the_command_line_names_one_adversary_or_fails() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            parse(args(&["--mode", "wrong-id", "--name", "w"])),
            Ok(Request::Serve {
                fault: Fault::WrongId,
                name: "w".into()
            })
        );
        assert_eq!(parse(args(&["--list-modes"])), Ok(Request::ListModes));
        assert!(parse(args(&["--mode", "nope"])).is_err());
        assert!(parse(args(&["--mode"])).is_err());
        assert!(parse(args(&["--bogus"])).is_err());
        for f in Fault::ALL {
            assert_eq!(Fault::from_name(f.name()), Some(f));
        }
    }
}
