//! Validation of `get_context` arguments.
//!
//! Arguments come from a model, so they are checked member by member and
//! every problem is reported back in one sentence the model can act on (an
//! `isError` result, never a protocol error): a wrong type, an unknown kind,
//! a misspelt member name. Everything is bounded, so a hostile or confused
//! caller cannot make the server allocate without limit.

use contextgraph_types::FrameKind;
use serde_json::{Map, Value};

/// Longest accepted goal, in bytes.
pub const MAX_GOAL_BYTES: usize = 8 * 1024;
/// Most anchors accepted in one call.
pub const MAX_ANCHORS: usize = 64;
/// Longest accepted anchor, in bytes.
pub const MAX_ANCHOR_BYTES: usize = 4 * 1024;

/// The members `get_context` accepts.
pub const GET_CONTEXT_MEMBERS: [&str; 6] =
    ["goal", "budget", "kinds", "anchors", "session", "fresh"];

/// Longest `session` name accepted, in bytes.
pub const MAX_SESSION_NAME: usize = 64;

/// `get_context` arguments after validation, before the budget cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetContextArgs {
    /// The goal, trimmed.
    pub goal: String,
    /// The requested budget in model tokens, when given.
    pub budget: Option<u64>,
    /// Requested kinds, deduplicated, in the order given.
    pub kinds: Vec<FrameKind>,
    /// Anchors, in the order given.
    pub anchors: Vec<String>,
    /// A named session within the connection (`None`: the connection's own).
    pub session: Option<String>,
    /// Start the session over (send everything in full).
    pub fresh: bool,
}

/// Check `arguments` against the `get_context` input schema. The error is
/// one message listing every problem found.
pub fn parse_get_context(arguments: Option<&Map<String, Value>>) -> Result<GetContextArgs, String> {
    let empty = Map::new();
    let args = arguments.unwrap_or(&empty);
    let mut problems = Vec::new();

    for key in args.keys() {
        if !GET_CONTEXT_MEMBERS.contains(&key.as_str()) {
            problems.push(format!(
                "unknown argument {key:?} (accepted: {})",
                GET_CONTEXT_MEMBERS.join(", ")
            ));
        }
    }

    let goal = match args.get("goal") {
        None => {
            problems.push("`goal` is required: say in a sentence what you are trying to do".into());
            None
        }
        Some(Value::String(g)) if g.trim().is_empty() => {
            problems.push("`goal` is empty: say in a sentence what you are trying to do".into());
            None
        }
        Some(Value::String(g)) if g.len() > MAX_GOAL_BYTES => {
            problems.push(format!(
                "`goal` is {} bytes; keep it under {MAX_GOAL_BYTES} bytes (a sentence or two)",
                g.len()
            ));
            None
        }
        Some(Value::String(g)) => Some(g.trim().to_owned()),
        Some(other) => {
            problems.push(format!("`goal` must be a string, got {}", type_name(other)));
            None
        }
    };

    let budget = match args.get("budget") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) => match n.as_u64() {
            Some(0) => {
                problems.push("`budget` must be at least 1 model token".into());
                None
            }
            Some(b) => Some(b),
            None => {
                problems.push(format!(
                    "`budget` must be a positive whole number of model tokens, got {n}"
                ));
                None
            }
        },
        Some(other) => {
            problems.push(format!(
                "`budget` must be a positive whole number of model tokens, got {}",
                type_name(other)
            ));
            None
        }
    };

    let kinds = match args.get("kinds") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            let mut kinds: Vec<FrameKind> = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => match known_kind(s) {
                        Some(kind) if !kinds.contains(&kind) => kinds.push(kind),
                        Some(_) => {}
                        None => problems.push(format!(
                            "`kinds[{i}]` is {s:?}, not a frame kind (one of: {})",
                            known_kind_names().join(", ")
                        )),
                    },
                    other => problems.push(format!(
                        "`kinds[{i}]` must be a string, got {}",
                        type_name(other)
                    )),
                }
            }
            kinds
        }
        Some(other) => {
            problems.push(format!(
                "`kinds` must be an array of kind names, got {}",
                type_name(other)
            ));
            Vec::new()
        }
    };

    let anchors = match args.get("anchors") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) if items.len() > MAX_ANCHORS => {
            problems.push(format!(
                "`anchors` has {} entries; give at most {MAX_ANCHORS} (the files you are focused on)",
                items.len()
            ));
            Vec::new()
        }
        Some(Value::Array(items)) => {
            let mut anchors = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) if s.trim().is_empty() => {
                        problems.push(format!("`anchors[{i}]` is empty"));
                    }
                    Value::String(s) if s.len() > MAX_ANCHOR_BYTES => problems.push(format!(
                        "`anchors[{i}]` is {} bytes; an anchor is a path or URI under {MAX_ANCHOR_BYTES} bytes",
                        s.len()
                    )),
                    Value::String(s) => anchors.push(s.trim().to_owned()),
                    other => problems.push(format!(
                        "`anchors[{i}]` must be a string (a path or URI), got {}",
                        type_name(other)
                    )),
                }
            }
            anchors
        }
        Some(other) => {
            problems.push(format!(
                "`anchors` must be an array of paths or URIs, got {}",
                type_name(other)
            ));
            Vec::new()
        }
    };

    let session = match args.get("session") {
        None | Some(Value::Null) => None,
        Some(Value::String(name))
            if !name.is_empty()
                && name.len() <= MAX_SESSION_NAME
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) =>
        {
            Some(name.clone())
        }
        Some(_) => {
            problems.push(format!(
                "`session` must be a name of 1 to {MAX_SESSION_NAME} letters, digits, '-', '_' or '.'"
            ));
            None
        }
    };

    let fresh = match args.get("fresh") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            problems.push(format!(
                "`fresh` must be true or false, got {}",
                type_name(other)
            ));
            false
        }
    };

    match (goal, problems.is_empty()) {
        (Some(goal), true) => Ok(GetContextArgs {
            goal,
            budget,
            kinds,
            anchors,
            session,
            fresh,
        }),
        _ => Err(format!(
            "invalid get_context arguments: {}",
            problems.join("; ")
        )),
    }
}

