//! The eight CGP envelopes and their one-line JSON encoding.
//!
//! An envelope is a `type`-tagged JSON object (this is not JSON-RPC: no
//! `jsonrpc`, no `method`/`params`). Decoding is written by hand rather than
//! derived for two reasons:
//!
//! - **Forward compatibility.** An unknown `type` is not an error: it decodes
//!   to [`Envelope::Unknown`] carrying the type name and any `id`, so a
//!   receiver can answer `bad_request` to a request it cannot serve and
//!   ignore a notification (§1). Unknown members are ignored everywhere (U1).
//! - **Speed.** serde's derived internally-tagged enums buffer the whole
//!   object into an intermediate tree before choosing a variant; for a 4 MiB
//!   `frames` line that doubles the work. The visitor here deserializes each
//!   member straight into its typed slot in one pass, whatever the member
//!   order, and only falls back to a tree when the fast pass fails (to tell an
//!   unknown type or an irrelevant malformed member from a real error).

use std::fmt;

use contextgraph_types::{
    Capabilities, ContextQuery, ContextQueryResult, ErrorCode, ProviderInfo, VerifyRequest,
    VerifyResponse,
};
use serde::de::{self, IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One CGP message.
#[derive(Debug, Clone, PartialEq)]
pub enum Envelope {
    /// Host → provider: opens the exchange with the host's protocol version.
    Handshake {
        /// The version the host speaks.
        protocol_version: String,
    },
    /// Provider → host: version, identity and data flow, capabilities.
    HandshakeAck {
        /// The version the provider speaks (must share the host's family, H1).
        protocol_version: String,
        /// Identity and data flow.
        provider: ProviderInfo,
        /// What it can do.
        capabilities: Capabilities,
    },
    /// Host → provider: a retrieval request.
    Query {
        /// Correlation id; sent only to providers that declared correlation (H4).
        id: Option<String>,
        /// The request.
        query: ContextQuery,
    },
    /// Provider → host: the answer.
    Frames {
        /// The `id` of the query answered, echoed verbatim (H4).
        id: Option<String>,
        /// The answer.
        result: ContextQueryResult,
    },
    /// Host → provider: revalidate held frames (identities only, V1).
    Verify {
        /// The identities.
        request: VerifyRequest,
    },
    /// Provider → host: verdicts (they echo identities, so no `id`).
    Verified {
        /// The verdicts.
        response: VerifyResponse,
    },
    /// Host → provider: tear down (R2).
    Shutdown,
    /// Provider → host: a failure reported without dying (R1).
    Error {
        /// The `id` of the failed request, when attributable.
        id: Option<String>,
        /// Machine-readable code; absent is treated as `internal` (X2).
        code: Option<ErrorCode>,
        /// Human-readable detail; always present.
        message: String,
    },
    /// A message whose `type` this implementation does not know (§1). Kept
    /// distinguishable so the receiver can answer `bad_request` (when it
    /// carries an `id`, or is a request it cannot serve) or ignore it.
    Unknown {
        /// The `type` it carried.
        type_name: String,
        /// Its `id`, if it had a string one.
        id: Option<String>,
    },
}

/// The `type` tags of the eight protocol envelopes.
pub const ENVELOPE_TYPES: [&str; 8] = [
    "handshake",
    "handshake_ack",
    "query",
    "frames",
    "verify",
    "verified",
    "shutdown",
    "error",
];

impl Envelope {
    /// The wire `type` tag.
    pub fn type_name(&self) -> &str {
        match self {
            Envelope::Handshake { .. } => "handshake",
            Envelope::HandshakeAck { .. } => "handshake_ack",
            Envelope::Query { .. } => "query",
            Envelope::Frames { .. } => "frames",
            Envelope::Verify { .. } => "verify",
            Envelope::Verified { .. } => "verified",
            Envelope::Shutdown => "shutdown",
            Envelope::Error { .. } => "error",
            Envelope::Unknown { type_name, .. } => type_name,
        }
    }

    /// The correlation id carried, if any.
    pub fn correlation_id(&self) -> Option<&str> {
        match self {
            Envelope::Query { id, .. }
            | Envelope::Frames { id, .. }
            | Envelope::Error { id, .. }
            | Envelope::Unknown { id, .. } => id.as_deref(),
            _ => None,
        }
    }

    /// The code of an `error` envelope as a host must act on it: absent (X2)
    /// and unknown (X1) codes are `internal`. `None` for other envelopes.
    pub fn effective_error_code(&self) -> Option<ErrorCode> {
        match self {
            Envelope::Error { code, .. } => Some(ErrorCode::effective(code.as_ref())),
            _ => None,
        }
    }

    /// A `handshake` for this crate's protocol version.
    pub fn handshake() -> Self {
        Envelope::Handshake {
            protocol_version: contextgraph_types::PROTOCOL_VERSION.to_owned(),
        }
    }

    /// An `error` envelope.
    pub fn error(id: Option<String>, code: ErrorCode, message: impl Into<String>) -> Self {
        Envelope::Error {
            id,
            code: Some(code),
            message: message.into(),
        }
    }
}

/// The serialized shape: a derived internally-tagged enum over borrowed
/// fields, which serializes in one pass and omits absent ids.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireOut<'a> {
    Handshake {
        protocol_version: &'a str,
    },
    HandshakeAck {
        protocol_version: &'a str,
        provider: &'a ProviderInfo,
        capabilities: &'a Capabilities,
    },
    Query {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        query: &'a ContextQuery,
    },
    Frames {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        result: &'a ContextQueryResult,
    },
    Verify {
        request: &'a VerifyRequest,
    },
    Verified {
        response: &'a VerifyResponse,
    },
    Shutdown,
    Error {
        #[serde(skip_serializing_if = "Option::is_none")]
        id: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<&'a ErrorCode>,
        message: &'a str,
    },
}

