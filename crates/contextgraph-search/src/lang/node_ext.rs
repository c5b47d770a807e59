//! A node's field child and kind name, read without the name scans the
//! tree-sitter calls make for them.
//!
//! `Node::child_by_field_name` first turns the name into the grammar's
//! field id by comparing it with each of the grammar's field names in turn
//! (~600 instructions for the Rust grammar), and `Node::kind` measures the
//! kind name's C string and checks it is UTF-8 (~200): the chunker asks
//! both for every definition, call and import of every file, 1.5% of its
//! work outside the parse. Here the field id is looked up once per grammar
//! and field name and the kind names are read from a table per grammar,
//! both giving what the tree-sitter calls give.

use std::cell::{Cell, RefCell};
use std::sync::{Mutex, OnceLock};

use tree_sitter::Node;

/// The grammar of `n`, as the address of its (static) language table.
fn grammar_of(n: Node<'_>) -> usize {
    // Copying a grammar that is not a WASM module returns the same
    // pointer and takes no reference; `into_raw` forgets the copy.
    n.language().clone().into_raw().addr()
}

/// One remembered field id: grammar, field name (address and length of
/// a `'static` string, whose content cannot change) and id (0: none).
#[derive(Clone, Copy)]
struct FieldSlot {
    grammar: usize,
    name: usize,
    len: usize,
    id: u16,
}

/// Slots of the field-id cache: more than the distinct field names the
/// chunker asks of one grammar.
const FIELD_SLOTS: usize = 128;

thread_local! {
    /// Field ids by grammar and name, direct-mapped: a slot holding
    /// another key is overwritten, and only costs a lookup again.
    static FIELD_IDS: RefCell<[FieldSlot; FIELD_SLOTS]> = const {
        RefCell::new([FieldSlot { grammar: 0, name: 0, len: 0, id: 0 }; FIELD_SLOTS])
    };
    /// The last grammar whose kind names were read, and its table.
    static LAST_KINDS: Cell<(usize, KindNames)> = const { Cell::new((0, &[])) };
}

/// A grammar's kind names by kind id.
type KindNames = &'static [&'static str];

/// Kind-name tables by grammar, one per grammar for the process: a few
/// hundred names each, for the twenty-odd grammars compiled in.
static KIND_NAMES: OnceLock<Mutex<Vec<(usize, KindNames)>>> = OnceLock::new();

/// What the chunker asks of a syntax node, answered as tree-sitter does.
pub(crate) trait NodeExt<'t> {
    /// The child in field `name`: `child_by_field_name(name)`.
    fn field(&self, name: &'static str) -> Option<Node<'t>>;
    /// The kind name: `kind()`.
    fn kind_name(&self) -> &'static str;
}

impl<'t> NodeExt<'t> for Node<'t> {
    fn field(&self, name: &'static str) -> Option<Node<'t>> {
        let grammar = grammar_of(*self);
        let key = name.as_ptr().addr();
        let slot = (key ^ grammar.rotate_left(29) ^ name.len()).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (usize::BITS - FIELD_SLOTS.trailing_zeros());
        let id = FIELD_IDS.with(|cell| {
            let mut slots = cell.borrow_mut();
            let s = &mut slots[slot];
            if s.grammar == grammar && s.name == key && s.len == name.len() {
                return s.id;
            }
            // The grammar's own lookup; an unknown name is id 0, which
            // tree-sitter answers with no child, as it does for the name.
            let id = self
                .language()
                .field_id_for_name(name)
                .map_or(0, std::num::NonZero::get);
            *s = FieldSlot {
                grammar,
                name: key,
                len: name.len(),
                id,
            };
            id
        });
        if id == 0 {
            return None;
        }
        self.child_by_field_id(id)
    }

    fn kind_name(&self) -> &'static str {
        let grammar = grammar_of(*self);
        let (last, names) = LAST_KINDS.get();
        let names = if last == grammar {
            names
        } else {
            let names = kind_names(*self, grammar);
            LAST_KINDS.set((grammar, names));
            names
        };
        // An ERROR node's id (65535) is beyond the table.
        names
            .get(usize::from(self.kind_id()))
            .copied()
            .unwrap_or_else(|| self.kind())
    }
}

/// The kind names of `n`'s grammar (`grammar`) by kind id. A node's kind
/// id is its grammar's public symbol, whose name is the name of the
/// symbol `kind()` reads (aliases included): tree-sitter maps a symbol to
/// the first one of the same name and namedness.
fn kind_names(n: Node<'_>, grammar: usize) -> KindNames {
    let tables = KIND_NAMES.get_or_init(|| Mutex::new(Vec::new()));
    // A panic elsewhere while the lock was held leaves complete entries.
    let mut tables = tables
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(&(_, names)) = tables.iter().find(|(g, _)| *g == grammar) {
        return names;
    }
    let language = n.language();
    let names: Vec<&'static str> = (0..language.node_kind_count())
        .map(|id| {
            u16::try_from(id)
                .ok()
                .and_then(|id| language.node_kind_for_id(id))
                .unwrap_or("")
        })
        .collect();
    let names: KindNames = Box::leak(names.into_boxed_slice());
    tables.push((grammar, names));
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lang::Language;

    /// Source in each code language, parse errors included, and every
    /// field name the grammar has: `field` and `kind_name` answer as the
    /// tree-sitter calls do at every node of it.
    #[test]
    fn fields_and_kind_names_are_tree_sitters() {
        let samples = [
            "fn a(b: C) -> D { e.f(g::h(1)); i!(j) }\nimpl<K> L for M<K> { fn n() {} }\n",
            "def a(b):\n    return c.d(e)\nclass F(G):\n    x = h[1]\n",
            "function a(b) { return c.d(new E(f)); }\nclass G extends H { m() {} }\n",
            "package a\nfunc (r *R) B(c C) D { return e.F(g) }\n",
            "#include <a.h>\nint b(struct c d) { return e(d.f); }\n",
            "}} fn ( { [ \"unterminated\n",
        ];
        for lang in Language::ALL.into_iter().filter(Language::is_code) {
            let grammar = lang.grammar().expect("a code language has a grammar");
            let mut parser = tree_sitter::Parser::new();
            parser.set_language(&grammar).expect("grammar loads");
            let names: Vec<&'static str> = (1..=grammar.field_count())
                .filter_map(|id| {
                    u16::try_from(id)
                        .ok()
                        .and_then(|id| grammar.field_name_for_id(id))
                })
                .chain(["no_such_field", "nam", "names"])
                .collect();
            for text in samples {
                let tree = parser.parse(text, None).expect("parses");
                let mut stack = vec![tree.root_node()];
                while let Some(n) = stack.pop() {
                    assert_eq!(n.kind_name(), n.kind(), "{lang:?}");
                    for &name in &names {
                        assert_eq!(
                            n.field(name),
                            n.child_by_field_name(name),
                            "{lang:?} {name}"
                        );
                        // Asked again: from the cache.
                        assert_eq!(
                            n.field(name),
                            n.child_by_field_name(name),
                            "{lang:?} {name}"
                        );
                    }
                    let mut c = n.walk();
                    stack.extend(n.children(&mut c));
                }
            }
        }
    }
}
