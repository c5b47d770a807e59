//! Stdio in front of rmcp that answers what rmcp cannot decode.
//!
//! rmcp drops a line it cannot decode without a word: a client that sent
//! invalid UTF-8, something that is not JSON, a line over any sane size, or
//! `params` of the wrong shape waits for an answer until it times out. Here
//! every line from stdin is checked first; a good one is passed on to rmcp
//! unchanged, a bad one is answered on stdout with a JSON-RPC error
//! (-32700 parse error, -32600 invalid request, -32602 invalid params; with
//! the request's `id` when one can be recovered, else `null`) and reported
//! in one line on stderr. Stdout has one writer, so an error never lands in
//! the middle of one of rmcp's messages.

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// Longest request line accepted (a tool call is a few kilobytes).
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// JSON-RPC: the line is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC: JSON, but not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC: a request whose parameters do not fit the method.
pub const INVALID_PARAMS: i64 = -32602;

/// Why a line was refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    /// The JSON-RPC error code.
    pub code: i64,
    /// The request's id, when it could be recovered.
    pub id: Option<Value>,
    /// What is wrong, for the client and stderr.
    pub message: String,
}

impl Refusal {
    /// The JSON-RPC error response.
    pub fn response(&self) -> Value {
        json!({
            "jsonrpc": "2.0",
            "id": self.id.clone().unwrap_or(Value::Null),
            "error": {"code": self.code, "message": self.message},
        })
    }
}

/// Check one line (without its newline). `Ok(true)`: pass it on;
/// `Ok(false)`: nothing to do (a blank line, a notification rmcp would
/// ignore); `Err`: answer with the refusal — unless it is a notification
/// (no id), which JSON-RPC never answers, so only stderr hears of it.
pub fn check_line(line: &[u8]) -> Result<bool, Refusal> {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Ok(false);
    }
    let text = std::str::from_utf8(line).map_err(|e| Refusal {
        code: PARSE_ERROR,
        id: None,
        message: format!(
            "parse error: the line is not UTF-8 (bad byte at offset {}); send UTF-8 JSON",
            e.valid_up_to()
        ),
    })?;
    let value: Value = serde_json::from_str(text).map_err(|e| Refusal {
        code: PARSE_ERROR,
        id: None,
        message: format!("parse error: not JSON ({e}); send one JSON-RPC message per line"),
    })?;
    let Some(object) = value.as_object() else {
        return Err(Refusal {
            code: INVALID_REQUEST,
            id: None,
            message: "invalid request: a message is one JSON object (batches are not supported)"
                .to_owned(),
        });
    };
    let id = object
        .get("id")
        .filter(|v| v.is_string() || v.is_number())
        .cloned();
    // rmcp decodes a `tools/call` whose params do not fit as a custom
    // request, which the server then answers "method not found": the
    // shape is checked here so the client hears what is wrong (-32602).
    if object.get("method").and_then(Value::as_str) == Some("tools/call")
        && object.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
    {
        if let Some(problem) = tools_call_problem(object.get("params")) {
            return Err(Refusal {
                code: INVALID_PARAMS,
                id,
                message: format!("invalid params for \"tools/call\": {problem}"),
            });
        }
    }
    if serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()).is_ok() {
        return Ok(true);
    }
    let invalid = |message: String| Refusal {
        code: INVALID_REQUEST,
        id: id.clone(),
        message,
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(invalid(
            "invalid request: \"jsonrpc\" must be \"2.0\"".to_owned(),
        ));
    }
    let Some(method) = object.get("method").and_then(Value::as_str) else {
        return Err(invalid(
            "invalid request: no \"method\" string (and not a response to a request of ours)"
                .to_owned(),
        ));
    };
    if object.get("id").is_some_and(|v| !v.is_null()) && id.is_none() {
        return Err(invalid(
            "invalid request: \"id\" must be a string or a number".to_owned(),
        ));
    }
    Err(Refusal {
        code: INVALID_PARAMS,
        id,
        message: format!(
            "invalid params for {method:?}: they do not have the shape the method takes (see the MCP specification; tools/call takes {{\"name\": string, \"arguments\": object}})"
        ),
    })
}

