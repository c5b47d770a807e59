//! Haskell: the equations of one function are one definition, with its
//! type signature and Haddock comment above (they were one chunk per
//! equation); data types, newtypes, classes and instances; applications
//! are calls; imports resolve the module-path way.

use super::{assert_symbol, chunks, symbol_ids, Indexed};

const INVOICE: &str = include_str!("fixtures/haskell/src/Billing/Invoice.hs");
const TAX_TABLE: &str = include_str!("fixtures/haskell/src/Billing/TaxTable.hs");

const PATH: &str = "src/Billing/Invoice.hs";

#[test]
fn haskell_symbols_have_their_names_and_lines() {
    let c = chunks(PATH, INVOICE);
    // Known gap: the Haddock comment above the first declaration after
    // the imports (line 15) is the grammar's last child of the imports,
    // not a sibling of the declaration, and is left out.
    assert_symbol(&c, "LineItem", "LineItem", "data", (16, 21));
    assert_symbol(&c, "Invoice", "Invoice", "data", (23, 28));
    assert_symbol(&c, "InvoiceId", "InvoiceId", "newtype", (30, 31));
    // Haddock comment, signature and the guarded equation.
    assert_symbol(&c, "addItem", "addItem", "function", (33, 37));
    // A point-free binding with its `where`.
    assert_symbol(&c, "subtotal", "subtotal", "function", (39, 42));
    assert_symbol(&c, "Priced", "Priced", "class", (59, 62));
    // Its own signature, not `price`'s on the line above it.
    assert_symbol(&c, "Priced.describe", "describe", "function", (61, 62));
    assert_symbol(
        &c,
        "Priced LineItem",
        "Priced LineItem",
        "instance",
        (64, 65),
    );
}

#[test]
fn the_equations_of_one_function_are_one_definition() {
    let c = chunks(PATH, INVOICE);
    // `countBySku [] = …` and `countBySku (i : rest) = …`, with the
    // comment and signature above the first.
    assert_symbol(&c, "countBySku", "countBySku", "function", (47, 51));
    assert!(
        !symbol_ids(&c).contains(&"countBySku~2"),
        "{:?}",
        symbol_ids(&c)
    );
    // Equations of different functions stay apart.
    let text = "f :: Int -> Int\nf 0 = 1\nf n = n\n\ng :: Int\ng = f 2\n";
    let two = chunks("src/Two.hs", text);
    assert_eq!(symbol_ids(&two), ["f", "g"]);
    assert_symbol(&two, "f", "f", "function", (1, 3));
    assert_symbol(&two, "g", "g", "function", (5, 6));
}

#[test]
fn haskell_definitions_calls_and_imports_resolve() {
    let ix = Indexed::new(&[(PATH, INVOICE), ("src/Billing/TaxTable.hs", TAX_TABLE)]);
    assert_eq!(
        ix.defined("countBySku"),
        ["src/Billing/Invoice.hs#countBySku"]
    );
    assert_eq!(
        ix.call(PATH, "total", "taxOn").as_deref(),
        Some("src/Billing/TaxTable.hs#taxOn")
    );
    assert_eq!(
        ix.call(PATH, "fromOrder", "foldr").as_deref(),
        None,
        "a Prelude function defines nothing here"
    );
    assert_eq!(
        ix.import(PATH, "Billing.TaxTable").as_deref(),
        Some("src/Billing/TaxTable.hs")
    );
    assert_eq!(ix.import(PATH, "Data.Map.Strict"), None);
}
