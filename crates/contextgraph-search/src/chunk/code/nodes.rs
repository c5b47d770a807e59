//! Small questions about syntax nodes: where they end, what wraps them.

use tree_sitter::Node;

use crate::lang::node_ext::NodeExt;
use crate::lang::spec::LangSpec;

pub(super) fn row_of_end(n: Node<'_>) -> u32 {
    let end = n.end_position();
    // A node ending at column 0 ends with the previous line's newline.
    let row = if end.column == 0 && end.row > n.start_position().row {
        end.row - 1
    } else {
        end.row
    };
    row as u32
}

/// The node whose extent a definition takes: its export/decorator/template wrapper.
pub(super) fn wrapper_of<'t>(spec: &LangSpec, n: Node<'t>) -> Node<'t> {
    if spec.wrappers.is_empty() {
        // `parent()` walks down from the root: not worth it for nothing.
        return n;
    }
    let mut cur = n;
    while let Some(p) = cur.parent() {
        if spec.wrappers.contains(&p.kind_name()) {
            cur = p;
        } else {
            break;
        }
    }
    cur
}
