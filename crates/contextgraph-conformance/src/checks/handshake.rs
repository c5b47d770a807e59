//! What the `handshake_ack` declares: H1–H3 identity and version, C5 scope
//! consistency, the resolve rule and P5. The ack is judged with the types
//! crate's `validate::handshake_ack`; each check keeps the anchors it owns.

use contextgraph_codec::Envelope;
use contextgraph_types::validate::{self, Anchor};
use contextgraph_types::{Representation, Violation, PROTOCOL_VERSION};

use super::{Ack, Evidence, Main, Outcome};
use crate::probe::describe_error;

fn ack_violations(ack: &Ack, keep: &[Anchor]) -> Vec<Violation> {
    validate::handshake_ack(
        &ack.protocol_version,
        &ack.provider,
        &ack.capabilities,
        PROTOCOL_VERSION,
    )
    .into_iter()
    .filter(|v| keep.contains(&v.anchor))
    .collect()
}

/// H1–H3: send `handshake`, expect a `handshake_ack` in our family with a
/// non-empty name and version. On success the ack is stored in `m` (and
/// correlation switched on when declared); on a family mismatch it is not,
/// since no host may send a query payload to such a provider.
pub(crate) fn handshake(m: &mut Main<'_>) -> Outcome {
    let Some(probe) = m.probe.as_mut() else {
        let reason = m.no_probe.clone().unwrap_or_default();
        m.no_ack = Some(reason.clone());
        return Outcome::fail(reason);
    };
    let reply = match probe.handshake(PROTOCOL_VERSION) {
        Ok(reply) => reply,
        Err(b) => {
            m.no_ack = Some(b.0.clone());
            return Outcome::fail(format!("H1: {b}"));
        }
    };
    let (protocol_version, provider, capabilities) = match reply {
        Envelope::HandshakeAck {
            protocol_version,
            provider,
            capabilities,
        } => (protocol_version, provider, capabilities),
        Envelope::Error { code, message, .. } => {
            let text = format!(
                "H1: the handshake in {PROTOCOL_VERSION} was answered with {}",
                describe_error(code.as_ref(), &message)
            );
            m.no_ack = Some(text.clone());
            return Outcome::fail(text);
        }
        other => {
            let text = format!(
                "H1: the handshake was answered with a {} envelope",
                other.type_name()
            );
            m.no_ack = Some(text.clone());
            return Outcome::fail(text);
        }
    };
    let ack = Ack {
        protocol_version,
        provider,
        capabilities,
    };
    let mut e = Evidence::default();
    let problems = ack_violations(&ack, &[Anchor::H1, Anchor::H2, Anchor::H3]);
    for v in &problems {
        e.fail(v.to_string());
    }
    let family_ok = !problems
        .iter()
        .any(|v| matches!(v.anchor, Anchor::H1 | Anchor::H3));
    e.note(format!(
        "provider {} {} acknowledged with {}",
        ack.provider.name, ack.provider.version, ack.protocol_version
    ));
    if family_ok {
        probe.set_correlation(ack.capabilities.correlation);
        m.ack = Some(ack);
    } else {
        m.no_ack = Some(format!(
            "the provider acknowledged with {}, outside this host's family; no query is sent to it",
            ack.protocol_version
        ));
    }
    e.finish()
}

/// C5: an off-machine scope next to `egress: false` is a contradiction.
pub(crate) fn consent_scope(m: &mut Main<'_>) -> Outcome {
    let ack = match m.ack() {
        Ok(a) => a,
        Err(o) => return o,
    };
    let mut e = Evidence::default();
    for v in ack_violations(ack, &[Anchor::C5]) {
        e.fail(v.to_string());
    }
    let flow = &ack.provider.data_flow;
    let scopes: Vec<&str> = flow.egress_scopes.iter().map(|s| s.as_str()).collect();
    e.note(format!(
        "data_flow: reads {}, writes {}, egress {}, egress_scopes [{}]",
        flow.reads,
        flow.writes,
        flow.egress,
        scopes.join(", ")
    ));
    e.finish()
}

/// The resolve rule (compact/reference need `resolve: true`) and P5 (every
/// frame served is in an advertised representation). A `reference` frame
/// over stdio/HTTP is noted: 1.0 has no resolve operation to rehydrate it.
pub(crate) fn representations(m: &mut Main<'_>) -> Outcome {
    let ack = match m.ack() {
        Ok(a) => a,
        Err(o) => return o,
    };
    let caps = &ack.capabilities;
    let mut e = Evidence::default();
    for v in ack_violations(ack, &[Anchor::Resolve]) {
        e.fail(v.to_string());
    }
    let offered: Vec<&str> = caps
        .offered_representations()
        .iter()
        .map(Representation::as_str)
        .collect();
    e.note(format!(
        "offers [{}], resolve {}",
        offered.join(", "),
        caps.resolve
    ));
    let mut references = 0;
    for frame in m.distinct_frames() {
        if !caps.offers_representation(frame.representation) {
            e.fail(format!(
                "P5: frame {:?} is {} but capabilities.representations offers only [{}]",
                frame.id,
                frame.representation,
                offered.join(", ")
            ));
        }
        if frame.representation == Representation::Reference {
            references += 1;
        }
    }
    if references > 0 {
        e.note(format!(
            "{references} reference frame(s) served; 1.0 has no resolve operation, so a host treats their contribution as empty"
        ));
    }
    e.finish()
}