/// What is wrong with a `tools/call`'s `params`, if anything: they must be
/// an object with a string `name` and, if present, an object `arguments`.
fn tools_call_problem(params: Option<&Value>) -> Option<String> {
    let Some(params) = params.and_then(Value::as_object) else {
        return Some(
            "params must be an object {\"name\": string, \"arguments\": object}".to_owned(),
        );
    };
    match params.get("name") {
        Some(Value::String(_)) => {}
        None => return Some("\"name\" is missing; give the tool's name as a string".to_owned()),
        Some(_) => return Some("\"name\" must be a string (the tool's name)".to_owned()),
    }
    match params.get("arguments") {
        None | Some(Value::Null) | Some(Value::Object(_)) => None,
        Some(_) => Some(
            "\"arguments\" must be an object of the tool's named arguments, e.g. {\"goal\": \"…\"}"
                .to_owned(),
        ),
    }
}

/// The `id` of a request too long to parse, from its first kilobytes
/// (`"id": 7` or `"id": "x"`), so the client can match the error.
fn id_from_prefix(prefix: &[u8]) -> Option<Value> {
    let text = String::from_utf8_lossy(prefix);
    let at = text.find("\"id\"")? + 4;
    let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
    if let Some(s) = rest.strip_prefix('"') {
        let end = s.find('"')?;
        let id = &s[..end];
        return (!id.contains('\\')).then(|| Value::String(id.to_owned()));
    }
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse::<i64>().ok().map(Value::from)
}

/// Stdin and stdout for rmcp: what it reads has been checked, what it
/// writes goes out through the one writer. Tasks run until stdin closes
/// and rmcp has finished writing.
pub fn guarded_stdio() -> (DuplexStream, DuplexStream) {
    guarded(tokio::io::stdin(), tokio::io::stdout())
}

/// [`guarded_stdio`] over any reader and writer.
pub fn guarded<R, W>(input: R, output: W) -> (DuplexStream, DuplexStream)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (rmcp_in, mut feed) = tokio::io::duplex(64 * 1024);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(64 * 1024);
    let (errors, mut error_lines) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        loop {
            match read_bounded_line(&mut input).await {
                Ok(None) => break,
                Ok(Some(Line::Complete(line))) => match check_line(&line) {
                    Ok(true) => {
                        let mut framed = line;
                        framed.push(b'\n');
                        if feed.write_all(&framed).await.is_err() {
                            break;
                        }
                    }
                    Ok(false) => {}
                    Err(refusal) => refuse(&refusal, &errors, has_id_or_is_bad(&refusal)),
                },
                Ok(Some(Line::TooLong(prefix))) => refuse(
                    &Refusal {
                        code: INVALID_REQUEST,
                        id: id_from_prefix(&prefix),
                        message: format!(
                            "invalid request: the line is over {MAX_LINE_BYTES} bytes; send smaller requests"
                        ),
                    },
                    &errors,
                    true,
                ),
                Err(_) => break,
            }
        }
        // Closing rmcp's input ends the session once it has answered.
        let _ = feed.shutdown().await;
    });
    tokio::spawn(async move {
        let mut output = output;
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        let mut rmcp_open = true;
        loop {
            tokio::select! {
                read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => {
                    match read {
                        Ok(0) | Err(_) => rmcp_open = false,
                        Ok(_) => {
                            if output.write_all(&line).await.and(output.flush().await).is_err() {
                                return;
                            }
                            line.clear();
                        }
                    }
                }
                error = error_lines.recv() => match error {
                    Some(bytes) => {
                        if output.write_all(&bytes).await.and(output.flush().await).is_err() {
                            return;
                        }
                    }
                    None if !rmcp_open => return,
                    None => {
                        // No more errors can come; finish rmcp's output.
                        while let Ok(n) = from_rmcp.read_until(b'\n', &mut line).await {
                            if n == 0 || output.write_all(&line).await.and(output.flush().await).is_err() {
                                return;
                            }
                            line.clear();
                        }
                        return;
                    }
                },
            }
        }
    });
    (rmcp_in, rmcp_out)
}