#[derive(Serialize)]
struct UnknownOut<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a str>,
}

impl Serialize for Envelope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let out = match self {
            Envelope::Handshake { protocol_version } => WireOut::Handshake { protocol_version },
            Envelope::HandshakeAck {
                protocol_version,
                provider,
                capabilities,
            } => WireOut::HandshakeAck {
                protocol_version,
                provider,
                capabilities,
            },
            Envelope::Query { id, query } => WireOut::Query {
                id: id.as_deref(),
                query,
            },
            Envelope::Frames { id, result } => WireOut::Frames {
                id: id.as_deref(),
                result,
            },
            Envelope::Verify { request } => WireOut::Verify { request },
            Envelope::Verified { response } => WireOut::Verified { response },
            Envelope::Shutdown => WireOut::Shutdown,
            Envelope::Error { id, code, message } => WireOut::Error {
                id: id.as_deref(),
                code: code.as_ref(),
                message,
            },
            Envelope::Unknown { type_name, id } => {
                return UnknownOut {
                    type_name,
                    id: id.as_deref(),
                }
                .serialize(serializer)
            }
        };
        out.serialize(serializer)
    }
}

/// Which envelope a `type` tag names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tag {
    Handshake,
    HandshakeAck,
    Query,
    Frames,
    Verify,
    Verified,
    Shutdown,
    Error,
}

impl Tag {
    fn parse(text: &str) -> Option<Tag> {
        Some(match text {
            "handshake" => Tag::Handshake,
            "handshake_ack" => Tag::HandshakeAck,
            "query" => Tag::Query,
            "frames" => Tag::Frames,
            "verify" => Tag::Verify,
            "verified" => Tag::Verified,
            "shutdown" => Tag::Shutdown,
            "error" => Tag::Error,
            _ => return None,
        })
    }

    /// Whether member `key` belongs to this envelope (others are skipped unread).
    fn uses(self, key: Member) -> bool {
        use Member as M;
        match self {
            Tag::Handshake => key == M::ProtocolVersion,
            Tag::HandshakeAck => matches!(key, M::ProtocolVersion | M::Provider | M::Capabilities),
            Tag::Query => matches!(key, M::Id | M::Query),
            Tag::Frames => matches!(key, M::Id | M::Result),
            Tag::Verify => key == M::Request,
            Tag::Verified => key == M::Response,
            Tag::Shutdown => false,
            Tag::Error => matches!(key, M::Id | M::Code | M::Message),
        }
    }
}

/// The members any envelope may carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Type,
    ProtocolVersion,
    Provider,
    Capabilities,
    Id,
    Query,
    Result,
    Request,
    Response,
    Code,
    Message,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MemberVisitor;
        impl Visitor<'_> for MemberVisitor {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Member, E> {
                Ok(match v {
                    "type" => Member::Type,
                    "protocol_version" => Member::ProtocolVersion,
                    "provider" => Member::Provider,
                    "capabilities" => Member::Capabilities,
                    "id" => Member::Id,
                    "query" => Member::Query,
                    "result" => Member::Result,
                    "request" => Member::Request,
                    "response" => Member::Response,
                    "code" => Member::Code,
                    "message" => Member::Message,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_identifier(MemberVisitor)
    }
}

/// What a `type` member said.
enum TypeSeen {
    Known(Tag),
    Unknown(String),
}

/// Typed slots, filled in one pass.
#[derive(Default)]
struct Slots {
    protocol_version: Option<String>,
    provider: Option<ProviderInfo>,
    capabilities: Option<Capabilities>,
    id: Option<Option<String>>,
    query: Option<ContextQuery>,
    result: Option<ContextQueryResult>,
    request: Option<VerifyRequest>,
    response: Option<VerifyResponse>,
    code: Option<Option<ErrorCode>>,
    message: Option<String>,
}

