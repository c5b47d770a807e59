//! Scala: traits, classes, companion objects and enums hold their
//! methods (abstract ones too), Scaladoc belongs to the definition below;
//! `new C(…)` calls `C`; imports resolve under the usual source roots.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/scala/src/main/scala/billing/Invoice.scala");
const TAX_TABLE: &str = include_str!("fixtures/scala/src/main/scala/billing/tax/TaxTable.scala");

const PATH: &str = "src/main/scala/billing/Invoice.scala";

#[test]
fn scala_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    assert_symbol(&c, "InvoiceSink", "InvoiceSink", "trait", (9, 15));
    assert_symbol(&c, "InvoiceSink.send", "send", "function", (11, 11));
    assert_symbol(&c, "InvoiceSink.sendAll", "sendAll", "function", (13, 14));
    assert_symbol(&c, "Invoice", "Invoice", "class", (17, 31));
    assert_symbol(&c, "Invoice.addItem", "addItem", "function", (21, 26));
    // The companion object is a second definition of the name.
    assert_symbol(&c, "Invoice~2", "Invoice", "object", (33, 45));
    assert_symbol(&c, "Invoice.fromOrder", "fromOrder", "function", (35, 42));
    assert_symbol(&c, "Currency", "Currency", "enum", (47, 49));
}

#[test]
fn scala_definitions_calls_and_imports_resolve() {
    let tax_path = "src/main/scala/billing/tax/TaxTable.scala";
    let ix = Indexed::new(&[(PATH, INVOICE), (tax_path, TAX_TABLE)]);
    assert_eq!(
        ix.defined("Invoice"),
        [
            "src/main/scala/billing/Invoice.scala#Invoice",
            "src/main/scala/billing/Invoice.scala#Invoice~2"
        ]
    );
    assert_eq!(
        ix.call(PATH, "Invoice.total", "taxOn").as_deref(),
        Some("src/main/scala/billing/tax/TaxTable.scala#TaxTable.taxOn")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.fromOrder", "addItem").as_deref(),
        Some("src/main/scala/billing/Invoice.scala#Invoice.addItem")
    );
    assert_eq!(
        ix.call(PATH, "Invoice.addItem", "LineItem").as_deref(),
        Some("src/main/scala/billing/Invoice.scala#LineItem")
    );
    assert_eq!(
        ix.import(PATH, "billing.tax.TaxTable").as_deref(),
        Some(tax_path)
    );
    assert_eq!(ix.import(PATH, "scala.collection.mutable.ListBuffer"), None);
}