/// `list_providers` takes no arguments; anything given is a mistake worth
/// reporting.
pub fn parse_list_providers(arguments: Option<&Map<String, Value>>) -> Result<(), String> {
    match arguments {
        Some(args) if !args.is_empty() => Err(format!(
            "invalid list_providers arguments: it takes none, got {}",
            args.keys()
                .map(|k| format!("{k:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
        _ => Ok(()),
    }
}

fn known_kind(name: &str) -> Option<FrameKind> {
    FrameKind::KNOWN
        .iter()
        .find(|k| k.as_str() == name)
        .cloned()
}

/// The wire names of the known frame kinds.
pub fn known_kind_names() -> Vec<&'static str> {
    [
        "snippet", "symbol", "fact", "doc", "memory", "episode", "graph",
    ]
    .to_vec()
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<GetContextArgs, String> {
        parse_get_context(v.as_object())
    }

    #[test]
    fn known_kind_names_match_the_types_crate() {
        let names: Vec<&str> = FrameKind::KNOWN.iter().map(FrameKind::as_str).collect();
        assert_eq!(names, known_kind_names());
    }

    #[test]
    fn a_full_valid_call_parses() {
        let a = parse(json!({"goal": " fix retry ", "budget": 4000, "kinds": ["doc", "snippet", "doc"], "anchors": ["src/a.rs"]})).unwrap();
        assert_eq!(a.goal, "fix retry");
        assert_eq!(a.budget, Some(4000));
        assert_eq!(a.kinds, vec![FrameKind::Doc, FrameKind::Snippet]);
        assert_eq!(a.anchors, vec!["src/a.rs".to_owned()]);
        assert!(!a.fresh);
        assert!(parse(json!({"goal": "g", "fresh": true})).unwrap().fresh);
        assert!(parse(json!({"goal": "g", "fresh": "yes"}))
            .unwrap_err()
            .contains("`fresh` must be true or false"));
    }

    #[test]
    fn missing_goal_is_named() {
        let e = parse(json!({})).unwrap_err();
        assert!(e.contains("`goal` is required"), "{e}");
        let e = parse_get_context(None).unwrap_err();
        assert!(e.contains("`goal` is required"), "{e}");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let e =
            parse(json!({"goal": 3, "budget": -5, "kinds": ["code"], "anchors": "x", "budjet": 1}))
                .unwrap_err();
        for needle in [
            "`goal` must be a string",
            "`budget` must be a positive",
            "\"code\", not a frame kind",
            "`anchors` must be an array",
            "unknown argument \"budjet\"",
        ] {
            assert!(e.contains(needle), "missing {needle:?} in {e}");
        }
    }

    #[test]
    fn zero_and_fractional_budgets_are_refused() {
        assert!(parse(json!({"goal": "g", "budget": 0}))
            .unwrap_err()
            .contains("at least 1"));
        assert!(parse(json!({"goal": "g", "budget": 10.5}))
            .unwrap_err()
            .contains("whole number"));
    }

    #[test]
    fn oversized_inputs_are_refused() {
        let long = "x".repeat(MAX_GOAL_BYTES + 1);
        assert!(parse(json!({"goal": long})).unwrap_err().contains("bytes"));
        let anchors: Vec<String> = (0..=MAX_ANCHORS).map(|i| format!("a{i}")).collect();
        assert!(parse(json!({"goal": "g", "anchors": anchors}))
            .unwrap_err()
            .contains("at most"));
    }

    #[test]
    fn list_providers_refuses_arguments() {
        assert!(parse_list_providers(None).is_ok());
        assert!(parse_list_providers(json!({}).as_object()).is_ok());
        assert!(parse_list_providers(json!({"x": 1}).as_object())
            .unwrap_err()
            .contains("\"x\""));
    }
}