fn fill<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
    slot: &mut Option<T>,
    map: &mut A,
    name: &'static str,
) -> Result<(), A::Error> {
    if slot.is_some() {
        return Err(de::Error::duplicate_field(name));
    }
    *slot = Some(map.next_value()?);
    Ok(())
}

/// The one-pass visitor. `hint` is the envelope type when the caller already
/// knows it (the fallback pass), so members irrelevant to it are skipped even
/// when they precede the `type` member.
pub(crate) struct EnvelopeVisitor {
    pub(crate) hint: Option<&'static str>,
}

impl<'de> de::DeserializeSeed<'de> for EnvelopeVisitor {
    type Value = Envelope;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Envelope, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a CGP envelope (a JSON object with a \"type\" member)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut seen: Option<TypeSeen> = None;
        let hint = self.hint.and_then(Tag::parse);
        let mut s = Slots::default();
        while let Some(key) = map.next_key::<Member>()? {
            if key == Member::Type {
                if seen.is_some() {
                    return Err(de::Error::duplicate_field("type"));
                }
                let name: std::borrow::Cow<'de, str> = map.next_value::<CowStr<'de>>()?.0;
                seen = Some(match Tag::parse(&name) {
                    Some(t) => TypeSeen::Known(t),
                    None => TypeSeen::Unknown(name.into_owned()),
                });
                continue;
            }
            // Once the type is known, members it does not use are skipped
            // unread (U1), so a stray malformed member cannot fail the message.
            let known = match &seen {
                Some(TypeSeen::Known(tag)) => Some(*tag),
                Some(TypeSeen::Unknown(_)) => None,
                None => hint,
            };
            let relevant = match (&seen, known) {
                (_, Some(tag)) => tag.uses(key),
                (Some(_), None) => key == Member::Id,
                (None, None) => key != Member::Other,
            };
            if !relevant {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            match key {
                Member::ProtocolVersion => {
                    fill(&mut s.protocol_version, &mut map, "protocol_version")?
                }
                Member::Provider => fill(&mut s.provider, &mut map, "provider")?,
                Member::Capabilities => fill(&mut s.capabilities, &mut map, "capabilities")?,
                Member::Id => fill(&mut s.id, &mut map, "id")?,
                Member::Query => fill(&mut s.query, &mut map, "query")?,
                Member::Result => fill(&mut s.result, &mut map, "result")?,
                Member::Request => fill(&mut s.request, &mut map, "request")?,
                Member::Response => fill(&mut s.response, &mut map, "response")?,
                Member::Code => fill(&mut s.code, &mut map, "code")?,
                Member::Message => fill(&mut s.message, &mut map, "message")?,
                Member::Type | Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        let tag = match seen {
            None => return Err(de::Error::missing_field("type")),
            Some(TypeSeen::Unknown(type_name)) => {
                return Ok(Envelope::Unknown {
                    type_name,
                    id: s.id.flatten(),
                })
            }
            Some(TypeSeen::Known(tag)) => tag,
        };
        assemble(tag, s)
    }
}

fn required<T, E: de::Error>(slot: Option<T>, name: &'static str) -> Result<T, E> {
    slot.ok_or_else(|| de::Error::missing_field(name))
}

fn assemble<E: de::Error>(tag: Tag, s: Slots) -> Result<Envelope, E> {
    Ok(match tag {
        Tag::Handshake => Envelope::Handshake {
            protocol_version: required(s.protocol_version, "protocol_version")?,
        },
        Tag::HandshakeAck => Envelope::HandshakeAck {
            protocol_version: required(s.protocol_version, "protocol_version")?,
            provider: required(s.provider, "provider")?,
            capabilities: required(s.capabilities, "capabilities")?,
        },
        Tag::Query => Envelope::Query {
            id: s.id.flatten(),
            query: required(s.query, "query")?,
        },
        Tag::Frames => Envelope::Frames {
            id: s.id.flatten(),
            result: required(s.result, "result")?,
        },
        Tag::Verify => Envelope::Verify {
            request: required(s.request, "request")?,
        },
        Tag::Verified => Envelope::Verified {
            response: required(s.response, "response")?,
        },
        Tag::Shutdown => Envelope::Shutdown,
        Tag::Error => Envelope::Error {
            id: s.id.flatten(),
            code: s.code.flatten(),
            message: required(s.message, "message")?,
        },
    })
}

/// A string that borrows from the input when it can.
struct CowStr<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for CowStr<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CowStr<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(CowStr(std::borrow::Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(CowStr(std::borrow::Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(V)
    }
}

impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor { hint: None })
    }
}
