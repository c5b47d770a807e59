use super::spec::LangSpec;
use super::*;

#[test]
fn detection_is_by_extension_case_insensitively() {
    assert_eq!(Language::detect("net.rs"), Language::Rust);
    assert_eq!(Language::detect("App.TSX"), Language::Tsx);
    assert_eq!(Language::detect("README"), Language::Text);
    assert_eq!(Language::detect("Makefile"), Language::Other);
    for l in Language::ALL {
        assert_eq!(Language::from_tag(l.tag()), Some(l));
    }
}

/// The persistent index stores a file's language as its position in
/// [`Language::ALL`]: a language added in the middle would make an old
/// index's files read as another language.
#[test]
fn the_index_tags_of_the_first_languages_never_change() {
    let first = [
        (Language::Rust, 0),
        (Language::Python, 1),
        (Language::JavaScript, 2),
        (Language::TypeScript, 3),
        (Language::Tsx, 4),
        (Language::Go, 5),
        (Language::Java, 6),
        (Language::C, 7),
        (Language::Cpp, 8),
        (Language::Markdown, 9),
        (Language::Text, 10),
        (Language::Other, 11),
    ];
    for (l, tag) in first {
        assert_eq!(l.tag(), tag, "{l:?}");
    }
}

#[test]
fn every_code_grammar_loads_with_a_compatible_abi() {
    for l in Language::ALL {
        if let Some(g) = l.grammar() {
            let mut p = tree_sitter::Parser::new();
            assert!(
                p.set_language(&g).is_ok(),
                "{} grammar ABI mismatch",
                l.name()
            );
        }
    }
}

#[test]
fn every_code_language_has_its_own_name_and_extensions() {
    let mut names = std::collections::HashSet::new();
    let mut extensions = std::collections::HashSet::new();
    for l in Language::ALL {
        let Some(s) = l.spec() else { continue };
        assert!(names.insert(s.name), "{} named twice", s.name);
        assert!(!s.extensions.is_empty(), "{}: no extensions", s.name);
        for e in s.extensions.iter().chain(s.file_names) {
            assert!(extensions.insert(*e), "{e} claimed twice");
            assert_eq!(*e, e.to_ascii_lowercase(), "{e}: lower case");
        }
        for e in s.extensions {
            assert_eq!(Language::detect(&format!("src/x.{e}")), l, "{e}");
        }
        for f in s.file_names {
            assert_eq!(Language::detect(&format!("a/{f}")), l, "{f}");
        }
    }
}

/// Every kind list of a spec, by role.
fn kind_lists(s: &LangSpec) -> [(&'static str, Vec<&'static str>); 10] {
    [
        (
            "definitions",
            s.definitions.iter().map(|d| d.kind).collect(),
        ),
        ("special", s.special.to_vec()),
        ("wrappers", s.wrappers.to_vec()),
        ("descend", s.descend.to_vec()),
        ("scope_statements", s.scope_statements.to_vec()),
        ("doc_kinds", s.doc_kinds.to_vec()),
        ("call_kinds", s.call_kinds.to_vec()),
        ("reference_kinds", s.reference_kinds.to_vec()),
        ("import_kinds", s.import_kinds.to_vec()),
        ("opaque_kinds", s.opaque_kinds.to_vec()),
    ]
}

/// A node kind or field name that no grammar has is a typo that finds
/// nothing, silently. Languages that share a table (JavaScript and
/// TypeScript, C and C++) may name kinds only some of them have: each name
/// must exist in the grammar of some language whose spec names it.
#[test]
fn every_kind_and_field_a_spec_names_exists_in_a_grammar_that_uses_it() {
    let specs: Vec<&LangSpec> = Language::ALL.iter().filter_map(|l| l.spec()).collect();
    let has_kind = |s: &LangSpec, k: &str| (s.grammar)().id_for_node_kind(k, true) != 0;
    let has_field = |s: &LangSpec, f: &str| (s.grammar)().field_id_for_name(f).is_some();
    for s in &specs {
        for (role, kinds) in kind_lists(s) {
            for k in kinds {
                assert!(
                    specs.iter().any(|t| {
                        kind_lists(t)
                            .iter()
                            .any(|(r, ks)| *r == role && ks.contains(&k))
                            && has_kind(t, k)
                    }),
                    "{}: {role} names `{k}`, a kind no grammar using it has",
                    s.name
                );
            }
        }
        // A scope statement's scope is its `name` field.
        for k in s.scope_statements {
            let g = (s.grammar)();
            assert!(
                has_kind(s, k) && g.field_id_for_name("name").is_some(),
                "{}: scope statement `{k}` or its `name` field is not in the grammar",
                s.name
            );
        }
        for d in s.definitions {
            for f in [d.name, d.body].into_iter().filter(|f| !f.is_empty()) {
                assert!(
                    specs.iter().any(|t| {
                        t.definitions.iter().any(|e| e.kind == d.kind)
                            && has_kind(t, d.kind)
                            && has_field(t, f)
                    }),
                    "{}: `{}` reads field `{f}`, which its grammars lack",
                    s.name,
                    d.kind
                );
            }
        }
    }
}

mod parse_masks {
    use super::*;
    use proptest::prelude::*;

    /// Text a hostile repository could hold, built from the pieces the
    /// masks look for (annotations, guards, directives, call signatures)
    /// and bytes that break naive scanners (multi-byte characters, lone
    /// quotes and brackets, `\r`, unterminated constructs).
    fn hostile() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            Just("class A<T>\n".to_owned()),
            Just("@Ann(x(\"é\")) internal constructor(".to_owned()),
            Just("  @OptIn(X::class)\n  get() = 1\n".to_owned()),
            Just("is T if (a ->".to_owned()),
            Just("in 1..2 if \"s\\".to_owned()),
            Just("#if A\n{\n#else\n{\n#endif\n".to_owned()),
            Just("#endif\n#elif\n".to_owned()),
            Just("  <T extends X>(a: T): T\n".to_owned()),
            Just("/* { \n".to_owned()),
            "[@#<>(){}\\[\\]\"'\\\\ \t\r\n;:=|&?,a-zé漢-]{0,12}",
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        /// Every language's mask, on any text: no panic, and the same
        /// length with the same line breaks, so positions stay the file's.
        #[test]
        fn a_mask_never_panics_and_keeps_every_position(text in hostile()) {
            for l in Language::ALL {
                let Some(spec) = l.spec() else { continue };
                if let Some(masked) = (spec.parse_mask)(&text) {
                    prop_assert_eq!(masked.len(), text.len(), "{}", spec.name);
                    let breaks = |s: &str| s.match_indices('\n').map(|m| m.0).collect::<Vec<_>>();
                    prop_assert_eq!(breaks(&masked), breaks(&text), "{}", spec.name);
                }
            }
        }
    }
}
