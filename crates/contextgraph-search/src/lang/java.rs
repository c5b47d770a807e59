//! Java: classes, records, interfaces, enums and their methods and
//! constructors; `import` declarations.

use tree_sitter::Node;

use super::spec::{def, LangSpec, Source, BASE};

pub(crate) static JAVA: LangSpec = LangSpec {
    name: "java",
    grammar: || tree_sitter_java::LANGUAGE.into(),
    extensions: &["java"],
    definitions: &[
        def("class_declaration", "class", "name", "body", true),
        def("record_declaration", "class", "name", "body", true),
        def("interface_declaration", "interface", "name", "body", true),
        def(
            "annotation_type_declaration",
            "interface",
            "name",
            "body",
            true,
        ),
        def("enum_declaration", "enum", "name", "body", true),
        def("method_declaration", "method", "name", "body", false),
        def(
            "constructor_declaration",
            "constructor",
            "name",
            "body",
            false,
        ),
    ],
    doc_kinds: &["line_comment", "block_comment"],
    call_kinds: &["method_invocation", "object_creation_expression"],
    reference_kinds: &["type_identifier"],
    import_kinds: &["import_declaration"],
    import_specs,
    import_candidates,
    ..BASE
};

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    let t = src.text(n);
    let t = t
        .trim_start_matches("import")
        .trim()
        .trim_start_matches("static")
        .trim();
    vec![t.trim_end_matches(';').trim().to_owned()]
}

/// `a.b.C` names `a/b/C.java` under the usual source roots.
fn import_candidates(_rel_path: &str, spec: &str) -> Vec<String> {
    let path = spec.trim_end_matches(".*").replace('.', "/");
    ["src/main/java/", "src/", ""]
        .iter()
        .map(|root| format!("{root}{path}.java"))
        .collect()
}
