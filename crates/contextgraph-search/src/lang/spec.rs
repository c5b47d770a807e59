//! The shape of what the chunker knows of one language: a [`LangSpec`],
//! filled in by each language's file.
//!
//! Most of a language is data (node kinds by role), checked against the
//! grammar by a test: a kind or field name the grammar does not have is a
//! typo that would silently find nothing. What needs code (a definition
//! whose name is computed, an import's module string) is a function the
//! language's file provides, called only for the kinds it lists.

use crate::lang::node_ext::NodeExt;
use tree_sitter::Node;

/// The bytes of the file being chunked, for reading node text.
#[derive(Clone, Copy)]
pub(crate) struct Source<'s>(pub(crate) &'s [u8]);

impl<'s> Source<'s> {
    /// The text of `n` (empty when it is not UTF-8).
    pub(crate) fn text(self, n: Node<'_>) -> &'s str {
        n.utf8_text(self.0).unwrap_or("")
    }

    /// The text of `n`'s child in `field`, when it has one.
    pub(crate) fn field_text(self, n: Node<'_>, field: &'static str) -> Option<String> {
        n.field(field).map(|c| self.text(c).to_owned())
    }
}

/// A definition kind that needs no code: its name and body are fields.
pub(crate) struct DefKind {
    /// The node kind.
    pub(crate) kind: &'static str,
    /// What the definition is called in titles (`function`, `class`).
    pub(crate) label: &'static str,
    /// The field holding its name; a node without it is no definition.
    pub(crate) name: &'static str,
    /// The field holding its body (empty: none).
    pub(crate) body: &'static str,
    /// Whether its body's definitions are chunks of their own, scoped by it.
    pub(crate) container: bool,
}

/// Shorthand for a [`DefKind`] row.
pub(crate) const fn def(
    kind: &'static str,
    label: &'static str,
    name: &'static str,
    body: &'static str,
    container: bool,
) -> DefKind {
    DefKind {
        kind,
        label,
        name,
        body,
        container,
    }
}

/// What a language says about a definition node.
pub(crate) struct Class<'t> {
    /// The definition's name as its scope will print it.
    pub(crate) name: String,
    /// What it is (`function`, `class`, `impl` …).
    pub(crate) kind_label: &'static str,
    /// Members are chunked separately (impl, class, namespace…).
    pub(crate) container_body: Option<Node<'t>>,
    /// Where the body starts (for the outline's header).
    pub(crate) body: Option<Node<'t>>,
    /// Scope the members get instead of `name` (Rust `impl Trait for T` → `T`).
    pub(crate) member_scope: Option<String>,
    /// A title other than "`kind_label` `qualified`".
    pub(crate) title_override: Option<String>,
}

impl<'t> Class<'t> {
    /// A definition named `name` with `body`, not a container.
    pub(crate) fn plain(name: String, kind_label: &'static str, body: Option<Node<'t>>) -> Self {
        Class {
            name,
            kind_label,
            container_body: None,
            body,
            member_scope: None,
            title_override: None,
        }
    }

    /// A definition whose `body` holds member definitions.
    pub(crate) fn container(
        name: String,
        kind_label: &'static str,
        body: Option<Node<'t>>,
    ) -> Self {
        Class {
            container_body: body,
            ..Class::plain(name, kind_label, body)
        }
    }
}

/// Classifies a node of one of [`LangSpec::special`]'s kinds.
pub(crate) type ClassifyFn = for<'t> fn(Source<'t>, Node<'t>) -> Option<Class<'t>>;
/// The module strings an import node names.
pub(crate) type ImportSpecsFn = for<'t> fn(Source<'t>, Node<'t>) -> Vec<String>;
/// The module a call imports (`require('x')`), given the callee's name.
pub(crate) type CallImportFn = for<'t> fn(Source<'t>, &str, Node<'t>) -> Option<String>;
/// Whether a doc node belongs to the definition of a name.
pub(crate) type DocBelongsFn = for<'t> fn(Source<'t>, Node<'t>, &str) -> bool;
/// The node naming what a call calls, or what a reference refers to;
/// `None` when it names nothing worth an edge.
pub(crate) type NameFn = for<'t> fn(Source<'t>, Node<'t>) -> Option<Node<'t>>;

