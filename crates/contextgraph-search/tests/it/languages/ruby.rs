//! Ruby: modules nest (`Billing::Invoice::add_item`), `class << self`
//! methods belong to their class, comments above a definition are its
//! own; `Class.new` calls the class, `require_relative` resolves beside
//! the requirer.

use super::{assert_symbol, chunks, Indexed};

const INVOICE: &str = include_str!("fixtures/ruby/lib/billing/invoice.rb");
const TAX_TABLE: &str = include_str!("fixtures/ruby/lib/billing/tax_table.rb");

#[test]
fn ruby_symbols_have_nested_names_and_their_lines() {
    let c = chunks("lib/billing/invoice.rb", INVOICE);
    assert_symbol(&c, "Billing", "Billing", "module", (6, 57));
    assert_symbol(&c, "Billing::Invoice", "Invoice", "class", (10, 48));
    assert_symbol(
        &c,
        "Billing::Invoice::add_item",
        "add_item",
        "method",
        (20, 26),
    );
    // Inside `class << self`: a method of the class itself.
    assert_symbol(
        &c,
        "Billing::Invoice::from_order",
        "from_order",
        "method",
        (41, 46),
    );
    assert_symbol(
        &c,
        "Billing::Formatting::money",
        "money",
        "method",
        (53, 55),
    );
}

#[test]
fn ruby_definitions_calls_and_requires_resolve() {
    let ix = Indexed::new(&[
        ("lib/billing/invoice.rb", INVOICE),
        ("lib/billing/tax_table.rb", TAX_TABLE),
    ]);
    assert_eq!(
        ix.defined("TaxTable"),
        ["lib/billing/tax_table.rb#Billing::TaxTable"]
    );
    assert_eq!(
        ix.defined("add_item"),
        ["lib/billing/invoice.rb#Billing::Invoice::add_item"]
    );
    let from = "lib/billing/invoice.rb";
    assert_eq!(
        ix.call(from, "Billing::Invoice::total", "tax_on")
            .as_deref(),
        Some("lib/billing/tax_table.rb#Billing::TaxTable::tax_on")
    );
    // `TaxTable.new(region)` calls the class it constructs.
    assert_eq!(
        ix.call(from, "Billing::Invoice::initialize", "TaxTable")
            .as_deref(),
        Some("lib/billing/tax_table.rb#Billing::TaxTable")
    );
    assert_eq!(
        ix.call(from, "Billing::Invoice::from_order", "add_item")
            .as_deref(),
        Some("lib/billing/invoice.rb#Billing::Invoice::add_item")
    );
    assert_eq!(
        ix.import(from, "./tax_table").as_deref(),
        Some("lib/billing/tax_table.rb")
    );
    // A gem is imported, and names no workspace file.
    assert_eq!(ix.import(from, "json"), None);
}
