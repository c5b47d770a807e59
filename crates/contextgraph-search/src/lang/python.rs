//! Python: functions and classes (decorators included); `import` and
//! `from … import`; dotted module paths from the file's path.

use tree_sitter::Node;

use super::spec::{def, LangSpec, Source, BASE};
use super::syntax::join_rel;
use crate::lang::node_ext::NodeExt;

pub(crate) static PYTHON: LangSpec = LangSpec {
    name: "python",
    grammar: || tree_sitter_python::LANGUAGE.into(),
    extensions: &["py", "pyi"],
    definitions: &[
        def("function_definition", "function", "name", "body", false),
        def("class_definition", "class", "name", "body", true),
    ],
    wrappers: &["decorated_definition"],
    descend: &[
        "decorated_definition",
        "if_statement",
        "block",
        "try_statement",
        "else_clause",
        "elif_clause",
    ],
    call_kinds: &["call"],
    import_kinds: &["import_statement", "import_from_statement"],
    import_specs,
    module_prefix,
    import_candidates,
    ..BASE
};

fn import_specs<'t>(src: Source<'t>, n: Node<'t>) -> Vec<String> {
    match n.kind_name() {
        "import_statement" => {
            let mut c = n.walk();
            n.named_children(&mut c)
                .map(|x| {
                    let t = if x.kind_name() == "aliased_import" {
                        x.field("name").map_or("", |nm| src.text(nm))
                    } else {
                        src.text(x)
                    };
                    t.to_owned()
                })
                .filter(|s| !s.is_empty())
                .collect()
        }
        "import_from_statement" => src.field_text(n, "module_name").into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Dotted modules from the path (`pkg/mod.py` → `pkg.mod`), without a
/// leading `src/` and without `__init__`.
fn module_prefix(rel_path: &str) -> Vec<String> {
    let no_ext = rel_path.rsplit_once('.').map_or(rel_path, |(a, _)| a);
    let trimmed = no_ext.strip_prefix("src/").unwrap_or(no_ext);
    let mut segs: Vec<String> = trimmed.split('/').map(str::to_owned).collect();
    if segs.last().is_some_and(|s| s == "__init__") {
        segs.pop();
    }
    segs.retain(|s| !s.is_empty());
    segs
}

/// `a.b` names `a/b.py` or `a/b/__init__.py` (at the top or under `src/`);
/// leading dots climb from the importing file's package.
fn import_candidates(rel_path: &str, spec: &str) -> Vec<String> {
    let dir = super::syntax::dir_of(rel_path);
    let mut out = Vec::new();
    let dots = spec.bytes().take_while(|&b| b == b'.').count();
    let path = spec[dots..].replace('.', "/");
    let base = if dots > 0 {
        let mut d = dir.to_owned();
        for _ in 1..dots {
            d = d
                .rsplit_once('/')
                .map_or(String::new(), |(a, _)| a.to_owned());
        }
        d
    } else {
        String::new()
    };
    let stem = join_rel(&base, &path).unwrap_or_default();
    if !stem.is_empty() {
        for root in ["", "src/"] {
            out.push(format!("{root}{stem}.py"));
            out.push(format!("{root}{stem}/__init__.py"));
        }
    }
    out
}
