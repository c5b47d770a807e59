//! PHP: `namespace X;` (the usual, file-scoped form) qualifies the
//! definitions after it as a braced namespace does; methods belong to
//! their class; `use` imports resolve the PSR-4 way (grouped ones too);
//! method calls resolve to the class's file.

use super::{assert_symbol, chunks, symbol_ids, Indexed};

const INVOICE: &str = include_str!("fixtures/php/src/Billing/Invoice.php");
const TAX_TABLE: &str = include_str!("fixtures/php/src/Billing/Tax/TaxTable.php");

#[test]
fn php_symbols_are_qualified_by_their_files_namespace() {
    let c = chunks("src/Billing/Invoice.php", INVOICE);
    assert_symbol(&c, r"App\Billing::Invoice", "Invoice", "class", (11, 59));
    assert_symbol(
        &c,
        r"App\Billing::Invoice::addItem",
        "addItem",
        "method",
        (24, 34),
    );
    assert_symbol(
        &c,
        r"App\Billing::Invoice::fromOrder",
        "fromOrder",
        "method",
        (51, 58),
    );
    assert_symbol(
        &c,
        r"App\Billing::invoice_total",
        "invoice_total",
        "function",
        (61, 64),
    );
    // The same names under a braced namespace.
    let braced = INVOICE.replace(r"namespace App\Billing;", r"namespace App\Billing {") + "}\n";
    let b = chunks("src/Billing/Invoice.php", &braced);
    for id in [
        r"App\Billing::Invoice::addItem",
        r"App\Billing::invoice_total",
    ] {
        assert!(symbol_ids(&b).contains(&id), "{id}: {:?}", symbol_ids(&b));
    }
}

#[test]
fn a_later_namespace_statement_replaces_the_earlier_one() {
    let text = "<?php\nnamespace A;\nfunction first() {\n    return 1;\n}\nnamespace B;\nfunction second() {\n    return 2;\n}\n";
    let c = chunks("src/two.php", text);
    assert_eq!(symbol_ids(&c), ["A::first", "B::second"]);
}

#[test]
fn php_definitions_calls_and_uses_resolve() {
    let ix = Indexed::new(&[
        ("src/Billing/Invoice.php", INVOICE),
        ("src/Billing/Tax/TaxTable.php", TAX_TABLE),
    ]);
    assert_eq!(
        ix.defined("TaxTable"),
        [r"src/Billing/Tax/TaxTable.php#App\Billing\Tax::TaxTable"]
    );
    let from = "src/Billing/Invoice.php";
    assert_eq!(
        ix.call(from, r"App\Billing::Invoice::total", "taxOn")
            .as_deref(),
        Some(r"src/Billing/Tax/TaxTable.php#App\Billing\Tax::TaxTable::taxOn")
    );
    assert_eq!(
        ix.call(from, r"App\Billing::invoice_total", "total")
            .as_deref(),
        Some(r"src/Billing/Invoice.php#App\Billing::Invoice::total")
    );
    assert_eq!(
        ix.import(from, r"App\Billing\Tax\TaxTable").as_deref(),
        Some("src/Billing/Tax/TaxTable.php")
    );
    // A grouped `use` imports each name under its prefix.
    assert_eq!(ix.import(from, r"App\Support\Money"), None);
    assert_eq!(ix.import(from, r"App\Support\Clock"), None);
}
