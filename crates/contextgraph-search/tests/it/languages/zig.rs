//! Zig: `const X = struct { … }` (and enums) hold their functions, `pub
//! fn` and `fn` alike, with the `///` doc comment above; a `test "…"`
//! block is named as written; field calls resolve; `@import` of a file
//! resolves beside the importer.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/zig/src/invoice.zig");
const TAX_TABLE: &str = include_str!("fixtures/zig/src/tax_table.zig");

const PATH: &str = "src/invoice.zig";

#[test]
fn zig_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    assert_symbol(&c, "LineItem", "LineItem", "struct", (6, 11));
    assert_symbol(&c, "Invoice", "Invoice", "struct", (13, 49));
    assert_symbol(&c, "Invoice.init", "init", "function", (19, 25));
    assert_symbol(&c, "Invoice.addItem", "addItem", "function", (31, 35));
    assert_symbol(&c, "Currency", "Currency", "enum", (51, 51));
    assert_symbol(&c, "roundCents", "roundCents", "function", (53, 55));
    let name = "\"an invoice totals its items with tax\"";
    assert_symbol(&c, name, name, "test", (57, 62));
}

#[test]
fn zig_definitions_calls_and_imports_resolve() {
    let ix = Indexed::new(&[(PATH, INVOICE), ("src/tax_table.zig", TAX_TABLE)]);
    assert_eq!(ix.defined("taxOn"), ["src/tax_table.zig#TaxTable.taxOn"]);
    assert_eq!(
        ix.call(PATH, "Invoice.total", "taxOn").as_deref(),
        Some("src/tax_table.zig#TaxTable.taxOn")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.total", "subtotal").as_deref(),
        Some("src/invoice.zig#Invoice.subtotal")
    );
    assert_eq!(
        ix.import(PATH, "tax_table.zig").as_deref(),
        Some("src/tax_table.zig")
    );
    // The standard library is a package, no file here.
    assert_eq!(ix.import(PATH, "std"), None);
}