/// Everything the chunker knows of one code language.
pub(crate) struct LangSpec {
    /// Short stable name, used in URIs and reports.
    pub(crate) name: &'static str,
    /// The compiled-in grammar.
    pub(crate) grammar: fn() -> tree_sitter::Language,
    /// File extensions, lower case, without the dot.
    pub(crate) extensions: &'static [&'static str],
    /// Whole file names (lower case) of this language without an extension.
    pub(crate) file_names: &'static [&'static str],
    /// Between scope segments of a qualified name.
    pub(crate) scope_separator: &'static str,
    /// Definitions by table.
    pub(crate) definitions: &'static [DefKind],
    /// Definition kinds that [`special_class`](Self::special_class) decides.
    pub(crate) special: &'static [&'static str],
    /// Classifies a node of one of the [`special`](Self::special) kinds.
    pub(crate) special_class: ClassifyFn,
    /// Nodes whose extent a definition inside takes (export, decorator,
    /// template wrappers).
    pub(crate) wrappers: &'static [&'static str],
    /// Nodes that are not definitions but hold some (preprocessor blocks,
    /// statement bodies of top-level code).
    pub(crate) descend: &'static [&'static str],
    /// Statements that put the definitions after them, in the same body,
    /// in the scope their `name` field names (PHP's `namespace X;`, C#'s
    /// file-scoped `namespace X;`), as a braced namespace would. A later
    /// one replaces an earlier one; their own children are walked too.
    pub(crate) scope_statements: &'static [&'static str],
    /// Whether consecutive definitions of one name and kind at one level,
    /// with only comments and the like between them, are one definition:
    /// a Haskell function's equations, an Elixir function's clauses. As
    /// separate chunks each clause would be a definition of its own
    /// (`f`, `f~2`), none of them the whole function.
    pub(crate) merge_clauses: bool,
    /// Comments, attributes and decorators that belong to the definition
    /// they precede.
    pub(crate) doc_kinds: &'static [&'static str],
    /// Whether a node of one of [`doc_kinds`](Self::doc_kinds) belongs to
    /// the definition named `name` below it (a Haskell type signature
    /// belongs only to the function it names).
    pub(crate) doc_belongs: DocBelongsFn,
    /// Whether the comments above a body's first definition are children
    /// of the body's parent (Ruby's `class X` + comment + body): they are
    /// read there too.
    pub(crate) docs_before_body: bool,
    /// Call expressions: the code graph's call edges.
    pub(crate) call_kinds: &'static [&'static str],
    /// The node naming what a call calls.
    pub(crate) callee: NameFn,
    /// A call that imports, by the callee's name (`require`).
    pub(crate) call_import: CallImportFn,
    /// Callee names that are keywords of the language rather than calls
    /// (Elixir's `def`, a shell's `local`): never call edges.
    pub(crate) not_calls: &'static [&'static str],
    /// Type names: the code graph's reference edges.
    pub(crate) reference_kinds: &'static [&'static str],
    /// The bare name a reference node refers to (the node itself unless
    /// the language says otherwise).
    pub(crate) reference: NameFn,
    /// Imports, read by [`import_specs`](Self::import_specs).
    pub(crate) import_kinds: &'static [&'static str],
    /// The module strings an import node names.
    pub(crate) import_specs: ImportSpecsFn,
    /// Subtrees that hold no calls, references or imports (token trees).
    pub(crate) opaque_kinds: &'static [&'static str],
    /// The module path a file's definitions are qualified with.
    pub(crate) module_prefix: fn(&str) -> Vec<String>,
    /// Workspace files an import (`spec`, in the file at `rel_path`) may name.
    pub(crate) import_candidates: fn(rel_path: &str, spec: &str) -> Vec<String>,
    /// The text the grammar parses instead of the file's, where a known
    /// grammar gap would turn the rest of a file into one parse error:
    /// the same bytes with a construct blanked out or a word read as another
    /// of its length (`syntax::same_length_edits`: newlines kept), so every
    /// node's position is the file's and every chunk's text and name are
    /// read from the file itself. `None`: parse the file.
    pub(crate) parse_mask: fn(text: &str) -> Option<String>,
}

/// A [`LangSpec`] with no definitions, edges or module paths: each
/// language's file overrides what its grammar allows.
pub(crate) const BASE: LangSpec = LangSpec {
    name: "",
    grammar: no_grammar,
    extensions: &[],
    file_names: &[],
    scope_separator: ".",
    definitions: &[],
    special: &[],
    special_class: no_class,
    wrappers: &[],
    descend: &[],
    scope_statements: &[],
    merge_clauses: false,
    doc_kinds: &["comment"],
    doc_belongs: always,
    docs_before_body: false,
    call_kinds: &[],
    callee: super::syntax::callee,
    call_import: no_call_import,
    not_calls: &[],
    reference_kinds: &[],
    reference: itself,
    import_kinds: &[],
    import_specs: no_import_specs,
    opaque_kinds: &[],
    module_prefix: no_module_prefix,
    import_candidates: no_candidates,
    parse_mask: no_mask,
};

fn no_grammar() -> tree_sitter::Language {
    // Never called: every language's file sets its grammar, and a test
    // loads each one.
    tree_sitter_rust::LANGUAGE.into()
}

fn always<'t>(_: Source<'t>, _: Node<'t>, _: &str) -> bool {
    true
}

fn itself<'t>(_: Source<'t>, n: Node<'t>) -> Option<Node<'t>> {
    Some(n)
}

fn no_class<'t>(_: Source<'t>, _: Node<'t>) -> Option<Class<'t>> {
    None
}

fn no_call_import<'t>(_: Source<'t>, _: &str, _: Node<'t>) -> Option<String> {
    None
}

fn no_import_specs<'t>(_: Source<'t>, _: Node<'t>) -> Vec<String> {
    Vec::new()
}

fn no_module_prefix(_: &str) -> Vec<String> {
    Vec::new()
}

fn no_candidates(_: &str, _: &str) -> Vec<String> {
    Vec::new()
}

fn no_mask(_: &str) -> Option<String> {
    None
}

impl LangSpec {
    /// The files an import of `module` written in the file at `rel_path`
    /// may name ([`import_candidates`](Self::import_candidates), repeats
    /// next to each other dropped).
    pub(crate) fn resolve_import(&self, rel_path: &str, module: &str) -> Vec<String> {
        let mut candidates = (self.import_candidates)(rel_path, module);
        candidates.dedup();
        candidates
    }

    /// What the table and [`special_class`](Self::special_class) say about
    /// `n`, whose kind name the caller has read (`kind` is `n.kind_name()`):
    /// the chunker tests every child it walks against several kind lists
    /// with the one read.
    pub(crate) fn classify<'t>(
        &self,
        src: Source<'t>,
        n: Node<'t>,
        kind: &str,
    ) -> Option<Class<'t>> {
        if let Some(row) = self.definitions.iter().find(|d| d.kind == kind) {
            let name = src.field_text(n, row.name)?;
            let body = n.field(row.body);
            return Some(if row.container {
                Class::container(name, row.label, body)
            } else {
                Class::plain(name, row.label, body)
            });
        }
        if self.special.contains(&kind) {
            return (self.special_class)(src, n);
        }
        None
    }
}
