//! Opening a session: the handshake (H1: no query payload before it), then
//! the reader and, for a correlated provider, the writer task.

use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use contextgraph_codec::{decode_envelope, AsyncLineReader, Envelope, FrameError, LineFramer};
use contextgraph_types::PROTOCOL_VERSION;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, Semaphore};
use tokio::time::{timeout_at, Instant};

use super::outbox::{write_loop, Outbox};
use super::reader::read_loop;
use super::router::{Router, Shared};
use super::wire::encode;
use super::{Connection, ConnectionOptions, Sink};
use crate::handshake::{
    check_ack, error_instead_of_ack, HandshakeError, ProviderDescriptor, TransportKind,
};
use crate::line_watch::LineWatch;
use contextgraph_types::display_text::{bounded, bounded_bytes};

impl Connection {
    /// Handshake over `reader`/`writer` and start routing. `label` names the
    /// provider in errors until it has told its name; `transport` is recorded
    /// in the descriptor.
    ///
    /// No query payload moves before this returns `Ok` (H1).
    pub async fn open<R, W>(
        reader: R,
        writer: W,
        label: &str,
        transport: TransportKind,
        options: ConnectionOptions,
    ) -> Result<Connection, HandshakeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let mut writer = BufWriter::with_capacity(64 * 1024, writer);
        let runaway_limit = options
            .max_line_bytes
            .saturating_add(options.runaway_line_bytes) as u64;
        let mut lines = AsyncLineReader::with_framer(
            LineWatch::new(reader, runaway_limit),
            LineFramer::new(options.max_line_bytes),
        );
        let open_line = lines.get_ref().open_line();
        let io_error = |e: std::io::Error| HandshakeError::Io {
            provider: label.to_owned(),
            detail: e.to_string(),
        };
        let hello = encode(&Envelope::Handshake {
            protocol_version: PROTOCOL_VERSION.to_owned(),
        });
        let deadline = Instant::now() + options.handshake_timeout;
        let sent = timeout_at(deadline, async {
            writer.write_all(&hello).await?;
            writer.flush().await
        })
        .await;
        match sent {
            Err(_) => {
                return Err(HandshakeError::Timeout {
                    provider: label.to_owned(),
                    timeout_ms: options.handshake_timeout.as_millis(),
                    stderr_tail: String::new(),
                })
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                return Err(HandshakeError::Closed {
                    provider: label.to_owned(),
                    stderr_tail: String::new(),
                })
            }
            Ok(Err(e)) => return Err(io_error(e)),
            Ok(Ok(())) => {}
        }
        let first = timeout_at(deadline, async {
            match lines.next_line().await {
                None => Err(HandshakeError::Closed {
                    provider: label.to_owned(),
                    stderr_tail: String::new(),
                }),
                Some(Err(FrameError::Oversized {
                    discarded_bytes, ..
                })) => Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!("a line of {discarded_bytes} bytes, over the line cap"),
                    line: String::new(),
                }),
                Some(Err(_)) if open_line.tripped() => Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!(
                        "a line of more than {runaway_limit} bytes that does not end (§1)"
                    ),
                    line: String::new(),
                }),
                Some(Err(e)) => Err(HandshakeError::Io {
                    provider: label.to_owned(),
                    detail: e.to_string(),
                }),
                Some(Ok(line)) => Ok((decode_envelope(line), bounded_bytes(line, 120))),
            }
        })
        .await
        .map_err(|_| HandshakeError::Timeout {
            provider: label.to_owned(),
            timeout_ms: options.handshake_timeout.as_millis(),
            stderr_tail: String::new(),
        })??;
        let descriptor = match first {
            (
                Ok(Envelope::HandshakeAck {
                    protocol_version,
                    provider,
                    capabilities,
                }),
                _,
            ) => check_ack(protocol_version, provider, capabilities, transport, label)?,
            (Ok(Envelope::Error { code, message, .. }), _) => {
                return Err(error_instead_of_ack(label, code, &message))
            }
            (Ok(other), line) => {
                return Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: format!("a {} envelope", bounded(other.type_name(), 40)),
                    line,
                })
            }
            (Err(e), line) => {
                return Err(HandshakeError::NotProtocol {
                    provider: label.to_owned(),
                    detail: e.to_string(),
                    line,
                })
            }
        };
        Ok(Self::start(descriptor, lines, writer, options))
    }

    pub(super) fn start<R, W>(
        descriptor: ProviderDescriptor,
        lines: AsyncLineReader<LineWatch<R>>,
        writer: BufWriter<W>,
        options: ConnectionOptions,
    ) -> Connection
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let correlated = descriptor.capabilities.correlation;
        let max_in_flight = if correlated {
            options.max_in_flight.max(1)
        } else {
            1
        };
        let shared = Arc::new(Shared {
            provider: descriptor.id.clone(),
            correlated,
            open_line: lines.get_ref().open_line(),
            max_line_bytes: options.max_line_bytes,
            router: Mutex::new(Router::default()),
            drained: Notify::new(),
        });
        let reader = tokio::spawn(read_loop(lines, Arc::clone(&shared)));
        let (sink, writer) = if correlated {
            let outbox = Arc::new(Outbox::new(Box::new(writer.into_inner())));
            let task = tokio::spawn(write_loop(Arc::clone(&outbox), Arc::clone(&shared)));
            (Sink::Outbox(outbox), Some(task))
        } else {
            let boxed: Box<dyn AsyncWrite + Send + Unpin> = Box::new(writer.into_inner());
            let direct = BufWriter::with_capacity(64 * 1024, boxed);
            (Sink::Direct(tokio::sync::Mutex::new(direct)), None)
        };
        Connection {
            descriptor,
            shared,
            sink,
            in_flight: Semaphore::new(max_in_flight),
            max_in_flight,
            turn: tokio::sync::Mutex::new(()),
            next: AtomicU64::new(1),
            options,
            reader,
            writer,
        }
    }
}
