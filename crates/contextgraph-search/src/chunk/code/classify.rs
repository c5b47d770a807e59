//! The per-language table of definition node kinds: which syntax nodes
//! are definitions, what they are called and whether they contain others.

use tree_sitter::Node;

use super::nodes::{c_declarator_name, go_receiver_type};
use super::{Class, Cx};
use crate::lang::Language;

impl<'s> Cx<'s> {
    /// The per-language table of definition node kinds.
    pub(super) fn classify(&self, n: Node<'s>) -> Option<Class<'s>> {
        let kind = n.kind();
        let simple = |label: &'static str,
                      name_field: &str,
                      body_field: &str,
                      container: bool|
         -> Option<Class<'s>> {
            let name = self.field_text(n, name_field)?;
            let body = n.child_by_field_name(body_field);
            Some(Class {
                name,
                kind_label: label,
                container_body: if container { body } else { None },
                body,
                member_scope: None,
                title_override: None,
            })
        };
        match self.lang {
            Language::Rust => match kind {
                "function_item" => simple("function", "name", "body", false),
                "function_signature_item" => simple("function", "name", "body", false),
                "struct_item" => simple("struct", "name", "body", false),
                "enum_item" => simple("enum", "name", "body", false),
                "union_item" => simple("union", "name", "body", false),
                "type_item" => simple("type", "name", "type", false),
                "const_item" => simple("const", "name", "value", false),
                "static_item" => simple("static", "name", "value", false),
                "macro_definition" => simple("macro", "name", "", false),
                // An item-level `cfg_rt! { … }` block: its items sit in a token
                // tree the grammar does not parse, so the block is one definition
                // (cut at its inner items when it is too large to serve whole).
                "macro_invocation" => {
                    let path = self.field_text(n, "macro")?;
                    let name = format!("{}!", path.rsplit("::").next().unwrap_or(&path));
                    Some(Class {
                        name,
                        kind_label: "macro call",
                        container_body: None,
                        body: None,
                        member_scope: None,
                        title_override: None,
                    })
                }
                "trait_item" => simple("trait", "name", "body", true),
                "mod_item" => n
                    .child_by_field_name("body")
                    .and_then(|_| simple("module", "name", "body", true)),
                "impl_item" => {
                    let ty = self.field_text(n, "type")?;
                    let ty_base = ty.split('<').next().unwrap_or(&ty).trim().to_owned();
                    let (name, title) = match self.field_text(n, "trait") {
                        Some(t) => (
                            format!("impl {t} for {ty_base}"),
                            format!("impl {t} for {ty}"),
                        ),
                        None => (format!("impl {ty_base}"), format!("impl {ty}")),
                    };
                    let body = n.child_by_field_name("body");
                    Some(Class {
                        name,
                        kind_label: "impl",
                        container_body: body,
                        body,
                        member_scope: Some(ty_base),
                        title_override: Some(title),
                    })
                }
                _ => None,
            },
            Language::Python => match kind {
                "function_definition" => simple("function", "name", "body", false),
                "class_definition" => simple("class", "name", "body", true),
                _ => None,
            },
            Language::JavaScript | Language::TypeScript | Language::Tsx => match kind {
                "function_declaration"
                | "generator_function_declaration"
                | "function_signature" => simple("function", "name", "body", false),
                "class_declaration" | "abstract_class_declaration" | "class" => {
                    simple("class", "name", "body", true)
                }
                "method_definition" | "method_signature" | "abstract_method_signature" => {
                    simple("method", "name", "body", false)
                }
                "interface_declaration" => simple("interface", "name", "body", false),
                "type_alias_declaration" => simple("type", "name", "value", false),
                "enum_declaration" => simple("enum", "name", "body", false),
                "internal_module" | "module" => simple("namespace", "name", "body", true),
                "lexical_declaration" | "variable_declaration" => {
                    // `const retry = (…) => {…}`: a function bound to a name.
                    let mut c = n.walk();
                    let decl = n
                        .named_children(&mut c)
                        .find(|d| d.kind() == "variable_declarator")?;
                    let value = decl.child_by_field_name("value")?;
                    let label = match value.kind() {
                        "arrow_function"
                        | "function_expression"
                        | "function"
                        | "generator_function" => "function",
                        "class" => "class",
                        _ => return None,
                    };
                    Some(Class {
                        name: self.field_text(decl, "name")?,
                        kind_label: label,
                        container_body: None,
                        body: value.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                _ => None,
            },
            Language::Go => match kind {
                "function_declaration" => simple("function", "name", "body", false),
                "method_declaration" => {
                    let name = self.field_text(n, "name")?;
                    let receiver = n
                        .child_by_field_name("receiver")
                        .map(|r| go_receiver_type(self.text(r)))
                        .unwrap_or_default();
                    let qualified_name = if receiver.is_empty() {
                        name
                    } else {
                        format!("{receiver}.{name}")
                    };
                    Some(Class {
                        name: qualified_name,
                        kind_label: "method",
                        container_body: None,
                        body: n.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "type_declaration" => {
                    let mut c = n.walk();
                    let spec = n
                        .named_children(&mut c)
                        .find(|s| matches!(s.kind(), "type_spec" | "type_alias"))?;
                    let label = match spec.child_by_field_name("type").map(|t| t.kind()) {
                        Some("struct_type") => "struct",
                        Some("interface_type") => "interface",
                        _ => "type",
                    };
                    Some(Class {
                        name: self.field_text(spec, "name")?,
                        kind_label: label,
                        container_body: None,
                        body: spec.child_by_field_name("type"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                _ => None,
            },
            Language::Java => match kind {
                "class_declaration" | "record_declaration" => simple("class", "name", "body", true),
                "interface_declaration" | "annotation_type_declaration" => {
                    simple("interface", "name", "body", true)
                }
                "enum_declaration" => simple("enum", "name", "body", true),
                "method_declaration" => simple("method", "name", "body", false),
                "constructor_declaration" => simple("constructor", "name", "body", false),
                _ => None,
            },
            Language::C | Language::Cpp => match kind {
                "function_definition" => {
                    let decl = n.child_by_field_name("declarator")?;
                    let full = c_declarator_name(self, decl)?;
                    Some(Class {
                        name: full,
                        kind_label: "function",
                        container_body: None,
                        body: n.child_by_field_name("body"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
                    let body = n.child_by_field_name("body")?;
                    let label = match kind {
                        "struct_specifier" => "struct",
                        "union_specifier" => "union",
                        "enum_specifier" => "enum",
                        _ => "class",
                    };
                    Some(Class {
                        name: self.field_text(n, "name")?,
                        kind_label: label,
                        container_body: (self.lang == Language::Cpp && label != "enum")
                            .then_some(body),
                        body: Some(body),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "type_definition" => {
                    let decl = n.child_by_field_name("declarator")?;
                    if decl.kind() != "type_identifier" {
                        return None;
                    }
                    Some(Class {
                        name: self.text(decl).to_owned(),
                        kind_label: "typedef",
                        container_body: None,
                        body: n.child_by_field_name("type"),
                        member_scope: None,
                        title_override: None,
                    })
                }
                "namespace_definition" => simple("namespace", "name", "body", true),
                _ => None,
            },
            _ => None,
        }
    }
}