/// Parse errors and invalid requests are answered even without an id
/// (JSON-RPC says `id: null`); invalid params of a notification are not.
fn has_id_or_is_bad(r: &Refusal) -> bool {
    r.id.is_some() || r.code != INVALID_PARAMS
}

fn refuse(refusal: &Refusal, errors: &mpsc::UnboundedSender<Vec<u8>>, answer: bool) {
    eprintln!(
        "cgp mcp: refused a message ({}): {}",
        refusal.code, refusal.message
    );
    if answer {
        let mut bytes = refusal.response().to_string().into_bytes();
        bytes.push(b'\n');
        let _ = errors.send(bytes);
    }
}

enum Line {
    Complete(Vec<u8>),
    /// Over the cap: its first bytes (the rest was read and dropped).
    TooLong(Vec<u8>),
}

/// The next line, at most [`MAX_LINE_BYTES`] of it kept; `None` at the end.
async fn read_bounded_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(match (line.is_empty(), too_long) {
                (true, false) => None,
                (_, true) => Some(Line::TooLong(line)),
                (false, false) => Some(Line::Complete(line)),
            });
        }
        let (chunk, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                let keep = 4096usize.saturating_sub(line.len()).min(chunk.len());
                line.truncate(4096);
                line.extend_from_slice(&chunk[..keep]);
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(buf.len());
        input.consume(used);
        if done.is_some() {
            return Ok(Some(if too_long {
                Line::TooLong(line)
            } else {
                Line::Complete(line)
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_of_bad_line_gets_its_code_and_the_id_when_there_is_one() {
        let code = |l: &[u8]| check_line(l).unwrap_err();
        assert_eq!(code(b"\xff\xfe").code, PARSE_ERROR);
        assert_eq!(code(b"{not json").code, PARSE_ERROR);
        assert_eq!(code(b"[1,2]").code, INVALID_REQUEST);
        let r = code(br#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#);
        assert_eq!((r.code, r.id), (INVALID_REQUEST, Some(json!(3))));
        let r = code(br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":[1]}"#);
        assert_eq!((r.code, r.id), (INVALID_PARAMS, Some(json!("a"))));
        assert_eq!(check_line(b"   "), Ok(false));
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            Ok(true)
        );
        assert_eq!(
            id_from_prefix(br#"{"jsonrpc":"2.0","id": 42,"#),
            Some(json!(42))
        );
        assert_eq!(id_from_prefix(br#"{"id":"x1","#), Some(json!("x1")));
    }

    /// Residual of issue 26: a `tools/call` whose `arguments` is not an
    /// object, or whose `name` is missing or not a string, is -32602 with a
    /// sentence, never "method not found".
    #[test]
    fn a_tools_call_of_the_wrong_shape_is_invalid_params_with_a_sentence() {
        for (line, says) in [
            (&br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_context","arguments":[1]}}"#[..], "\"arguments\" must be an object"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_context","arguments":"goal"}}"#, "\"arguments\" must be an object"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#, "\"name\" is missing"),
            (br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":{}}}"#, "\"name\" must be a string"),
        ] {
            let r = check_line(line).unwrap_err();
            assert_eq!((r.code, r.id), (INVALID_PARAMS, Some(json!(1))));
            assert!(r.message.contains(says), "{}", r.message);
        }
        assert_eq!(
            check_line(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_context","arguments":{"goal":"x"}}}"#),
            Ok(true)
        );
    }
}
