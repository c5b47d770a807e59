//! Swift: classes, structs, enums, protocols and extensions hold their
//! members (an extension's are scoped by the type it extends, and it does
//! not define the type's name again); attributes and doc comments belong
//! to the definition below; `T(…)` calls `T`; `import` names a module.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/swift/Sources/Billing/Invoice.swift");
const TAX_TABLE: &str = include_str!("fixtures/swift/Sources/Billing/TaxTable.swift");

const PATH: &str = "Sources/Billing/Invoice.swift";

#[test]
fn swift_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    assert_symbol(&c, "InvoiceError", "InvoiceError", "enum", (3, 6));
    assert_symbol(&c, "Invoice", "Invoice", "class", (8, 38));
    assert_symbol(&c, "Invoice.init", "init", "initializer", (14, 17));
    // The doc comment and the `@discardableResult` attribute are its own.
    assert_symbol(&c, "Invoice.addItem", "addItem", "function", (19, 27));
    assert_symbol(&c, "Invoice.subtotal", "subtotal", "property", (29, 33));
    assert_symbol(&c, "LineItem", "LineItem", "struct", (40, 44));
    assert_symbol(&c, "InvoiceSink.send", "send", "function", (47, 47));
    let ext = assert_symbol(
        &c,
        "extension Invoice",
        "extension Invoice",
        "extension",
        (50, 60),
    );
    assert_eq!(ext.title, "extension Invoice");
    assert_symbol(&c, "Invoice.fromOrder", "fromOrder", "function", (53, 59));
}

#[test]
fn swift_definitions_and_calls_resolve() {
    let ix = Indexed::new(&[
        (PATH, INVOICE),
        ("Sources/Billing/TaxTable.swift", TAX_TABLE),
    ]);
    // The type, not its extension, defines `Invoice`.
    assert_eq!(
        ix.defined("Invoice"),
        ["Sources/Billing/Invoice.swift#Invoice"]
    );
    assert_eq!(
        ix.call(PATH, "Invoice.fromOrder", "Invoice").as_deref(),
        Some("Sources/Billing/Invoice.swift#Invoice")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.total", "taxOn").as_deref(),
        Some("Sources/Billing/TaxTable.swift#TaxTable.taxOn")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.fromOrder", "addItem").as_deref(),
        Some("Sources/Billing/Invoice.swift#Invoice.addItem")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.addItem", "LineItem").as_deref(),
        Some("Sources/Billing/Invoice.swift#LineItem")
    );
    // A module import: no file of the workspace.
    assert_eq!(ix.import(PATH, "Foundation"), None);
}

#[test]
fn a_call_on_the_right_of_an_operator_is_a_call() {
    // tree-sitter-swift parses `a + b.f(x)` as `(a + b.f)(x)`.
    let c = chunks(PATH, INVOICE);
    let total = assert_symbol(&c, "Invoice.total", "total", "function", (35, 37));
    assert_eq!(total.calls, ["taxOn"]);
}
